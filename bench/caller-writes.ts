/**
 * What a reveal and a hold cost one caller: `node bench/caller-writes.ts` starts the server on
 * the million-row database (as `npm run bench` leaves it), and a fresh pro account reveals
 * BENCH_REVEALS (400, under pro's 500 a month) listings spread over the directory one after
 * another, reveals them all again, then holds each and ends that hold before the next (pro
 * runs 3 at once). It prints, for first (charged) reveals, repeats, holds and ends, the median
 * and p90 latency as the client sees it, and the transactions the database committed a listing
 * (each statement outside a transaction is one; a hold and its end together): the round trips
 * its requests wait for, since one caller at a time shares no statement with anyone.
 *
 * Environment: DATABASE_URL (the server, as for `npm run bench`), BENCH_REVEALS (400),
 * BENCH_DATABASE (dropshelf_bench_1000000), BENCH_FROM (`bundle` or `sources`), BENCH_BUNDLE.
 */
import { commitsIn, psql } from "./postgres.ts"
import { keyFor, startServer, stop } from "./server.ts"
import { percentileOf } from "./stats.ts"

const REVEALS = Number(process.env.BENCH_REVEALS ?? 400)
const DATABASE = process.env.BENCH_DATABASE ?? "dropshelf_bench_1000000"
const FROM = process.env.BENCH_FROM === "sources" ? "sources" : "bundle"
const PORT = 18_098

/** Listings a pro account can reveal: readable after pro's delay, not held by anyone, not `open` (which costs nothing). */
const ids = psql(
  `SELECT id FROM listings l WHERE status = 'active' AND tier <> 'open' AND discovered_at < now() - interval '8 days'
    AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.listing_id = l.id AND h.ended_at IS NULL AND h.expires_at > now())
    ORDER BY md5(id || 'reveal') LIMIT ${REVEALS}`,
  DATABASE
).split("\n")

const commits = () => commitsIn(DATABASE)

const key = keyFor(DATABASE, "pro")
// No watch worker: its rounds would be counted as transactions of the reveals.
const server = await startServer(DATABASE, PORT, { from: FROM, env: { DROPSHELF_WATCH_WORKER: "false" } })
console.log(`server: ${process.env.BENCH_BUNDLE ?? (FROM === "bundle" ? "the bundle of npm run build" : "the TypeScript sources")}, database ${DATABASE}`)

const send = async (method: string, path: string) => {
  const started = performance.now()
  const response = await fetch(`http://127.0.0.1:${PORT}${path}`, { method, headers: { authorization: `Bearer ${key}` } })
  const body = await response.text()
  if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status}: ${body.slice(0, 200)}`)
  return { body, ms: performance.now() - started }
}

/** Runs `requests` (one or more a listing, in turn) for every listing and prints a row for each kind. */
const phase = async (kinds: ReadonlyArray<string>, requests: (id: string) => AsyncGenerator<number>) => {
  const latencies = kinds.map(() => [] as Array<number>)
  const before = commits()
  for (const id of ids) {
    let index = 0
    for await (const ms of requests(id)) latencies[index++]!.push(ms)
  }
  // A backend that goes idle reports its counts to pg_stat_database within 10 s (PostgreSQL 15).
  await new Promise((resolve) => setTimeout(resolve, 11_000))
  const transactions = ((commits() - before) / ids.length).toFixed(2)
  kinds.forEach((kind, index) => {
    const sorted = latencies[index]!.sort((a, b) => a - b)
    const at = (q: number) => percentileOf(sorted, q).toFixed(2)
    console.log(`| ${kind} | ${sorted.length} | ${at(0.5)} ms | ${at(0.9)} ms | ${index === 0 ? transactions : "(above)"} |`)
  })
}

const reveal = (id: string) => send("POST", `/api/v1/domains/${id}/reveal`)

console.log(`| request | requests | p50 | p90 | transactions a listing, its requests together |`)
console.log(`| --- | ---: | ---: | ---: | ---: |`)
await phase(["reveal, first (charged)"], async function*(id) { yield (await reveal(id)).ms })
await phase(["reveal, repeat"], async function*(id) { yield (await reveal(id)).ms })
await phase(["hold", "end of the hold"], async function*(id) {
  const held = await send("POST", `/api/v1/domains/${id}/hold`)
  yield held.ms
  yield (await send("DELETE", `/api/v1/holds/${(JSON.parse(held.body) as { hold: { id: string } }).hold.id}`)).ms
})
await stop(server)
