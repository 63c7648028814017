/**
 * What a reveal costs one caller: `node bench/reveal.ts` starts the server on the million-row
 * database (as `npm run bench` leaves it), and a fresh pro account reveals BENCH_REVEALS (400,
 * under pro's 500 a month) listings spread over the directory one after another, then reveals
 * them all again. It prints, for first (charged) reveals and for repeats, the median and p90
 * latency as the client sees it and the transactions the database committed a reveal (each
 * statement outside a transaction is one): the round trips a reveal waits for, since one caller
 * at a time shares no statement with anyone.
 *
 * Environment: DATABASE_URL (the server, as for `npm run bench`), BENCH_REVEALS (400),
 * BENCH_DATABASE (dropshelf_bench_1000000), BENCH_FROM (`bundle` or `sources`), BENCH_BUNDLE.
 */
import { psql } from "./postgres.ts"
import { keyFor, startServer, stop } from "./server.ts"

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

const commits = () => Number(psql(`SELECT xact_commit FROM pg_stat_database WHERE datname = '${DATABASE}'`))

const key = keyFor(DATABASE, "pro")
// No watch worker: its rounds would be counted as transactions of the reveals.
const server = await startServer(DATABASE, PORT, { from: FROM, env: { DROPSHELF_WATCH_WORKER: "false" } })
console.log(`server: ${process.env.BENCH_BUNDLE ?? (FROM === "bundle" ? "the bundle of npm run build" : "the TypeScript sources")}, database ${DATABASE}`)

const revealAll = async (what: string) => {
  const latencies: Array<number> = []
  const before = commits()
  for (const id of ids) {
    const started = performance.now()
    const response = await fetch(`http://127.0.0.1:${PORT}/api/v1/domains/${id}/reveal`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` }
    })
    await response.arrayBuffer()
    latencies.push(performance.now() - started)
    if (response.status !== 200) throw new Error(`${what}: ${id} answered ${response.status}`)
  }
  // A backend that goes idle reports its counts to pg_stat_database within 10 s (PostgreSQL 15).
  await new Promise((resolve) => setTimeout(resolve, 11_000))
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(2)
  console.log(`| ${what} | ${ids.length} | ${at(0.5)} ms | ${at(0.9)} ms | ${((commits() - before) / ids.length).toFixed(2)} |`)
}

console.log(`| reveal | reveals | p50 | p90 | transactions/reveal |`)
console.log(`| --- | ---: | ---: | ---: | ---: |`)
await revealAll("first, charged")
await revealAll("repeat")
await stop(server)
