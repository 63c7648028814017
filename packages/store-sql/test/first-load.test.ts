import { Fixtures, StoreContract, WatchContract } from "@dropshelf/core/testing"
import { assert, it } from "@effect/vitest"
import { type Ids, ListingStore } from "@dropshelf/core"
import { Context, Effect, Exit, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CopyLoader } from "../src/index.ts"
import { describeOnServer, serverCopyStores } from "./support.ts"

/*
 * An import into an empty directory (FirstLoad.ts) on server PostgreSQL: the table it leaves is
 * the one the migrations make, rows and behaviour are the incremental path's, readers see no
 * listing or all of them, a failed load leaves the directory as it was, and a directory with
 * listings declines it.
 */

/** The stores with every upsert into an empty directory made a whole first load, as an import does it. */
const firstLoadStores = (databaseUrl: () => string) =>
  Layer.effectContext(Effect.gen(function*() {
    const store = yield* ListingStore.ListingStore
    const loader = yield* CopyLoader.CopyLoader
    const upsert = (batch: ReadonlyArray<ListingStore.ListingInput>) =>
      Effect.scoped(Effect.gen(function*() {
        const session = yield* loader.firstLoad
        if (session === undefined) return yield* store.upsert(batch)
        const result = yield* session.upsert(batch)
        yield* session.finish(() => {})
        return result
      }))
    return Context.make(ListingStore.ListingStore, ListingStore.ListingStore.of({ ...store, upsert }))
  })).pipe(Layer.provideMerge(serverCopyStores(databaseUrl)))

/** What the migrations define on listings: indexes, constraints, triggers, statistics targets. */
const listingsShape = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const indexes = yield* sql<{ name: string; definition: string }>`SELECT indexname AS name,
    regexp_replace(indexdef, ' ON \\S+ ', ' ON listings ') AS definition
    FROM pg_indexes WHERE tablename = 'listings' AND schemaname = current_schema() ORDER BY indexname`
  const constraints = yield* sql<{ name: string; definition: string }>`SELECT conname AS name, pg_get_constraintdef(oid) AS definition
    FROM pg_constraint WHERE conrelid = 'listings'::regclass ORDER BY conname`
  const triggers = yield* sql<{ definition: string }>`SELECT pg_get_triggerdef(oid) AS definition FROM pg_trigger
    WHERE tgrelid = 'listings'::regclass AND NOT tgisinternal ORDER BY tgname`
  const statistics = yield* sql<{ name: string; target: number }>`SELECT attname AS name, attstattarget AS target FROM pg_attribute
    WHERE attrelid = 'listings'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`
  const leftovers = yield* sql<{ name: string }>`SELECT relname AS name FROM pg_class
    WHERE relname LIKE 'dropshelf_first_load%' AND relnamespace = current_schema()::regnamespace`
  return { indexes, constraints, triggers, statistics, leftovers }
})

const rowCount = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM listings`
  return rows[0]!.count
})

const batches = (count: number, size: number, prefix: string) =>
  Array.from({ length: count }, (_, b) =>
    Array.from({ length: size }, (_, i) => Fixtures.listingInput(`${prefix}${String(b).padStart(2, "0")}${String(i).padStart(5, "0")}`)))

describeOnServer("sql (server, first load into an empty directory)", (databaseUrl) => {
  StoreContract.suite("sql (server, first load)", firstLoadStores(databaseUrl))
  WatchContract.suite("sql (server, first load)", firstLoadStores(databaseUrl), { propertyRuns: 5 })

  it.live("leaves listings as the migrations define it, with the rows the incremental path writes", () =>
    Effect.gen(function*() {
      const migrated = yield* listingsShape
      const loader = yield* CopyLoader.CopyLoader
      const store = yield* ListingStore.ListingStore
      const rows = [
        ...batches(2, 500, "F"),
        // A repeated id: the later line wins, as batch by batch.
        [Fixtures.listingInput("F0000000", { blurb: "second" }), Fixtures.listingInput("FLAST000")]
      ]
      const built: Array<string> = []
      const results = yield* Effect.scoped(Effect.gen(function*() {
        const session = (yield* loader.firstLoad)!
        assert.isDefined(session)
        const results = yield* Effect.forEach(rows, session.upsert)
        assert.strictEqual(yield* rowCount, 0)
        yield* session.finish((done, total) => built.push(`${done}/${total}`))
        return results
      }))
      assert.deepStrictEqual(results, [{ inserted: 500, updated: 0 }, { inserted: 500, updated: 0 }, { inserted: 1, updated: 1 }])
      const loaded = yield* listingsShape
      assert.deepStrictEqual(loaded, migrated)
      assert.strictEqual(built.at(-1), `${migrated.indexes.length - 1}/${migrated.indexes.length - 1}`)
      assert.strictEqual(yield* rowCount, 1001)
      assert.strictEqual((yield* store.find("F0000000" as Ids.ListingId))!.blurb, "second")

      // The same lines batch by batch into a fresh directory give the same rows.
      const incremental = yield* Effect.gen(function*() {
        const other = yield* ListingStore.ListingStore
        for (const batch of rows) yield* other.upsert(batch)
        return yield* Effect.forEach(rows.flat(), (input) => other.find(input.id as Ids.ListingId))
      }).pipe(Effect.provide(serverCopyStores(databaseUrl)))
      const first = yield* Effect.forEach(rows.flat(), (input) => store.find(input.id as Ids.ListingId))
      const withoutStamp = (records: ReadonlyArray<unknown>) => records.map((record) => ({ ...(record as object), updatedAt: 0 }))
      assert.deepStrictEqual(withoutStamp(first), withoutStamp(incremental))
    }).pipe(Effect.provide(serverCopyStores(databaseUrl))), 60_000)

  it.live("a batch that repeats ids of earlier ones updates those and inserts the rest, with their watch events", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const loader = yield* CopyLoader.CopyLoader
      const store = yield* ListingStore.ListingStore
      // Events are recorded only while a watch exists (migration 0006).
      yield* sql`INSERT INTO accounts (id, name, plan, created_at) VALUES ('acct-load', 'Load', 'pro', now())`
      yield* sql`INSERT INTO watches (id, account_id, name, query, created_at, updated_at)
        VALUES ('watch-load', 'acct-load', 'all', '{}'::jsonb, now(), now())`
      const results = yield* Effect.scoped(Effect.gen(function*() {
        const session = (yield* loader.firstLoad)!
        const results = [
          yield* session.upsert([Fixtures.listingInput("MIXA0000"), Fixtures.listingInput("MIXB0000"), Fixtures.listingInput("MIXC0000")]),
          yield* session.upsert([Fixtures.listingInput("MIXD0000"), Fixtures.listingInput("MIXB0000", { blurb: "again" })]),
          yield* session.upsert([Fixtures.listingInput("MIXE0000")])
        ]
        yield* session.finish(() => {})
        return results
      }))
      assert.deepStrictEqual(results, [{ inserted: 3, updated: 0 }, { inserted: 1, updated: 1 }, { inserted: 1, updated: 0 }])
      assert.strictEqual(yield* rowCount, 5)
      assert.strictEqual((yield* store.find("MIXB0000" as Ids.ListingId))!.blurb, "again")
      const events = yield* sql<{ listing_id: string; kind: string; previous_blurb: string | null }>`SELECT listing_id, kind,
        previous ->> 'blurb' AS previous_blurb FROM watch_events ORDER BY kind, listing_id`
      assert.deepStrictEqual(events.map((event) => `${event.kind} ${event.listing_id} ${event.previous_blurb}`), [
        "insert MIXA0000 null",
        "insert MIXB0000 null",
        "insert MIXC0000 null",
        "insert MIXD0000 null",
        "insert MIXE0000 null",
        `update MIXB0000 ${Fixtures.listingInput("MIXB0000").blurb}`
      ])
    }).pipe(Effect.provide(serverCopyStores(databaseUrl))), 60_000)

  it.live("readers go on reading while it loads, and see no listing until they see every one", () =>
    Effect.gen(function*() {
      const loader = yield* CopyLoader.CopyLoader
      const all = batches(10, 1_000, "R")
      let written = 0
      let finishing = false
      const loading = yield* Effect.forkChild(Effect.scoped(Effect.gen(function*() {
        const session = (yield* loader.firstLoad)!
        for (const batch of all) {
          yield* session.upsert(batch)
          written++
        }
        finishing = true
        yield* session.finish(() => {})
      })))
      const seen = new Set<number>()
      let readsWhileLoading = 0
      while (loading.pollUnsafe() === undefined) {
        seen.add(yield* rowCount)
        if (written > 0 && !finishing) readsWhileLoading++
        yield* Effect.sleep(10)
      }
      yield* Fiber.join(loading)
      seen.add(yield* rowCount)
      assert.isAtLeast(readsWhileLoading, 1)
      assert.deepStrictEqual([...seen].sort((a, b) => a - b), [0, 10_000])
    }).pipe(Effect.provide(serverCopyStores(databaseUrl))), 60_000)

  it.live("a load that fails midway leaves the directory empty and whole, and the next one loads", () =>
    Effect.gen(function*() {
      const migrated = yield* listingsShape
      const loader = yield* CopyLoader.CopyLoader
      const failed = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
        const session = (yield* loader.firstLoad)!
        yield* session.upsert(batches(1, 100, "X")[0]!)
        // No tier passes the table's CHECK but three: the batch fails on this row.
        yield* session.upsert([Fixtures.listingInput("XBAD0000", { tier: "bogus" as never })])
        yield* session.finish(() => {})
      })))
      assert.isTrue(Exit.isFailure(failed))
      assert.strictEqual(yield* rowCount, 0)
      assert.deepStrictEqual(yield* listingsShape, migrated)
      yield* Effect.scoped(Effect.gen(function*() {
        const session = (yield* loader.firstLoad)!
        yield* session.upsert(batches(1, 100, "X")[0]!)
        yield* session.finish(() => {})
      }))
      assert.strictEqual(yield* rowCount, 100)
    }).pipe(Effect.provide(serverCopyStores(databaseUrl))), 60_000)

  it.live("a directory with listings, tombstones included, declines it and upserts batch by batch", () =>
    Effect.gen(function*() {
      const loader = yield* CopyLoader.CopyLoader
      const store = yield* ListingStore.ListingStore
      yield* store.upsert([Fixtures.listingInput("TOMB0000")])
      yield* store.delist(["TOMB0000" as Ids.ListingId], "sold")
      const session = yield* Effect.scoped(loader.firstLoad)
      assert.isUndefined(session)
    }).pipe(Effect.provide(serverCopyStores(databaseUrl))))

  it.live("a second first load started meanwhile waits for the first, then declines", () =>
    Effect.gen(function*() {
      const loader = yield* CopyLoader.CopyLoader
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const session = (yield* loader.firstLoad)!
        yield* session.upsert(batches(1, 10, "C")[0]!)
        const second = yield* Effect.forkChild(Effect.scoped(Effect.map(loader.firstLoad, (other) => other === undefined)))
        yield* Effect.sleep(200)
        assert.isUndefined(second.pollUnsafe())
        yield* session.finish(() => {})
        return second
      }))
      assert.isTrue(yield* Fiber.join(first))
      assert.strictEqual(yield* rowCount, 10)
    }).pipe(Effect.provide(serverCopyStores(databaseUrl))))
})
