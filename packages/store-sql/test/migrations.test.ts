import { type Ids, ListingStore, Masking } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { migrate, migrations } from "../src/Migrations.ts"
import { StoreSql } from "../src/index.ts"
import { closePglite, describeOnServer, pgliteStores, serverClientIn, serverStores } from "./support.ts"

/*
 * Rows imported before invented labels became one word keep the mask and word count they were
 * given then; the migration rewrites them, and only them.
 */

const reshape = migrations["0003_reshape_invented_names"]!

const id = (value: string) => value as Ids.ListingId

const suite = (name: string, stores: Layer.Layer<StoreSql.Services>) =>
  describe(name, () => {
    it.effect("rewrites the mask, word count and search text of names imported with a fragment split", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore.ListingStore
        const sql = yield* SqlClient.SqlClient
        yield* store.upsert([
          // As an import computed them before: `qu|vex|o`, the mask keeping the `o`.
          Fixtures.listingInput("QUVEXO01", { domain: "quvexo.io", maskHint: "q****o.io", wordCount: 3 }),
          // Predates the mask backfill: the hint stays for it, the count is corrected.
          Fixtures.listingInput("TRELVIK1", { domain: "trelvik.com", maskHint: null, wordCount: 3 }),
          Fixtures.listingInput("COFFEE01", { domain: "bestcoffee.com" })
        ])
        const versions = () =>
          sql<{ id: string; updated_at: Date; search_text: string }>`SELECT id, updated_at, search_text
            FROM listings ORDER BY id`
        const before = yield* versions()

        yield* reshape

        const quvexo = (yield* store.find(id("QUVEXO01")))!
        assert.strictEqual(quvexo.maskHint, "q*****.io")
        assert.strictEqual(quvexo.wordCount, 1)
        const trelvik = (yield* store.find(id("TRELVIK1")))!
        assert.isNull(trelvik.maskHint)
        assert.strictEqual(trelvik.wordCount, 1)
        const coffee = (yield* store.find(id("COFFEE01")))!
        assert.strictEqual(coffee.maskHint, Masking.maskHint("bestcoffee.com"))
        assert.strictEqual(coffee.wordCount, 2)

        const after = yield* versions()
        const row = (rows: typeof before, key: string) => rows.find((r) => r.id === key)!
        assert.isTrue(row(after, "QUVEXO01").search_text.startsWith("q*****.io "), row(after, "QUVEXO01").search_text)
        assert.notInclude(row(after, "QUVEXO01").search_text, "o.io")
        // A row whose shape did not change is not rewritten, so the since feed does not carry it.
        assert.deepStrictEqual(row(after, "COFFEE01"), row(before, "COFFEE01"))
        assert.isAbove(row(after, "QUVEXO01").updated_at.getTime(), row(before, "QUVEXO01").updated_at.getTime())
      }).pipe(Effect.provide(stores)))
  })

suite("sql (pglite) migrations", pgliteStores)

afterAll(closePglite)

describeOnServer("sql (server) migrations", (databaseUrl) => {
  suite("sql (server) migrations", serverStores(databaseUrl))
})

/*
 * 0022 writes listings anew (a stored column). A table written anew has an empty visibility
 * map: until a vacuum, every index-only page read also fetches each row it tests from the
 * table. Migrating vacuums and analyses it.
 */
describeOnServer("sql (server) migration 0022", (databaseUrl) => {
  it.effect("stores whether each listing is linked, and leaves listings vacuumed and analysed", () =>
    Effect.gen(function*() {
      const sql = yield* serverClientIn(databaseUrl(), `m22_${Date.now()}`)
      const earlier = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0022"))
      yield* Migrator.make({})({ loader: Migrator.fromRecord(earlier) }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      yield* Effect.gen(function*() {
        const store = yield* ListingStore.ListingStore
        yield* store.upsert(Array.from({ length: 400 }, (_, n) =>
          Fixtures.listingInput(`L${String(n).padStart(7, "0")}`, { linkedBy: n % 2 === 0 ? [] : ["bbc.co.uk"] })))
      }).pipe(Effect.provide(StoreSql.layerStores), Effect.provideService(SqlClient.SqlClient, sql))

      const applied = yield* migrate.pipe(Effect.provideService(SqlClient.SqlClient, sql))

      assert.deepStrictEqual(applied, ["0022_linked_in_indexes"])
      const [linked] = yield* sql<{ yes: number; no: number }>`SELECT count(*) FILTER (WHERE linked)::int AS yes,
        count(*) FILTER (WHERE NOT linked)::int AS no FROM listings`
      assert.deepStrictEqual(linked, { yes: 200, no: 200 })
      // Counted, not read off the visibility map: a transaction older than the vacuum elsewhere
      // on the server (another test's) keeps it from marking the rewritten rows all-visible.
      const [table] = yield* sql<{ vacuums: number; analyses: number }>`SELECT vacuum_count::int AS vacuums,
        analyze_count::int AS analyses FROM pg_stat_user_tables WHERE relid = 'listings'::regclass`
      assert.isAtLeast(table!.vacuums, 1)
      assert.isAtLeast(table!.analyses, 1)
    }).pipe(Effect.scoped))
})
