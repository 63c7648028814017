/**
 * The access path of decision 0516 (the SQL adapter's filter columns), measured alone on
 * `npm run bench`'s million listings, over the random combinations of bench/combos.ts that have
 * no `q`: a simpler copy of the columns, scanned, each page checked against the API.
 *
 * Prints the load time, the memory the arrays take, each page's scan time (three pages a
 * combination, as the workload walks them), and checks every page against the API: a server on
 * the same database answers the same combination page by page, and the ids must be the same.
 *
 *   node --expose-gc bench/columns.ts
 *
 * Environment: BENCH_DATABASE (dropshelf_bench_1000000), BENCH_COMBOS (200), BENCH_COMBO_SEED (1).
 */
import { Bands, ListingFilter, ListQuery, Plan } from "@dropshelf/core"
import pg from "pg"
import { combinations, pathOf } from "./combos.ts"
import { keyFor, startServer, stop } from "./server.ts"
import { databaseUrl } from "./postgres.ts"
import { getJson } from "./since.ts"
import { idNumber, idText } from "../packages/store-sql/src/FilterColumns.ts"

const DATABASE = process.env.BENCH_DATABASE ?? "dropshelf_bench_1000000"
const COMBOS = Number(process.env.BENCH_COMBOS ?? 200)
const SEED = Number(process.env.BENCH_COMBO_SEED ?? 1)
const PAGES = 3
const DAY = 86_400_000
const NONE = 255

/** Text values as small codes; a column of more than 254 values is not coded here. */
class Codes {
  readonly byText = new Map<string, number>()
  code(text: string | null): number {
    if (text === null) return NONE
    let code = this.byText.get(text)
    if (code === undefined) {
      code = this.byText.size
      if (code >= NONE) throw new Error("more than 254 values in a coded column")
      this.byText.set(text, code)
    }
    return code
  }
  find(text: string): number {
    return this.byText.get(text) ?? -1
  }
}

/** The referring-domains band a count falls in, as its index in `Bands.REFERRING_DOMAIN_BANDS`. */
const bandOf = (count: number) =>
  Bands.REFERRING_DOMAIN_BANDS.findIndex((band) => {
    const { high, low } = Bands.referringDomainsBandBounds(band)
    return count >= low && (high === null || count <= high)
  })

const megabytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
const collect = () => (globalThis as { gc?: () => void }).gc?.()

// ---------------------------------------------------------------------------------------------
// Loading

collect()
const before = process.memoryUsage()
const loadStarted = performance.now()
const client = new pg.Client({ connectionString: databaseUrl(DATABASE) })
await client.connect()
const [{ count }] = (await client.query<{ count: number }>("SELECT count(*)::int AS count FROM listings WHERE status = 'active'")).rows
const n = count!
const ids = new Float64Array(n)
const discovered = new Float64Array(n)
const checked = new Float64Array(n)
const tld = new Uint8Array(n), category = new Uint8Array(n), source = new Uint8Array(n), spam = new Uint8Array(n)
const price = new Uint8Array(n), rd = new Uint8Array(n), score = new Uint8Array(n), age = new Uint8Array(n), citability = new Uint8Array(n)
/** Bit 1: open tier; 2: featured; 4: linked. */
const flags = new Uint8Array(n)
const codes = { tld: new Codes(), category: new Codes(), source: new Codes(), spam: new Codes() }

let loaded = 0
let after = ""
for (;;) {
  const { rows } = await client.query<Record<string, string | number | boolean | null>>({
    text: `SELECT id, (extract(epoch FROM discovered_at) * 1000)::float8 AS discovered,
        (extract(epoch FROM availability_checked_at) * 1000)::float8 AS checked, tld, category, source, spam, tier,
        published_value_cents::float8 AS cents, referring_domains, directory_score, age_years, citability_score,
        featured_rank IS NOT NULL AS featured, linked
      FROM listings WHERE status = 'active' AND id > $1 ORDER BY id LIMIT 100000`,
    values: [after]
  })
  if (rows.length === 0) break
  for (const row of rows) {
    const i = loaded++
    ids[i] = idNumber(row.id as string)
    discovered[i] = row.discovered as number
    checked[i] = row.checked === null ? Number.NaN : (row.checked as number)
    rd[i] = row.referring_domains === null ? NONE : bandOf(row.referring_domains as number)
    tld[i] = codes.tld.code(row.tld as string)
    category[i] = codes.category.code(row.category as string | null)
    source[i] = codes.source.code(row.source as string | null)
    spam[i] = codes.spam.code(row.spam as string | null)
    price[i] = Bands.PRICE_RANGES.indexOf(Bands.priceRangeOf(row.cents as number))
    score[i] = row.directory_score === null ? NONE : (row.directory_score as number)
    age[i] = row.age_years === null ? NONE : Math.min(254, row.age_years as number)
    citability[i] = row.citability_score === null ? NONE : (row.citability_score as number)
    flags[i] = (row.tier === "open" ? 1 : 0) | (row.featured === true ? 2 : 0) | (row.linked === true ? 4 : 0)
  }
  after = rows[rows.length - 1]!.id as string
}
await client.end()
/** The newest-first order: positions by discovery, newest first, ties by id. */
const latest = new Uint32Array(n)
for (let i = 0; i < n; i++) latest[i] = i
latest.sort((a, b) => discovered[b]! - discovered[a]! || a - b)

/** Every column, one entry a listing, in one order. */
type Coded = "tld" | "category" | "source" | "spam" | "price" | "rd" | "score" | "age" | "citability"
type Columns = { readonly [name in Coded | "flags"]: Uint8Array } & {
  readonly ids: Float64Array
  readonly discovered: Float64Array
  readonly checked: Float64Array
}
const byId: Columns = { ids, discovered, checked, tld, category, source, spam, price, rd, score, age, citability, flags }
/**
 * The same columns in the newest-first order: a scan then reads each array front to back, as
 * in the id order. Reading the id order's arrays through the permutation instead costs a cache
 * miss a row and made sparse newest-first pages several times slower.
 */
const reordered = <A extends Float64Array | Uint8Array>(column: A): A => {
  const copy = new (column.constructor as new (length: number) => A)(n)
  for (let at = 0; at < n; at++) copy[at] = column[latest[at]!]!
  return copy
}
const byLatest = Object.fromEntries(Object.entries(byId).map(([name, column]) => [name, reordered(column)])) as unknown as Columns
const loadSeconds = (performance.now() - loadStarted) / 1000
collect()
const held = process.memoryUsage()

// ---------------------------------------------------------------------------------------------
// Scanning

/**
 * A page's filters by the rules of `ListingFilter.matchesFilters`, as a table a column: for each
 * coded value whether it passes (all pass where the filter is absent), so that a scan tests
 * every row with the same few look-ups.
 */
type Test = { readonly [name in Coded]: Uint8Array } & {
  /** The flags a row must have (`flagsMask` of them equal to `flagsWanted`). */
  readonly flagsMask: number
  readonly flagsWanted: number
  /** Checked at or after this instant; undefined: not asked. */
  readonly checkedFrom: number | undefined
}

const all = () => new Uint8Array(256).fill(1)
const only = (pass: (value: number) => boolean) => {
  const table = new Uint8Array(256)
  for (let value = 0; value < 256; value++) table[value] = pass(value) ? 1 : 0
  return table
}

const testOf = (filters: ListQuery.ListFilters, now: number): Test => {
  const f = filters
  const coded = (codes: Codes, wanted: ReadonlyArray<string> | undefined) => {
    if (wanted === undefined) return all()
    const set = new Set(wanted.map((text) => codes.find(text)))
    return only((value) => set.has(value))
  }
  const scores = ListingFilter.directoryScoreBounds(f)
  let flagsMask = 0
  let flagsWanted = 0
  if (f.featured !== undefined) {
    flagsMask |= 2
    if (f.featured) flagsWanted |= 2
  }
  if (f.openTierOnly === true) {
    flagsMask |= 1
    flagsWanted |= 1
  }
  if (f.recommended === true) {
    flagsMask |= 4
    flagsWanted |= 4
  }
  const category = coded(codes.category, f.categories)
  // recommended: a category, whichever.
  if (f.recommended === true) category[NONE] = 0
  return {
    tld: coded(codes.tld, f.tld === undefined ? undefined : [f.tld]),
    category,
    source: coded(codes.source, f.sources),
    spam: coded(codes.spam, f.spam === undefined ? undefined : [f.spam]),
    price: f.priceRange === undefined ? all() : only((value) => value === Bands.PRICE_RANGES.indexOf(f.priceRange!)),
    rd: f.referringDomainBands === undefined
      ? all()
      : only((value) => value !== NONE && f.referringDomainBands!.includes(Bands.REFERRING_DOMAIN_BANDS[value]!)),
    score: scores === undefined
      ? all()
      : only((value) => scores !== null && value !== NONE && value >= scores.low && value <= scores.high),
    age: f.ageMin === undefined ? all() : only((value) => value !== NONE && value >= f.ageMin!),
    citability: f.citabilityMin === undefined ? all() : only((value) => value !== NONE && value >= f.citabilityMin!),
    flagsMask,
    flagsWanted,
    checkedFrom: f.checkedDays === undefined ? undefined : now - f.checkedDays * DAY
  }
}

/**
 * From `start` in the order, the first `limit + 1` positions that pass: the page's rows, and the
 * position of its last row when there is a next page.
 */
const scan = (order: ListQuery.ListOrder, start: number, limit: number, test: Test, visibleBefore: number) => {
  const found: Array<number> = []
  const { checkedFrom, flagsMask, flagsWanted } = test
  const { age, category, checked, citability, discovered, flags, ids, price, rd, score, source, spam, tld } = order === "id" ? byId : byLatest
  for (let i = start; i < n && found.length <= limit; i++) {
    if (
      (test.tld[tld[i]!]! & test.category[category[i]!]! & test.source[source[i]!]! & test.spam[spam[i]!]! & test.price[price[i]!]! &
        test.rd[rd[i]!]! & test.score[score[i]!]! & test.age[age[i]!]! & test.citability[citability[i]!]!) === 1 &&
      (flags[i]! & flagsMask) === flagsWanted && discovered[i]! <= visibleBefore &&
      (checkedFrom === undefined || checked[i]! >= checkedFrom)
    ) found.push(i)
  }
  const shown = found.slice(0, limit)
  return { rows: shown.map((i) => idText(ids[i]!)), last: found.length > limit ? shown[shown.length - 1] : undefined }
}

// ---------------------------------------------------------------------------------------------
// The combinations, scanned and checked against the API

const port = 4720
const server = await startServer(DATABASE, port)
const key = keyFor(DATABASE)
const delay = Plan.Plans.business.accessDelayMs
const times: Array<number> = []
const mismatches: Array<string> = []
const slowest: Array<[number, string]> = []
let skipped = 0
for (const query of combinations(COMBOS, SEED)) {
  const decoded = ListQuery.decodeListQuery(Object.fromEntries(new URLSearchParams(query)))
  if (decoded._tag === "Failure") throw new Error(`combination ${query}: ${decoded.failure.message}`)
  const request = decoded.success
  if (request.filters.q !== undefined) {
    skipped++
    continue
  }
  let start = 0
  let cursor: string | null = null
  for (let page = 1; page <= PAGES; page++) {
    const path: string = cursor === null ? pathOf(query) : `${pathOf(query)}${query === "" ? "?" : "&"}cursor=${encodeURIComponent(cursor)}`
    const answer = await getJson(port, key, path)
    const now = Date.now()
    const body = JSON.parse(answer.body) as { data: Array<{ id: string }>; next_cursor: string | null }
    const test = testOf(request.filters, now)
    // Warm, then timed: as the workload's pages are.
    scan(request.order, start, request.limit, test, now - delay)
    const started = performance.now()
    const result = scan(request.order, start, request.limit, test, now - delay)
    times.push(performance.now() - started)
    slowest.push([times.at(-1)!, `page ${page}: ${query}`])
    const expected = body.data.map((row) => row.id)
    if (result.rows.join() !== expected.join() || (result.last === undefined) !== (body.next_cursor === null)) {
      mismatches.push(`${query} page ${page}: scanned ${result.rows.length} rows, the API ${expected.length}`)
    }
    if (result.last === undefined || body.next_cursor === null) break
    start = result.last + 1
    cursor = body.next_cursor
  }
}
await stop(server)

times.sort((a, b) => a - b)
const at = (p: number) => times[Math.min(times.length - 1, Math.floor(times.length * p))]!.toFixed(2)
console.log(`columns: ${n} active listings loaded in ${loadSeconds.toFixed(1)} s`)
console.log(`columns: arrays ${megabytes(held.arrayBuffers - before.arrayBuffers)} MB, RSS +${megabytes(held.rss - before.rss)} MB, heap +${megabytes(held.heapUsed - before.heapUsed)} MB`)
console.log(`columns: ${times.length} pages of ${COMBOS - skipped} combinations without q (${skipped} with q left out): scan p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, slowest ${times.at(-1)!.toFixed(2)} ms; over 25 ms: ${times.filter((ms) => ms > 25).length}`)
console.log(`columns: pages unlike the API's: ${mismatches.length}`)
for (const [ms, what] of slowest.sort((a, b) => b[0] - a[0]).slice(0, 5)) console.log(`  ${ms.toFixed(2)} ms ${what}`)
for (const mismatch of mismatches.slice(0, 10)) console.log(`  ${mismatch}`)
