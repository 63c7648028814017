/**
 * What each cache buys (the `caches` part of `npm run bench`): the mixed workload on a server
 * with one cache switched off (`DROPSHELF_CACHES_OFF`, apps/cli/src/Caches.ts) against servers
 * with every cache on, started in turn, `BENCH_CACHE_PAIRS` (2) times, so that each comparison
 * is made on the machine of the same minutes. Reported: req/s, p99 and the server's CPU a request
 * (from /proc, which moves far less with the machine's load than req/s), each against every
 * cache on. The since read-ahead only serves since runs, so it is measured on the since pull;
 * the Redis batches only with REDIS_URL set; the watch filters on what a matching round of
 * 10 000 watches spends decoding their queries. The filter columns serve the filters that match
 * few rows, which the mixed workload hardly asks: they are measured on the random combinations,
 * after the combinations' warm-up. `BENCH_CACHES` names the caches to measure.
 */
import { Watches } from "@dropshelf/core"
import { Effect } from "effect"
import { CACHES, type CacheName } from "../apps/cli/src/Caches.ts"
import * as RememberedWatchFilters from "../apps/server/src/RememberedWatchFilters.ts"
import { idsAcross, MIXED_IDS, mixedWalks } from "./mixed.ts"
import { backendPidsOf, ticksOf } from "./proc.ts"
import { loadWalks, startServer, stop } from "./server.ts"
import type { Walk } from "./load.ts"
import { pullSince } from "./since.ts"

const PAIRS = Number(process.env.BENCH_CACHE_PAIRS ?? 2)
/** BENCH_CACHES: the caches to measure, comma-separated (default every one). */
const ONLY = process.env.BENCH_CACHES?.split(",").map((name) => name.trim()).filter((name) => name.length > 0)

interface Figures {
  readonly requestsPerSecond: number
  readonly p99: number
  /** Server CPU a request (a since row for the since pull), µs. */
  readonly cpuMicros: number
  /** The database's backends' CPU a request, µs. */
  readonly postgresMicros: number
}

/** CPU ticks of the server and of the database's backends so far. */
const ticksNow = (pid: number, database: string) => ({
  server: ticksOf(pid),
  postgres: backendPidsOf(database).reduce((total, backend) => total + ticksOf(backend), 0)
})

const perUnit = (before: ReturnType<typeof ticksNow>, after: ReturnType<typeof ticksNow>, units: number) => ({
  cpuMicros: microsOf(after.server - before.server, units),
  postgresMicros: microsOf(after.postgres - before.postgres, units)
})

const mean = (values: ReadonlyArray<number>) => values.reduce((sum, value) => sum + value, 0) / values.length

/** Ticks are 1/100 s here (`ticksOf`). */
const microsOf = (ticks: number, requests: number) => (ticks * 10_000) / Math.max(requests, 1)

interface LoadOptions {
  readonly connections: number
  readonly warmupSeconds: number
  readonly durationSeconds: number
}

/** A workload of walks: the mixed one, or the random combinations (bench/combos.ts) with their own warm-up. */
interface Workload {
  readonly name: string
  readonly walks: ReadonlyArray<Walk>
  readonly warmupSeconds: number
}

const walksOn = async (
  database: string,
  port: number,
  key: string,
  off: string,
  workload: Workload,
  options: Omit<LoadOptions, "warmupSeconds">
): Promise<Figures> => {
  const { walks } = workload
  const server = await startServer(database, port, { from: "bundle", env: { DROPSHELF_CACHES_OFF: off } })
  try {
    loadWalks(port, key, walks, { connections: options.connections, durationSeconds: workload.warmupSeconds })
    const before = ticksNow(server.pid!, database)
    const result = loadWalks(port, key, walks, { connections: options.connections, durationSeconds: options.durationSeconds })
    return { requestsPerSecond: result.requestsPerSecond, p99: result.p99, ...perUnit(before, ticksNow(server.pid!, database), result.total) }
  } finally {
    await stop(server)
  }
}

const sinceOn = async (database: string, port: number, key: string, off: string): Promise<Figures> => {
  const server = await startServer(database, port, { from: "bundle", env: { DROPSHELF_CACHES_OFF: off } })
  try {
    const before = ticksNow(server.pid!, database)
    const pull = await pullSince(port, key, server.pid!)
    return { requestsPerSecond: pull.rate, p99: Number.NaN, ...perUnit(before, ticksNow(server.pid!, database), pull.pulled) }
  } finally {
    await stop(server)
  }
}

/** Milliseconds a matching round spends turning 10 000 watches' queries into filters (the fifth round). */
const watchRoundMs = (enabled: boolean) => {
  const queries = Array.from({ length: 10_000 }, (_, i) => ({
    tld: ["com", "net", "io", "co.uk", "org"][i % 5]!,
    q: `word${i % 40}`,
    ...(i % 3 === 0 ? { category: "tech,finance" } : {}),
    ...(i % 4 === 0 ? { rsMin: String(i % 90) } : {})
  }))
  return Effect.runSync(Effect.gen(function*() {
    const filtersOf = yield* Watches.WatchFilters
    let last = 0
    for (let round = 0; round < 5; round++) {
      const started = performance.now()
      for (const query of queries) filtersOf(query)
      last = performance.now() - started
    }
    return last
  }).pipe(Effect.provide(RememberedWatchFilters.layer(enabled))))
}

const change = (off: number, on: number) => `${off >= on ? "+" : ""}${(((off - on) / on) * 100).toFixed(1)} %`

/** One row a cache: its figures switched off, and what it buys (every cache on against it off). */
export const measureCaches = async (
  database: string,
  port: number,
  key: string,
  options: LoadOptions & { readonly combos: Omit<Workload, "name"> }
): Promise<Array<string>> => {
  const mixed: Workload = { name: "mixed", walks: mixedWalks(idsAcross(database, MIXED_IDS)), warmupSeconds: options.warmupSeconds }
  const combos: Workload = { name: "combinations", ...options.combos }
  const lines = [
    "| cache switched off | workload | req/s on → off | p99 on → off, ms | CPU µs on → off: server; PostgreSQL | what it buys |",
    "| --- | --- | ---: | ---: | ---: | ---: |"
  ]
  for (const name of Object.keys(CACHES) as ReadonlyArray<CacheName>) {
    if (ONLY !== undefined && !ONLY.includes(name)) continue
    if (name === "watch-filters") {
      const [on, off] = [watchRoundMs(true), watchRoundMs(false)]
      lines.push(`| ${name} | a matching round of 10 000 watches, ms decoding | ${on.toFixed(1)} → ${off.toFixed(1)} | | | |`)
      console.log(lines.at(-1))
      continue
    }
    if (name === "redis-batches" && process.env.REDIS_URL === undefined) {
      lines.push(`| ${name} | not measured: the servers count in-process (REDIS_URL unset) | | | | |`)
      continue
    }
    const since = name === "since-read-ahead"
    const workload = name === "filter-columns" ? combos : mixed
    const on: Array<Figures> = []
    const off: Array<Figures> = []
    for (let pair = 0; pair < PAIRS; pair++) {
      // Alternated, on first in one pair and off first in the next.
      for (const which of pair % 2 === 0 ? ["", name] : [name, ""]) {
        const figures = since ? await sinceOn(database, port, key, which) : await walksOn(database, port, key, which, workload, options)
        ;(which === "" ? on : off).push(figures)
      }
    }
    const [onRate, offRate] = [mean(on.map((f) => f.requestsPerSecond)), mean(off.map((f) => f.requestsPerSecond))]
    const [onCpu, offCpu] = [mean(on.map((f) => f.cpuMicros)), mean(off.map((f) => f.cpuMicros))]
    const [onPg, offPg] = [mean(on.map((f) => f.postgresMicros)), mean(off.map((f) => f.postgresMicros))]
    const p99 = since ? "" : `${mean(on.map((f) => f.p99)).toFixed(1)} → ${mean(off.map((f) => f.p99)).toFixed(1)}`
    // A cache saves CPU a request; the read-ahead, which costs CPU, buys rows a second.
    const buys = since ? `${change(onRate, offRate)} rows/s` : `CPU without it: server ${change(offCpu, onCpu)}, PostgreSQL ${change(offPg, onPg)}`
    const cpu = `${onCpu.toFixed(0)} → ${offCpu.toFixed(0)}; ${onPg.toFixed(0)} → ${offPg.toFixed(0)}`
    const line = `| ${name} | ${since ? "since pull, rows/s" : workload.name} | ${onRate.toFixed(0)} → ${offRate.toFixed(0)} | ${p99} | ${cpu} | ${buys} |`
    console.log(line)
    lines.push(line)
  }
  return lines
}
