/**
 * The embedded database's bulk snapshot, spooled (SpooledSnapshot.ts): PGlite has one
 * connection, and a snapshot whose reader has not taken its chunk yet must not keep every other
 * statement waiting. Read back from the file, the chunks are those the transaction read.
 */
import { Fixtures } from "@dropshelf/core/testing"
import { assert, it } from "@effect/vitest"
import { type Ids, ListingStore } from "@dropshelf/core"
import { Context, Effect, Fiber, Layer } from "effect"
import { StoreSql } from "@dropshelf/store-sql"
import { afterAll } from "vitest"
import { closePglite, pgliteClient } from "./support.ts"

afterAll(closePglite)

const T0 = Date.UTC(2026, 5, 1)
const request = { visibleBefore: T0, chunkSize: 5, reader: { at: T0, revealsOf: undefined } }

/** The snapshot's chunks; at the first, whether `find` answered within `waitMs` while the chunk was held. */
const snapshotWhileReading = (store: ListingStore.ListingStore["Service"], waitMs: number) =>
  Effect.gen(function*() {
    const outside = yield* Effect.context<never>()
    const chunks: Array<ListingStore.SnapshotChunk> = []
    let answeredMeanwhile: boolean | undefined
    yield* store.snapshot(request, (chunk) =>
      Effect.gen(function*() {
        if (answeredMeanwhile === undefined) {
          // From the context outside the snapshot: a forked fiber would inherit its transaction.
          const reader = Effect.runFork(Effect.provideContext(store.find("SPOOL001" as Ids.ListingId), outside))
          const answer = yield* Effect.timeoutOption(Fiber.await(reader), waitMs)
          answeredMeanwhile = answer._tag === "Some"
        }
        chunks.push(chunk)
      }))
    return { chunks, answeredMeanwhile: answeredMeanwhile! }
  })

it.live("while a spooled snapshot's reader holds a chunk, other statements run; the chunks are those read in the transaction", () =>
  Effect.gen(function*() {
    const context = yield* Layer.build(Layer.fresh(pgliteClient))
    const plain = yield* Effect.provideContext(Layer.build(StoreSql.layerStores), context)
    const embedded = yield* Effect.provideContext(Layer.build(StoreSql.layerStoresEmbedded), context)
    const store = Context.get(embedded, ListingStore.ListingStore)
    const unspooled = Context.get(plain, ListingStore.ListingStore)
    yield* store.upsert(Array.from({ length: 12 }, (_, i) => Fixtures.listingInput(`SPOOL${String(i + 1).padStart(3, "0")}`)))

    const spooled = yield* snapshotWhileReading(store, 10_000)
    assert.isTrue(spooled.answeredMeanwhile)
    // Without the spool, the one connection stays with the snapshot until its reader has taken every chunk.
    const held = yield* snapshotWhileReading(unspooled, 300)
    assert.isFalse(held.answeredMeanwhile)

    assert.deepStrictEqual(spooled.chunks.map((chunk) => chunk.rows.length), [5, 5, 2])
    assert.deepStrictEqual(spooled.chunks, held.chunks)
    for (const chunk of spooled.chunks) {
      assert.instanceOf(chunk.running, Map)
      assert.instanceOf(chunk.revealed, Set)
    }
  }).pipe(Effect.scoped), 60_000)
