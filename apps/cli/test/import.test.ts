import { type ListingStore, Operators } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Stream } from "effect"
import { BATCH_SIZE, MAX_BATCH_LENGTH, upsertLines, WRITERS } from "../src/Import.ts"

/*
 * The import writes WRITERS batches at once. Lines must still land as if written one by one:
 * a batch that repeats an id of a batch still being written waits for it.
 */

interface Write {
  readonly ids: ReadonlyArray<string>
  readonly started: number
  finished: number
}

/** Operators whose upsert takes a while and records when each batch ran. */
const recordingOperators = (writes: Array<Write>, clock: { now: number }, holdFirst: boolean) =>
  Operators.Operators.of({
    upsertListings: (batch: ReadonlyArray<ListingStore.ListingInput>) =>
      Effect.gen(function*() {
        const write: Write = { ids: batch.map((input) => input.id), started: clock.now++, finished: -1 }
        writes.push(write)
        // The first batch is still being written when the importer is free to start the next:
        // it waits for a second write (or, if none ever comes, 10 s), so whether they overlap
        // does not hang on how fast a loaded machine decodes the next batch.
        if (holdFirst && writes.length === 1) {
          const deadline = Date.now() + 10_000
          while (writes.length < 2 && Date.now() < deadline) yield* Effect.sleep("5 millis")
        }
        yield* Effect.sleep("30 millis")
        write.finished = clock.now++
        return { inserted: batch.length, updated: 0 }
      })
  } as unknown as Operators.Operators["Service"])

const run = (ids: ReadonlyArray<string>, holdFirst = false, lineLength?: number) =>
  Effect.gen(function*() {
    const writes: Array<Write> = []
    // Decoded beforehand, so that decoding a batch takes no time next to writing one.
    const inputs = ids.map((id) => Fixtures.listingInput(id))
    const report = yield* upsertLines(Stream.fromIterable(inputs), {
      decode: (input) => Result.succeed(input),
      ...(lineLength === undefined ? {} : { lengthOf: () => lineLength })
    }).pipe(Effect.provideService(Operators.Operators, recordingOperators(writes, { now: 0 }, holdFirst)))
    return { writes, report }
  })

const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(8 - prefix.length, "0")}`)

describe("import: batches in flight", () => {
  it.live("distinct ids: batches overlap, never more than WRITERS at once, every line written once", () =>
    Effect.gen(function*() {
      const { report, writes } = yield* run(ids("D", BATCH_SIZE * 4 + 10), true)
      assert.strictEqual(report.inserted, BATCH_SIZE * 4 + 10)
      assert.strictEqual(writes.length, 5)
      const overlaps = (a: Write, b: Write) => a.started < b.finished && b.started < a.finished
      assert.isTrue(overlaps(writes[0]!, writes[1]!), "the first two batches were written one after the other")
      // At the moment each batch starts, how many are being written, itself included.
      for (const write of writes) {
        const running = writes.filter((other) => other.started <= write.started && write.started < other.finished)
        assert.isAtMost(running.length, WRITERS)
      }
    }))

  it.live("a batch repeating an id of a batch in flight starts only after it is written", () =>
    Effect.gen(function*() {
      const first = ids("A", BATCH_SIZE)
      // The second batch ends with the first line's id again: the later line must win.
      const lines = [...first, ...ids("B", BATCH_SIZE - 1), first[0]!, ...ids("C", 10)]
      const { writes } = yield* run(lines)
      const repeating = writes.find((write) => write.ids.includes(first[0]!) && write !== writes[0])!
      assert.isAbove(repeating.started, writes[0]!.finished)
    }))

  it.live("large lines make smaller batches: a batch is written once its lines reach MAX_BATCH_LENGTH", () =>
    Effect.gen(function*() {
      const { report, writes } = yield* run(ids("L", 10), false, MAX_BATCH_LENGTH / 4)
      assert.strictEqual(report.inserted, 10)
      assert.deepStrictEqual(writes.map((write) => write.ids.length), [4, 4, 2])
    }))
})
