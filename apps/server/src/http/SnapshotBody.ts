import { Stream } from "effect"
import { type Directory, type Listing, ListingJson, Time } from "@dropshelf/core"

/**
 * The bulk snapshot's body: NDJSON rendered into a few buffers of the snapshot's own, each
 * reused once the writer it feeds no longer holds its bytes.
 *
 * A fresh buffer a chunk would be garbage as soon as the socket took it, yet Node's long-lived
 * writable queues point at it while it waits, so it outlives young collections and only a full
 * one frees it. Between full collections tens of MB of such buffers gathered, and malloc kept the
 * high-water mark resident (docs/performance.md, The bulk snapshot).
 */

/** What the body's bytes are written into: a response, or the gzip stream in front of one. */
export interface Writer {
  /** Bytes written to it that it has not handed on yet (Node's `writableLength`). */
  readonly writableLength: number
}

/** Buffers a snapshot keeps, and the size each starts at: a chunk of 1 000 listings is ~700 KB. */
const KEPT_BUFFERS = 3
const INITIAL_BYTES = 1024 * 1024

/** Rows rendered into one string before it is copied into the buffer. */
const PIECE_ROWS = 100

/**
 * Buffers handed out one per pull of the body's stream. The writer is given everything a pull
 * returns before the next pull (the HTTP server and Node's stream adapters both write a pulled
 * array whole first), so at a pull every byte handed out earlier is either written on or still
 * counted in `writer().writableLength`. A buffer is reused only when every byte it held is past
 * that count; otherwise a fresh one is taken. With no writer known, every buffer is fresh.
 */
export class ReusedBuffers {
  /** Bytes handed out so far, and where in that count each kept buffer's last bytes end. */
  private handed = 0
  private readonly kept: Array<{ buffer: Buffer; end: number }> = []
  private readonly writer: () => Writer | undefined

  constructor(writer: () => Writer | undefined) {
    this.writer = writer
  }

  /** `texts` encoded as UTF-8, one after another, in a buffer whose earlier bytes are done with. */
  fill(texts: Iterable<string>): Uint8Array {
    const writer = this.writer()
    const slot = writer === undefined ? undefined : this.free(writer)
    let buffer = slot?.buffer ?? Buffer.allocUnsafeSlow(INITIAL_BYTES)
    let length = 0
    for (const text of texts) {
      // A UTF-16 unit is at most 3 UTF-8 bytes: measure only when that bound does not fit.
      if (length + text.length * 3 > buffer.length) {
        const needed = length + Buffer.byteLength(text)
        if (needed > buffer.length) {
          const larger = Buffer.allocUnsafeSlow(Math.max(needed, buffer.length * 2))
          buffer.copy(larger, 0, 0, length)
          buffer = larger
        }
      }
      length += buffer.write(text, length)
    }
    this.handed += length
    if (slot !== undefined) {
      slot.buffer = buffer
      slot.end = this.handed
    } else if (this.kept.length < KEPT_BUFFERS && writer !== undefined) {
      this.kept.push({ buffer, end: this.handed })
    }
    return buffer.subarray(0, length)
  }

  /** The kept buffer done with longest ago, if its bytes have all left `writer`. */
  private free(writer: Writer) {
    const settled = this.handed - writer.writableLength
    let oldest: { buffer: Buffer; end: number } | undefined
    for (const slot of this.kept) {
      if (slot.end <= settled && (oldest === undefined || slot.end < oldest.end)) oldest = slot
    }
    return oldest
  }
}

/** Each listing of a chunk as a page shows it, a line each, `PIECE_ROWS` to a string. */
function* linesOf(rows: ReadonlyArray<Listing.ReaderRow>): Generator<string> {
  for (let start = 0; start < rows.length; start += PIECE_ROWS) {
    let text = ""
    const end = Math.min(rows.length, start + PIECE_ROWS)
    for (let i = start; i < end; i++) text += `${ListingJson.rowJson(rows[i])}\n`
    yield text
  }
}

/**
 * A snapshot's items as NDJSON bytes, one buffer a pull: each listing as a page shows it, then
 * the closing line with the watermark and the count. `writer` is what the bytes are written into,
 * once it exists; without it no buffer is reused.
 */
export const snapshotBytes = (
  items: Stream.Stream<Directory.SnapshotItem>,
  writer: () => Writer | undefined
): Stream.Stream<Uint8Array> => {
  const buffers = new ReusedBuffers(writer)
  let listings = 0
  function* texts(pulled: ReadonlyArray<Directory.SnapshotItem>): Generator<string> {
    for (const item of pulled) {
      if (item._tag === "End") {
        yield `${JSON.stringify({ synced_at: Time.toIso(item.syncedAt), listings })}\n`
      } else {
        listings += item.rows.length
        yield* linesOf(item.rows)
      }
    }
  }
  return Stream.mapArray(items, (pulled) => [buffers.fill(texts(pulled))])
}
