import { type Ids, ListingStore } from "@dropshelf/core"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { StoreSql } from "../src/index.ts"
import { DATABASE_URL, serverClient, serverDatabase } from "./support.ts"

/*
 * Scale: a million listings through batches, and keyset pages deep in the directory costing
 * what the first page costs. Slow, so it runs only when asked:
 *   DROPSHELF_SCALE_ROWS=1000000 DATABASE_URL=postgres://… npx vitest run packages/store-sql/test/scale.test.ts
 */

const ROWS = Number(process.env.DROPSHELF_SCALE_ROWS ?? 0)
const BATCH = 5000
const enabled = DATABASE_URL !== undefined && ROWS > 0
const skipReason = DATABASE_URL === undefined
  ? " (skipped: DATABASE_URL not set)"
  : ROWS > 0
  ? ""
  : " (skipped: DROPSHELF_SCALE_ROWS not set)"

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const idOf = (n: number) => {
  let id = ""
  let rest = n
  for (let i = 0; i < 8; i++) {
    id = alphabet[rest % alphabet.length] + id
    rest = Math.floor(rest / alphabet.length)
  }
  return id as Ids.ListingId
}

const input = (n: number): ListingStore.ListingInput => {
  const domain = `name${n}shop.com`
  return {
    id: idOf(n * 7919),
    domain,
    tier: (["featured", "regular", "open"] as const)[n % 3]!,
    status: "active",
    discoveredAt: Date.UTC(2025, 0, 1) + (n % 50_000) * 60_000,
    estimatedValueCents: n % 7 === 0 ? null : (n * 37) % 400_000,
    category: ["tech", "food", "travel", "health", null][n % 5]!,
    ageYears: n % 30,
    backlinks: (n * 13) % 100_000,
    referringDomains: (n * 7) % 2000,
    domainAuthority: n % 101,
    snapshots: n % 900,
    directoryScore: (n * 11) % 101,
    spam: n % 2 === 0 ? "low" : "moderate",
    linkedBy: n % 3 === 0 ? [] : ["bbc.co.uk"],
    tags: n % 2 === 0 ? ["coffee", "beans"] : ["hosting"],
    blurb: `Listing ${n}`,
    source: ["dropcatch", "auction"][n % 2]!,
    agentCitability: n % 4 === 0 ? null : { score: n % 50, sources: [] },
    featuredRank: n % 97 === 0 ? n : null,
    availabilityCheckedAt: Date.UTC(2026, 0, 1),
    maskHint: `n*****${n % 10}shop.com`,
    wordCount: 3
  }
}

describe.skipIf(!enabled)(`sql (server) scale${skipReason}`, () => {
  let database: Awaited<ReturnType<typeof serverDatabase>> | undefined
  beforeAll(async () => {
    database = await serverDatabase(DATABASE_URL!)
  })
  afterAll(async () => {
    await database?.drop()
  })

  it.live(`${ROWS} rows in batches of ${BATCH}, then page 10 000 costs what page 1 costs`, () =>
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      const started = Date.now()
      let inserted = 0
      for (let from = 0; from < ROWS; from += BATCH) {
        const batch = Array.from({ length: Math.min(BATCH, ROWS - from) }, (_, i) => input(from + i))
        inserted += (yield* store.upsert(batch)).inserted
      }
      const loadSeconds = (Date.now() - started) / 1000
      assert.strictEqual(inserted, ROWS)
      const again = yield* store.upsert(Array.from({ length: BATCH }, (_, i) => input(i)))
      assert.deepStrictEqual(again, { inserted: 0, updated: BATCH })
      const sql = yield* SqlClient.SqlClient
      yield* sql`ANALYZE listings`

      const request = (after: ListingStore.PageRequest["after"], order: "id" | "latest" = "id"): ListingStore.PageRequest => ({
        order,
        after,
        limit: 100,
        filters: {},
        visibleBefore: Date.now(),
        since: undefined,
        now: Date.now(),
        reader: { at: Date.now(), revealsOf: undefined }
      })
      const timed = <A>(effect: Effect.Effect<A>) =>
        Effect.gen(function*() {
          const t = performance.now()
          const result = yield* effect
          return [result, performance.now() - t] as const
        })
      // Walk to the deep position by keyset, then time page 1 against the deep page.
      const deepIndex = Math.min(10_000 * 100, ROWS - 200)
      const deep = (yield* sql<{ id: string; discovered_at: Date }>`SELECT id, discovered_at FROM listings
        ORDER BY id OFFSET ${deepIndex} LIMIT 1`)[0]!
      const deepLatest = (yield* sql<{ id: string; discovered_at: Date }>`SELECT id, discovered_at FROM listings
        ORDER BY discovered_at DESC, id ASC OFFSET ${deepIndex} LIMIT 1`)[0]!
      const positions = {
        id: { order: "id", id: deep.id as Ids.ListingId },
        latest: { order: "latest", discoveredAt: new Date(deepLatest.discovered_at).getTime(), id: deepLatest.id as Ids.ListingId }
      } as const
      for (const order of ["id", "latest"] as const) {
        const timings: Array<[number, number]> = []
        for (let round = 0; round < 5; round++) {
          const [, first] = yield* timed(store.page(request(undefined, order)))
          const [page, deepMs] = yield* timed(store.page(request(positions[order], order)))
          assert.strictEqual(page.rows.length, 100)
          timings.push([first, deepMs])
        }
        const best = (i: 0 | 1) => Math.min(...timings.map((t) => t[i]))
        console.log(
          `${order} order: loaded ${ROWS} rows in ${loadSeconds.toFixed(1)} s (${Math.round(ROWS / loadSeconds)} rows/s); ` +
            `page 1: ${best(0).toFixed(1)} ms, page at row ${deepIndex}: ${best(1).toFixed(1)} ms`
        )
        assert.isBelow(best(1), Math.max(20, best(0) * 5))
      }
    }).pipe(Effect.provide(StoreSql.layerStores.pipe(Layer.provideMerge(serverClient(() => database!.url, 4))))), { timeout: 900_000 })
})
