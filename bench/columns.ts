/**
 * The SQL adapter's filter columns (decision 0516) measured alone on `npm run bench`'s million
 * listings, over the random combinations of bench/combos.ts: the load, the memory the arrays
 * take, the combinations' search terms read, and each page's scan (three pages a combination, as
 * the workload walks them), checked against the API: a server on the same database answers the
 * same combination page by page, and a scan's candidates must be its rows (instants held to the
 * minute may add a candidate its statement then drops).
 *
 *   node --expose-gc bench/columns.ts
 *
 * Environment: BENCH_DATABASE (dropshelf_bench_1000000), BENCH_COMBOS (200), BENCH_COMBO_SEED (1).
 */
import { type Cursor, type Ids, ListingFilter, ListQuery, Plan } from "@dropshelf/core"
import pg from "pg"
import { COLUMN_SELECT, DEFAULTS, mostTermRows, TERM_SELECT, toColumnRow } from "../packages/store-sql/src/ColumnPages.ts"
import { FilterColumns } from "../packages/store-sql/src/FilterColumns.ts"
import { containsPattern } from "../packages/store-sql/src/PageStatement.ts"
import { combinations, pathOf } from "./combos.ts"
import { keyFor, startServer, stop } from "./server.ts"
import { databaseUrl } from "./postgres.ts"
import { getJson } from "./since.ts"

const DATABASE = process.env.BENCH_DATABASE ?? "dropshelf_bench_1000000"
const COMBOS = Number(process.env.BENCH_COMBOS ?? 200)
const SEED = Number(process.env.BENCH_COMBO_SEED ?? 1)
const PAGES = 3

const megabytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
const collect = () => (globalThis as { gc?: () => void }).gc?.()

// Loaded as the adapter loads them: the active listings in ascending id.
collect()
const before = process.memoryUsage()
const loadStarted = performance.now()
const client = new pg.Client({ connectionString: databaseUrl(DATABASE) })
await client.connect()
const [{ count }] = (await client.query<{ count: number }>("SELECT count(*)::int AS count FROM listings WHERE status = 'active'")).rows
const loader = FilterColumns.loader(count!)
let after = ""
for (;;) {
  const { rows } = await client.query<Array<unknown>>({
    text: `SELECT ${COLUMN_SELECT} FROM listings WHERE status = 'active' AND id > $1 ORDER BY id LIMIT 100000`,
    values: [after],
    rowMode: "array"
  })
  if (rows.length === 0) break
  for (const row of rows) loader.add(toColumnRow(row))
  after = rows[rows.length - 1]![0] as string
}
const columns = loader.done()
const loadSeconds = (performance.now() - loadStarted) / 1000
collect()
const held = process.memoryUsage()

// The combinations, scanned and checked against the API.
const port = 4720
const server = await startServer(DATABASE, port)
const key = keyFor(DATABASE)
const delay = Plan.Plans.business.accessDelayMs
const times: Array<number> = []
const mismatches: Array<string> = []
const slowest: Array<[number, string]> = []
let termSeconds = 0
for (const query of combinations(COMBOS, SEED)) {
  const decoded = ListQuery.decodeListQuery(Object.fromEntries(new URLSearchParams(query)))
  if (decoded._tag === "Failure") throw new Error(`combination ${query}: ${decoded.failure.message}`)
  const request = decoded.success
  // Its search terms' rows, read as the adapter reads them.
  for (const term of columns.missingTerms(request.filters.q === undefined ? [] : ListingFilter.searchTerms(request.filters.q))) {
    const started = performance.now()
    const most = mostTermRows(columns.size)
    const { rows } = await client.query<{ id: string }>(`${TERM_SELECT} $1 LIMIT $2`, [containsPattern(term), most + 1])
    columns.addTerm(term, rows.length > most ? "every" : rows.map((row) => row.id), DEFAULTS.terms)
    termSeconds += (performance.now() - started) / 1000
  }
  let position: Cursor.CursorPosition | undefined
  let cursor: string | null = null
  for (let page = 1; page <= PAGES; page++) {
    const path: string = cursor === null ? pathOf(query) : `${pathOf(query)}${query === "" ? "?" : "&"}cursor=${encodeURIComponent(cursor)}`
    const answer = await getJson(port, key, path)
    const now = Date.now()
    const body = JSON.parse(answer.body) as { data: Array<{ id: string; discovered_at: string }>; next_cursor: string | null }
    const test = columns.test(request.filters, now, now - delay)
    // Warm, then timed: as the workload's pages are.
    columns.scan(request.order, position, request.limit + 1, test)
    const started = performance.now()
    const scan = columns.scan(request.order, position, request.limit + 1, test)
    times.push(performance.now() - started)
    slowest.push([times.at(-1)!, `page ${page}: ${query}`])
    const expected = body.data.map((row) => row.id)
    if (scan.ids.slice(0, request.limit).join() !== expected.join() || (scan.ids.length > request.limit) !== (body.next_cursor !== null)) {
      mismatches.push(`${query} page ${page}: scanned ${scan.ids.length} candidates, the API ${expected.length} rows`)
    }
    const last = body.data.at(-1)
    if (last === undefined || body.next_cursor === null) break
    const id = last.id as Ids.ListingId
    position = request.order === "id" ? { order: "id", id } : { order: "latest", discoveredAt: Date.parse(last.discovered_at), id }
    cursor = body.next_cursor
  }
}
await stop(server)
await client.end()

times.sort((a, b) => a - b)
const at = (p: number) => times[Math.min(times.length - 1, Math.floor(times.length * p))]!.toFixed(2)
console.log(`columns: ${columns.size} active listings loaded in ${loadSeconds.toFixed(1)} s`)
console.log(`columns: arrays ${megabytes(held.arrayBuffers - before.arrayBuffers)} MB, RSS +${megabytes(held.rss - before.rss)} MB, heap +${megabytes(held.heapUsed - before.heapUsed)} MB`)
console.log(`columns: search terms read in ${termSeconds.toFixed(1)} s`)
console.log(`columns: ${times.length} pages of ${COMBOS} combinations: scan p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, slowest ${times.at(-1)!.toFixed(2)} ms; over 25 ms: ${times.filter((ms) => ms > 25).length}`)
console.log(`columns: pages whose candidates are not the API's rows: ${mismatches.length}`)
for (const [ms, what] of slowest.sort((a, b) => b[0] - a[0]).slice(0, 5)) console.log(`  ${ms.toFixed(2)} ms ${what}`)
for (const mismatch of mismatches.slice(0, 10)) console.log(`  ${mismatch}`)
