/**
 * CPU per request, which moves far less with the machine's load than req/s: `node bench/cost.ts
 * <path> [<path> …]` starts the server on the million-row database (as `npm run bench` leaves
 * it), sends BENCH_REQUESTS requests per path from 50 connections of a separate load process, and
 * prints, per path, the CPU time the server process and PostgreSQL spent per request (from
 * /proc), with the req/s of the run for reference.
 *
 * Three paths name workloads rather than one path: `mixed` is the mixed list workload of `npm run
 * bench` (bench/mixed.ts: filter sets through three pages, single reads between), `combos` the
 * random combinations walked the same way (bench/combos.ts, BENCH_COMBOS and BENCH_COMBO_SEED,
 * warmed BENCH_COMBO_WARMUP s as there), `reads` single reads of 3 000 listings spread over the
 * directory, each asked in turn.
 *
 * Transactions a request: those the bench database committed (pg_stat_database, which counts
 * each statement outside a transaction as one), a count of round trips a request costs.
 *
 * Waiting for a CPU: the share of the run the server's event loop was ready to run but had no
 * core (/proc/<pid>/schedstat), the time PostgreSQL and the load generator took from it on a
 * machine they share.
 *
 * PostgreSQL's CPU is that of the postmaster's helpers and of the backends connected to the
 * bench database, so that other databases' work on a shared machine does not count. Redis's is
 * that of every `redis-server` process on the machine (the rate limiter's, with REDIS_URL set).
 *
 * Environment: DATABASE_URL (the server, as for `npm run bench`), BENCH_REQUESTS (20000),
 * BENCH_DATABASE (dropshelf_bench_1000000), BENCH_PLAN (business), BENCH_ACCOUNTS (1: the
 * accounts of that plan the 50 connections of `mixed` and `reads` are spread over, a key each;
 * a population of callers is many accounts, whose reads share statements with each other's),
 * BENCH_FROM (`bundle`, the build a deployment runs, or `sources`), BENCH_BUNDLE (bench/server.ts).
 */
import { Plan } from "@dropshelf/core"
import { combinations } from "./combos.ts"
import type { Walk } from "./load.ts"
import { idsAcross, MIXED_IDS, mixedWalks } from "./mixed.ts"
import { commitsIn, psql } from "./postgres.ts"
import { pidsOf, runQueueWaitOf, ticksOf } from "./proc.ts"
import { keyFor, load, loadWalks, startServer, stop } from "./server.ts"

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000)
const DATABASE = process.env.BENCH_DATABASE ?? "dropshelf_bench_1000000"
const PLAN = (process.env.BENCH_PLAN ?? "business") as "free" | "pro" | "business"
const ACCOUNTS = Math.max(1, Number(process.env.BENCH_ACCOUNTS ?? 1))
const FROM = process.env.BENCH_FROM === "sources" ? "sources" : "bundle"
const COMBOS = Number(process.env.BENCH_COMBOS ?? 200)
const COMBO_SEED = Number(process.env.BENCH_COMBO_SEED ?? 1)
const COMBO_WARMUP = Number(process.env.BENCH_COMBO_WARMUP ?? 60)
const PORT = 18_099
const paths = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["/api/v1/domains"]

/** The bench database's backends and the postmaster's own processes (no database): the work its statements cost. */
const postgresPids = () =>
  psql(`SELECT pid FROM pg_stat_activity WHERE datname = '${DATABASE}' OR datname IS NULL`).split("\n").filter((pid) => pid.length > 0)
const postgresTicks = (pids: ReadonlyArray<string>) => pids.reduce((total, pid) => total + ticksOf(pid), 0)

const commits = () => commitsIn(DATABASE)

const walksFor = (path: string): ReadonlyArray<Walk> | undefined => {
  // Listings the plan can read already: one still in its access delay answers 404 at once.
  const ids = idsAcross(DATABASE, MIXED_IDS, Plan.Plans[PLAN].accessDelayMs)
  if (path === "mixed") return mixedWalks(ids)
  if (path === "combos") return mixedWalks(ids.slice(0, 3 * COMBOS), combinations(COMBOS, COMBO_SEED))
  if (path === "reads") return ids.map((id) => ({ path: `/api/v1/domains/${id}`, pages: 1 }))
  return undefined
}

const keys = Array.from({ length: ACCOUNTS }, () => keyFor(DATABASE, PLAN))
const key = keys[0]!
const server = await startServer(DATABASE, PORT, { from: FROM })
console.log(`server: ${process.env.BENCH_BUNDLE ?? (FROM === "bundle" ? "the bundle of npm run build" : "the TypeScript sources")}, database ${DATABASE}, ${ACCOUNTS} ${PLAN} account${ACCOUNTS === 1 ? "" : "s"}`)

const redisPids = pidsOf("redis-server")
const redisTicks = () => redisPids.reduce((total, pid) => total + ticksOf(pid), 0)

console.log(`| path | server CPU µs/request | PostgreSQL CPU µs/request | Redis CPU µs/request | transactions/request | req/s | server waiting for a CPU |`)
console.log(`| --- | ---: | ---: | ---: | ---: | ---: | ---: |`)
for (const path of paths) {
  const walks = walksFor(path)
  const run = (amount: number) =>
    walks === undefined
      ? load(PORT, key, [{ path }], { connections: 50, amount })
      : loadWalks(PORT, keys, walks, { connections: 50, amount })
  // The combinations' filter columns and search terms load in the background while they are first asked.
  if (path === "combos") loadWalks(PORT, keys, walks!, { connections: 50, durationSeconds: COMBO_WARMUP })
  run(2_000)
  const pids = postgresPids()
  const serverBefore = ticksOf(server.pid!)
  const postgresBefore = postgresTicks(pids)
  const commitsBefore = commits()
  const redisBefore = redisTicks()
  const waitingBefore = runQueueWaitOf(server.pid!)
  const started = performance.now()
  const result = run(REQUESTS)
  const seconds = (performance.now() - started) / 1000
  const waiting = (runQueueWaitOf(server.pid!) - waitingBefore) / 1e9 / seconds
  const perRequest = (ticks: number) => ((ticks * 10_000) / result.total).toFixed(0)
  if (result.non2xx + result.errors > 0) console.log(`${path}: ${result.non2xx + result.errors} answers not 2xx`)
  console.log(`| ${path} | ${perRequest(ticksOf(server.pid!) - serverBefore)} | ${perRequest(postgresTicks(pids) - postgresBefore)} | ${perRequest(redisTicks() - redisBefore)} | ${
    ((commits() - commitsBefore) / result.total).toFixed(2)
  } | ${(result.total / seconds).toFixed(0)} | ${(100 * waiting).toFixed(0)} % |`)
}
await stop(server)
