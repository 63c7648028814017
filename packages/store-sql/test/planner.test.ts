import { ListingStore } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { StoreSql } from "../src/index.ts"
import { closePglite, describeOnServer, pgliteStores, serverStores } from "./support.ts"

/*
 * The planner's estimate of how many listings a `q` term matches decides how a page is read:
 * walking the index of its order (a common term fills a page after a few hundred rows) or
 * collecting every match through the trigram index and sorting them (right for a rare term). An
 * estimate a hundred times too low picks the second for a common term, and a page then reads
 * tens of thousands of rows: hundreds of milliseconds on a million listings. Each of these words
 * is in one listing of 40; every estimate must be within 4× of the truth.
 */

const WORDS = [
  "organic", "running", "cloud", "delivery", "games", "property", "style", "crypto", "courses", "startup",
  "video", "wellness", "jewelry", "esports", "booking", "recipes", "adventure", "tours", "fitness", "garden",
  "clinic", "school", "fintech", "mobile", "arcade", "furniture", "nutrition", "mortgage", "learning", "podcast",
  "coffee", "bakery", "studio", "rentals", "pets", "yoga", "hiking", "camera", "lawyer", "dental"
] as const
const ROWS = 6_000

/** Names whose masks, and so the search text's order, follow no pattern of the words. */
const letters = "abcdefghijklmnopqrstuvwxyz"
const nameOf = (n: number) => {
  let state = (n * 2_654_435_761) >>> 0
  let name = ""
  for (let i = 0; i < 6 + (n % 7); i++) {
    state = (state * 1_103_515_245 + 12_345) >>> 0
    name += letters[(state >>> 16) % letters.length]
  }
  return `${name}${n}.com`
}

const suite = (name: string, stores: Layer.Layer<StoreSql.Services>) =>
  describe(name, () => {
    it.effect(`every common search word's row estimate is within 4× of its count (${WORDS.length} words, ${ROWS} listings)`, () =>
      Effect.gen(function*() {
        const store = yield* ListingStore.ListingStore
        const sql = yield* SqlClient.SqlClient
        for (let from = 0; from < ROWS; from += 2000) {
          yield* store.upsert(Array.from({ length: 2000 }, (_, i) => {
            const n = from + i
            return Fixtures.listingInput(`P${String(n).padStart(7, "0")}`, { domain: nameOf(n), tags: [WORDS[n % WORDS.length]!] })
          }))
        }
        yield* sql`ANALYZE listings`
        const misjudged: Array<string> = []
        for (const word of WORDS) {
          const pattern = `%${word}%`
          const [plan] = yield* sql<{ "QUERY PLAN": unknown }>`EXPLAIN (FORMAT JSON) SELECT 1 FROM listings WHERE search_text LIKE ${pattern}`
          const document = plan!["QUERY PLAN"]
          const estimate = (typeof document === "string" ? JSON.parse(document) : document)[0].Plan["Plan Rows"] as number
          const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM listings WHERE search_text LIKE ${pattern}`
          if (estimate * 4 < n || estimate > n * 4) misjudged.push(`${word}: estimated ${estimate}, ${n} match`)
        }
        assert.deepStrictEqual(misjudged, [])
      }).pipe(Effect.provide(stores)), { timeout: 120_000 })
  })

suite("sql (pglite) planner estimates", pgliteStores)

afterAll(closePglite)

describeOnServer("sql (server) planner estimates", (databaseUrl) => {
  suite("sql (server) planner estimates", serverStores(databaseUrl))
})
