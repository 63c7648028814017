import { type Ids, ListingStore, type ListQuery } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { StoreSql as Stores } from "../src/index.ts"
import { closePglite, describeOnServer, pgliteStores, serverClient, serverStores } from "./support.ts"

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

const suite = (name: string, stores: Layer.Layer<Stores.Services>) =>
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

/** The first page in id order at the clock's present, as a caller with no access delay reads it. */
const firstPageNow = (limit: number, filters: ListQuery.ListFilters): ListingStore.PageRequest => {
  const now = Date.now()
  return { order: "id", after: undefined, limit, filters, visibleBefore: now, since: undefined, now, reader: { at: now, revealsOf: undefined } }
}

/** Listing ids `<prefix>0000000`, `<prefix>0000001`, …: each test's own. */
const listingId = (prefix: string) => (n: number) => `${prefix}${String(n).padStart(7, "0")}` as Ids.ListingId

/** A node of `EXPLAIN (FORMAT JSON)`'s plan, with the fields the checks here read. */
type PlanNode = {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly "Actual Loops": number
  readonly Plans?: ReadonlyArray<PlanNode>
}

/**
 * The plan of the page statement the store prepared on this connection (its text `LIKE`
 * `pattern`), run again as prepared with the clock's present for its two clock bounds:
 * `EXPLAIN ANALYZE` of what the server runs, not of a statement written again by hand.
 */
const explainPrepared = (pattern: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [prepared] = yield* sql<{ statement: string; parameter_types: string }>`SELECT statement, parameter_types::text
      FROM pg_prepared_statements WHERE statement LIKE '%FROM holds%' AND statement LIKE ${pattern}
        AND statement NOT LIKE '%pg_prepared_statements%'`
    assert.strictEqual(prepared?.parameter_types, "{\"timestamp with time zone\",\"timestamp with time zone\"}")
    const name = `page_again_${Math.random().toString(36).slice(2)}`
    yield* sql.unsafe(`PREPARE ${name} (timestamptz, timestamptz) AS ${prepared!.statement}`)
    const [explained] = yield* sql.unsafe<{ "QUERY PLAN": unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE ${name} (now(), now())`)
    const document = explained!["QUERY PLAN"]
    return (typeof document === "string" ? JSON.parse(document) : document)[0].Plan as PlanNode
  })

describeOnServer("sql (server) planner estimates", (databaseUrl) => {
  suite("sql (server) planner estimates", serverStores(databaseUrl))

  /** The stores on one connection: the prepared statements and statistics a check reads are its own. */
  const onOneConnection = Effect.provide(Stores.layerStores.pipe(Layer.provideMerge(serverClient(databaseUrl, 1))))

  /**
   * `effect`'s result, and a statistic of this connection's work read before and after it,
   * each time once the connection has flushed its statistics.
   */
  const measured = <C, E1, A, E2, R>(statistic: Effect.Effect<C, E1>, effect: Effect.Effect<A, E2, R>) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`SELECT pg_stat_force_next_flush()`
      const before = yield* statistic
      const result = yield* effect
      yield* sql`SELECT pg_stat_force_next_flush()`
      return { result, before, after: yield* statistic }
    })

  /*
   * A single read's plan never depends on which listings it reads, so planning it afresh at
   * every execution (~0.4 ms, more than running it) is waste: after its first runs on a
   * connection Postgres keeps one generic plan for it. One connection, so that the statement's
   * runs all land in the session the check then reads.
   */
  it.effect("a single read's statement is planned once per connection, not at every read", () =>
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      const sql = yield* SqlClient.SqlClient
      const id = listingId("G")
      yield* store.upsert(Array.from({ length: 20 }, (_, n) => Fixtures.listingInput(id(n))))
      for (let n = 0; n < 12; n++) {
        const found = yield* store.findForReader(id(n), { at: Date.now(), revealsOf: undefined })
        assert.isDefined(found)
      }
      const plans = yield* sql<{ generic_plans: number; custom_plans: number }>`SELECT left(statement, 300) AS statement, generic_plans::int, custom_plans::int
        FROM pg_prepared_statements WHERE statement LIKE '%FROM holds%' AND statement LIKE '%FROM listings WHERE id = ANY%'
          AND statement NOT LIKE '%pg_prepared_statements%'`
      assert.strictEqual(plans.length, 1, JSON.stringify(plans))
      assert.isAtLeast(plans[0]!.generic_plans, 6, JSON.stringify(plans))
    }).pipe(onOneConnection))

  /*
   * A filtered page's statement carries its filter values in its text (the search term aside),
   * so its only parameters are clock bounds, and after its first runs on a connection Postgres keeps
   * one plan for that filter set instead of planning at every page.
   */
  it.effect("a filtered page's statement holds its filter values and is planned once per connection", () =>
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      const sql = yield* SqlClient.SqlClient
      yield* store.upsert(Array.from({ length: 20 }, (_, n) => Fixtures.listingInput(listingId("F")(n))))
      for (let n = 0; n < 12; n++) {
        yield* store.page(firstPageNow(7, { tld: "com", spam: "low", priceRange: "250-999", categories: ["tech", "food"], referringDomainBands: ["5-9", "1000+"], rsMin: 20 }))
      }
      const plans = yield* sql<{ parameter_types: string; generic_plans: number }>`SELECT parameter_types::text, generic_plans::int
        FROM pg_prepared_statements WHERE statement LIKE '%tld = ''com''%' AND statement NOT LIKE '%pg_prepared_statements%'`
      assert.strictEqual(plans.length, 1, JSON.stringify(plans))
      assert.deepStrictEqual(plans[0]!.parameter_types, "{\"timestamp with time zone\",\"timestamp with time zone\"}")
      assert.isAtLeast(plans[0]!.generic_plans, 6, JSON.stringify(plans))
    }).pipe(onOneConnection))

  /*
   * Concurrent single reads of different listings share statements, one batch at a time: a
   * statement's round trip costs the server and Postgres more than another id in it. One
   * connection, whose prepared statement counts its own runs.
   */
  it.effect("concurrent single reads of different listings share statements, one batch at a time", () =>
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      const sql = yield* SqlClient.SqlClient
      const id = listingId("B")
      yield* store.upsert(Array.from({ length: 40 }, (_, n) => Fixtures.listingInput(id(n))))
      const runs = sql<{ runs: number }>`SELECT (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements
        WHERE statement LIKE '%FROM holds%' AND statement LIKE '%FROM listings WHERE id = ANY%'
          AND statement NOT LIKE '%pg_prepared_statements%'`.pipe(Effect.map((rows) => rows[0]?.runs ?? 0))
      yield* store.findForReader(id(0), { at: Date.now(), revealsOf: undefined })
      const before = yield* runs
      const found = yield* Effect.all(
        Array.from({ length: 40 }, (_, n) => store.findForReader(id(n), { at: Date.now(), revealsOf: undefined })),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(found.map((one) => one?.listing.id), Array.from({ length: 40 }, (_, n) => id(n)))
      // The first read runs alone and the 39 that arrive while it runs share the next statement
      // (one more allowed for a scheduler's late fiber); four lanes of batches made 8.
      assert.isAtMost((yield* runs) - before, 3)
    }).pipe(onOneConnection))

  /*
   * The running holds of a page's rows, and of a single read's, are found by one scan of
   * holds_running over the rows' ids. Probing an index once per row costs a page of 250 rows more
   * than reading the page, and probing the exclusion constraint's GiST far more once holds have a
   * history. One connection, so that the index statistics its statements leave can be flushed
   * and read, and its prepared statements listed.
   */
  it.effect("a page's running holds are read in one scan of holds_running, and the exclusion GiST is never probed", () =>
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      const sql = yield* SqlClient.SqlClient
      const id = listingId("R")
      yield* store.upsert(Array.from({ length: 300 }, (_, n) => Fixtures.listingInput(id(n))))
      // A history: holds ended on other listings, and on every tenth of these one still running.
      yield* sql`INSERT INTO holds (id, listing_id, account_id, held_at, expires_at, ended_at, outcome)
        SELECT 'old' || n, 'X' || n, 'acct', now() - interval '30 days', now() - interval '29 days',
          CASE WHEN n % 2 = 0 THEN now() - interval '29 days 12 hours' END, CASE WHEN n % 2 = 0 THEN 'released' END
        FROM generate_series(1, 20000) AS n`
      yield* sql`INSERT INTO holds (id, listing_id, account_id, held_at, expires_at)
        SELECT 'run' || n, 'R' || lpad(n::text, 7, '0'), 'acct', now() - interval '1 hour', now() + interval '1 day'
        FROM generate_series(0, 299, 10) AS n`
      yield* sql`ANALYZE holds`
      const scans = sql<{ indexrelname: string; idx_scan: number }>`SELECT indexrelname, idx_scan::int FROM pg_stat_user_indexes
        WHERE schemaname = current_schema() AND indexrelname IN ('holds_running', 'holds_one_running_per_listing')`.pipe(
        Effect.map((rows) => Object.fromEntries(rows.map((row) => [row.indexrelname, row.idx_scan])))
      )
      const { after, before } = yield* measured(
        scans,
        Effect.gen(function*() {
          for (let n = 0; n < 8; n++) {
            const page = yield* store.page(firstPageNow(250, {}))
            assert.deepStrictEqual([...page.running.keys()].sort(), Array.from({ length: 25 }, (_, k) => id(k * 10)))
            const found = yield* store.findForReader(id(n * 10), { at: Date.now(), revealsOf: undefined })
            assert.strictEqual(found?.running?.id, `run${n * 10}`)
          }
        })
      )
      assert.strictEqual(after["holds_one_running_per_listing"], before["holds_one_running_per_listing"])
      assert.isAbove(after["holds_running"]!, before["holds_running"]!)
      // The page's statement, run as the server prepared it, reads holds once, not once per row.
      const loopsOverHolds = (node: PlanNode): Array<number> => [
        ...(node["Relation Name"] === "holds" ? [node["Actual Loops"]] : []),
        ...(node.Plans ?? []).flatMap(loopsOverHolds)
      ]
      assert.deepStrictEqual(loopsOverHolds(yield* explainPrepared("%LIMIT 251%")), [1])
    }).pipe(onOneConnection))

  /*
   * A hold nobody ends runs out with its outcome still null, so a listing held often keeps
   * many past holds in holds_running. The look-up starts at the instant it asks about and
   * reads the running holds only, not each past one. One connection, so that the index
   * statistics its statements leave can be flushed and read.
   */
  it.effect("a listing's expired holds are not read to find its running one, on a page or a single read", () =>
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      const sql = yield* SqlClient.SqlClient
      const id = listingId("E")
      yield* store.upsert(Array.from({ length: 30 }, (_, n) => Fixtures.listingInput(id(n))))
      // Every listing held and run out 20 times before, as were 10 000 others; every tenth held now.
      yield* sql`INSERT INTO holds (id, listing_id, account_id, held_at, expires_at)
        SELECT 'past' || n || '-' || k, 'E' || lpad(n::text, 7, '0'), 'acct',
          now() - k * interval '2 days' - interval '1 day', now() - k * interval '2 days'
        FROM generate_series(0, 29) AS n, generate_series(1, 20) AS k`
      yield* sql`INSERT INTO holds (id, listing_id, account_id, held_at, expires_at)
        SELECT 'other' || n, 'O' || lpad(n::text, 7, '0'), 'acct', now() - interval '3 days', now() - interval '2 days'
        FROM generate_series(1, 10000) AS n`
      yield* sql`INSERT INTO holds (id, listing_id, account_id, held_at, expires_at)
        SELECT 'now' || n, 'E' || lpad(n::text, 7, '0'), 'acct', now() - interval '1 hour', now() + interval '1 day'
        FROM generate_series(0, 29, 10) AS n`
      yield* sql`ANALYZE holds`
      // Rows of holds read, through any index or by a scan of the table.
      const rowsRead = sql<{ read: number }>`SELECT (coalesce(idx_tup_fetch, 0) + seq_tup_read)::int AS read
        FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = 'holds'`.pipe(Effect.map((rows) => rows[0]!.read))
      const { after, before } = yield* measured(
        rowsRead,
        Effect.gen(function*() {
          const page = yield* store.page(firstPageNow(30, {}))
          assert.deepStrictEqual([...page.running.keys()].sort(), [id(0), id(10), id(20)])
          const found = yield* store.findForReader(id(10), { at: Date.now(), revealsOf: undefined })
          assert.strictEqual(found?.running?.id, "now10")
          assert.strictEqual(yield* store.findForReader(id(11), { at: Date.now(), revealsOf: undefined }).pipe(Effect.map((one) => one?.running)), undefined)
        })
      )
      // The three running holds and the single read's one; the 620 past holds of these listings would be 620 more.
      assert.isAtMost(after - before, 10)
    }).pipe(onOneConnection))

  /*
   * Which of a page's rows its reader revealed is read over the span of the page's ids, once an
   * account, not probed once a row (two buffers each); single reads of many listings by many
   * accounts ask each account about its own listing, not every account about every listing.
   * One connection, so that the table statistics its statements leave can be flushed and read.
   */
  it.effect("reveals are read once an account over a page's ids, and once a single read, not once a row and account", () =>
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      const sql = yield* SqlClient.SqlClient
      const id = listingId("V")
      yield* store.upsert(Array.from({ length: 250 }, (_, n) => Fixtures.listingInput(id(n))))
      // Twenty accounts each revealed every seventh of these listings from an offset of its own;
      // other accounts revealed 10 000 other listings.
      const revealed = (account: number, n: number) => (n + account) % 7 === 0
      yield* sql`INSERT INTO reveals (account_id, listing_id, revealed_at, charged)
        SELECT 'acct' || a, 'V' || lpad(n::text, 7, '0'), now(), false
        FROM generate_series(0, 19) AS a, generate_series(0, 249) AS n WHERE (n + a) % 7 = 0`
      yield* sql`INSERT INTO reveals (account_id, listing_id, revealed_at, charged)
        SELECT 'other' || (n % 50), 'W' || lpad(n::text, 7, '0'), now(), false FROM generate_series(1, 10000) AS n`
      yield* sql`ANALYZE reveals`
      // Buffers of reveals and its index read, by any plan.
      const buffers = sql<{ read: number }>`SELECT (heap_blks_hit + heap_blks_read + coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0))::int AS read
        FROM pg_statio_user_tables WHERE schemaname = current_schema() AND relname = 'reveals'`.pipe(Effect.map((rows) => rows[0]!.read))
      const all = Array.from({ length: 250 }, (_, n) => n)
      for (const order of ["id", "latest"] as const) {
        const now = Date.now()
        const page = yield* measured(buffers, store.page({ ...firstPageNow(250, {}), order, reader: { at: now, revealsOf: "acct3" } }))
        assert.deepStrictEqual([...page.result.revealed].sort(), all.filter((n) => revealed(3, n)).map(id))
        // A look-up per row would read ~500.
        assert.isAtMost(page.after - page.before, 20, order)
      }
      const asked = Array.from({ length: 40 }, (_, k) => ({ n: k * 6, account: k % 20 }))
      const reads = yield* measured(buffers, Effect.all(
        asked.map(({ account, n }) => store.findForReader(id(n), { at: Date.now(), revealsOf: `acct${account}` })),
        { concurrency: "unbounded" }
      ))
      assert.deepStrictEqual(reads.result.map((found) => found?.revealed), asked.map(({ account, n }) => revealed(account, n)))
      // Every account of the batch on every listing of it would read ~1 600.
      assert.isAtMost(reads.after - reads.before, 200)
    }).pipe(onOneConnection))

  /*
   * A page of one TLD in the newest-first order walks that TLD's part of listings_tld_latest,
   * index-only, instead of testing every newer row of every TLD in listings_latest. One
   * connection, whose prepared statements the check lists.
   */
  it.effect("a TLD's page in the newest-first order reads listings_tld_latest, index-only", () =>
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      const sql = yield* SqlClient.SqlClient
      const id = listingId("T")
      // One listing in ten is a .io, the newest last; the rest .com.
      yield* store.upsert(Array.from({ length: 5_000 }, (_, n) =>
        Fixtures.listingInput(id(n), {
          domain: `name${n}.${n % 10 === 0 ? "io" : "com"}`,
          discoveredAt: Date.UTC(2025, 0, 1) + n * 60_000
        })))
      yield* sql`ANALYZE listings`
      const newestIo = Array.from({ length: 20 }, (_, k) => id(4_990 - k * 10))
      for (let n = 0; n < 8; n++) {
        const page = yield* store.page({ ...firstPageNow(20, { tld: "io" }), order: "latest" })
        assert.deepStrictEqual(page.rows.map((row) => row.id), newestIo)
      }
      const scans = (node: PlanNode): Array<string> => [
        ...(node["Index Name"] !== undefined ? [`${node["Node Type"]} on ${node["Index Name"]}`] : []),
        ...(node.Plans ?? []).flatMap(scans)
      ]
      const plan = yield* explainPrepared("%tld = 'io'%discovered_at DESC%")
      assert.include(scans(plan), "Index Only Scan on listings_tld_latest", JSON.stringify(scans(plan)))
    }).pipe(onOneConnection))
})
