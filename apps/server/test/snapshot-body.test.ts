/**
 * The snapshot body's buffers (SnapshotBody.ts): a buffer is written again only once its writer
 * holds none of its bytes, so what reaches the client is exactly the NDJSON rendered, however
 * far behind the writer is; and with a writer that keeps up, a snapshot keeps reusing the same
 * few buffers rather than taking a new one a chunk.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ReusedBuffers } from "../src/http/SnapshotBody.ts"

/**
 * A writer as Node's are: it takes each buffer handed to it, keeps a reference until its bytes
 * are sent, and counts unsent bytes (plus `framing`, as a chunked response counts its chunk
 * headers) in `writableLength`. Each send checks the bytes against what they were when handed over.
 */
class ModelWriter {
  framing = 0
  private readonly queue: Array<{ view: Uint8Array; copy: Buffer; sent: number }> = []
  readonly delivered: Array<Buffer> = []

  get writableLength() {
    return this.framing + this.queue.reduce((sum, held) => sum + held.view.length - held.sent, 0)
  }

  write(view: Uint8Array) {
    this.queue.push({ view, copy: Buffer.from(view), sent: 0 })
  }

  /** Sends up to `bytes` from the front of what it holds. */
  send(bytes: number) {
    while (bytes > 0 && this.queue.length > 0) {
      const held = this.queue[0]
      const take = Math.min(bytes, held.view.length - held.sent)
      const now = Buffer.from(held.view.subarray(held.sent, held.sent + take))
      expect(now.equals(held.copy.subarray(held.sent, held.sent + take))).toBe(true)
      this.delivered.push(now)
      held.sent += take
      bytes -= take
      if (held.sent === held.view.length) this.queue.shift()
    }
  }

  sendAll() {
    this.send(Number.MAX_SAFE_INTEGER)
  }
}

const text = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: "grapheme", maxLength: 200 }),
  fc.constantFrom("", "\n", "é".repeat(40_000), "€".repeat(400_000), "x".repeat(700_000))
)

describe("the snapshot body's buffers", () => {
  it("never change bytes a writer still holds: the client gets exactly the lines rendered", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            texts: fc.array(text, { maxLength: 4 }),
            // Bytes the writer still holds after this pull: a handful, or up to several pulls' worth.
            unsent: fc.oneof(fc.nat({ max: 3 }), fc.nat({ max: 3_000_000 })),
            framing: fc.oneof(fc.constant(0), fc.nat({ max: 64 }))
          }),
          { maxLength: 30 }
        ),
        (pulls) => {
          const writer = new ModelWriter()
          const buffers = new ReusedBuffers(() => writer)
          const expected: Array<string> = []
          for (const pull of pulls) {
            writer.framing = pull.framing
            writer.write(buffers.fill(pull.texts))
            expected.push(...pull.texts)
            writer.send(writer.writableLength - pull.framing - pull.unsent)
          }
          writer.sendAll()
          expect(Buffer.concat(writer.delivered).toString("utf8")).toBe(expected.join(""))
        }
      ),
      { numRuns: 200 }
    )
  })

  it("reuses one buffer while the writer keeps up, two while it is one pull behind", () => {
    const line = `${"y".repeat(699)}\n`
    const chunk = Array.from({ length: 10 }, () => line.repeat(100))
    const buffersUsed = (behind: number) => {
      const writer = new ModelWriter()
      const buffers = new ReusedBuffers(() => writer)
      const backing = new Set<ArrayBufferLike>()
      for (let pull = 0; pull < 50; pull++) {
        const piece = buffers.fill(chunk)
        expect(piece.length).toBe(700_000)
        backing.add(piece.buffer)
        writer.write(piece)
        // Sends all but the last `behind` pulls' bytes.
        writer.send(writer.writableLength - behind * 700_000)
      }
      writer.sendAll()
      return backing.size
    }
    expect(buffersUsed(0)).toBe(1)
    expect(buffersUsed(1)).toBe(2)
    // Further behind, fresh buffers beyond the three kept, each dropped once sent.
    expect(buffersUsed(5)).toBeGreaterThan(3)
  })

  it("gives each pull a buffer of its own while the writer holds every earlier one", () => {
    const chunk = Array.from({ length: 10 }, () => `${"y".repeat(699)}\n`.repeat(100))
    const stuck = new ModelWriter()
    const unsent = new ReusedBuffers(() => stuck)
    const held = new Set<ArrayBufferLike>()
    for (let pull = 0; pull < 10; pull++) {
      const piece = unsent.fill(chunk)
      held.add(piece.buffer)
      stuck.write(piece)
    }
    expect(held.size).toBe(10)
    stuck.sendAll()
  })

  it("takes a fresh buffer every time when it does not know the writer", () => {
    const buffers = new ReusedBuffers(() => undefined)
    const seen = new Set<ArrayBufferLike>()
    for (let pull = 0; pull < 5; pull++) seen.add(buffers.fill(["a line\n"]).buffer)
    expect(seen.size).toBe(5)
  })
})
