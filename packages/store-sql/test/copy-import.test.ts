import { StoreContract, Fixtures } from "@dropshelf/core/testing"
import { assert, it } from "@effect/vitest"
import { type Ids, ListingStore } from "@dropshelf/core"
import { Effect, Exit, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { describeOnServer, serverCopyStores } from "./support.ts"

/*
 * The import's COPY path (CopyLoader) on server PostgreSQL: the whole store contract with every
 * upsert going through it, and what a batch does when one of its rows cannot be written.
 */
describeOnServer("sql (server, imports through COPY)", (databaseUrl) => {
  StoreContract.suite("sql (server, COPY)", serverCopyStores(databaseUrl))

  it.live("a batch with a row the table refuses writes none of its rows, and the next batch loads", () =>
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      const sql = yield* SqlClient.SqlClient
      yield* store.upsert([Fixtures.listingInput("COPYOK01")])
      const before = (yield* store.find("COPYOK01" as Ids.ListingId))!
      const refused = yield* Effect.exit(store.upsert([
        Fixtures.listingInput("COPYOK01", { blurb: "changed in a refused batch" }),
        Fixtures.listingInput("COPYNEW1"),
        // No tier passes the table's CHECK but these three: the merge fails on this row.
        Fixtures.listingInput("COPYBAD1", { tier: "bogus" as never })
      ]))
      assert.isTrue(Exit.isFailure(refused))
      assert.deepStrictEqual(yield* store.find("COPYOK01" as Ids.ListingId), before)
      assert.strictEqual(yield* store.find("COPYNEW1" as Ids.ListingId), undefined)
      assert.deepStrictEqual(yield* store.upsert([Fixtures.listingInput("COPYNEW1"), Fixtures.listingInput("COPYOK01", { blurb: "now" })]), { inserted: 1, updated: 1 })
      assert.strictEqual((yield* store.find("COPYOK01" as Ids.ListingId))!.blurb, "now")
      // Text that COPY's format escapes arrives as written.
      const awkward = "tab\there, new\nline, back\\slash, \\N, carriage\rreturn"
      yield* store.upsert([Fixtures.listingInput("COPYESC1", { blurb: awkward, tags: ["a\tb", "c\\d"] })])
      const stored = (yield* store.find("COPYESC1" as Ids.ListingId))!
      assert.strictEqual(stored.blurb, awkward)
      assert.deepStrictEqual(stored.tags, ["a\tb", "c\\d"])
      const [{ count }] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM listings`
      assert.strictEqual(count, 3)
    }).pipe(Effect.provide(serverCopyStores(databaseUrl))))

  // What a bulk mode holding the listings table for the whole load (drop the indexes, load,
  // build them) would break: reads wait for nothing, and each batch is readable once written.
  it.live("readers are served between the batches of an import, not after it", () =>
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      yield* store.upsert([Fixtures.listingInput("READ0000")])
      const batches = Array.from({ length: 12 }, (_, b) =>
        Array.from({ length: 1_000 }, (_, i) => Fixtures.listingInput(`L${String(b).padStart(2, "0")}${String(i).padStart(5, "0")}`)))
      let written = 0
      const importing = yield* Effect.forkChild(Effect.forEach(batches, (batch) =>
        Effect.map(store.upsert(batch), () => {
          written++
        }), { discard: true }))
      // Reads while the import runs: each answers with the import still under way.
      const seenWhileImporting: Array<number> = []
      while (written < batches.length && seenWhileImporting.length < 5) {
        const found = yield* store.find("READ0000" as Ids.ListingId)
        assert.isDefined(found)
        if (written > 0 && written < batches.length) {
          assert.isDefined(yield* store.find("L0000000" as Ids.ListingId))
          seenWhileImporting.push(written)
        }
        yield* Effect.sleep(20)
      }
      yield* Fiber.join(importing)
      assert.isAtLeast(seenWhileImporting.length, 1)
      assert.strictEqual((yield* store.page({
        order: "id", after: undefined, limit: 1, filters: {}, visibleBefore: Date.now() + 86_400_000, since: undefined, now: Date.now(),
        reader: { at: Date.now(), revealsOf: undefined }
      })).rows.length, 1)
    }).pipe(Effect.provide(serverCopyStores(databaseUrl))), 60_000)
})
