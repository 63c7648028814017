/**
 * The load generator, run as its own process so that it does not share an event loop with the
 * server: `node bench/load.ts '<json config>'` prints one JSON line of results.
 */
import autocannon from "autocannon"

interface LoadConfig {
  readonly url: string
  readonly connections: number
  /** Seconds to run, or… */
  readonly durationSeconds?: number
  /** …a number of requests to send. */
  readonly amount?: number
  /** Seconds of the same load before sampling starts, so that the JIT and the heap settle first. */
  readonly warmupSeconds?: number
  readonly headers: Record<string, string>
  readonly requests: ReadonlyArray<{ readonly method?: string; readonly path: string }>
}

const config = JSON.parse(process.argv[2]!) as LoadConfig

/*
 * autocannon's own percentiles come from a histogram of whole milliseconds, too coarse for
 * pages answered in 5-10 ms (one millisecond is 10-20 % there). Every 2xx response's exact time
 * is kept instead, as autocannon keeps only 2xx latencies, from the measured run alone: the
 * warm-up reports to a tracker of its own. Called without a callback (the only form that runs
 * the warm-up), autocannon returns its tracker made thenable (lib/init.js), which its types
 * declare as a bare promise.
 */
const latencies: Array<number> = []
const instance = autocannon({
  url: config.url,
  connections: config.connections,
  ...(config.amount === undefined ? { duration: config.durationSeconds ?? 10 } : { amount: config.amount }),
  ...(config.warmupSeconds === undefined ? {} : { warmup: { connections: config.connections, duration: config.warmupSeconds } }),
  headers: config.headers,
  requests: config.requests.map((request) => ({ method: (request.method ?? "GET") as "GET", path: request.path }))
}) as unknown as autocannon.Instance & Promise<autocannon.Result>
instance.on("response", (_client, statusCode, _bytes, milliseconds) => {
  if (statusCode >= 200 && statusCode < 300) latencies.push(milliseconds)
})
const result = await instance

latencies.sort((a, b) => a - b)
/** Nearest-rank percentile, to a hundredth of a millisecond. */
const percentile = (p: number) =>
  latencies.length === 0 ? 0 : Math.round(latencies[Math.max(0, Math.ceil(p * latencies.length) - 1)]! * 100) / 100

console.log(JSON.stringify({
  requestsPerSecond: result.requests.average,
  p50: percentile(0.5),
  p99: percentile(0.99),
  total: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts
}))
