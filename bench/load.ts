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

const result = await autocannon({
  url: config.url,
  connections: config.connections,
  ...(config.amount === undefined ? { duration: config.durationSeconds ?? 10 } : { amount: config.amount }),
  ...(config.warmupSeconds === undefined ? {} : { warmup: { connections: config.connections, duration: config.warmupSeconds } }),
  headers: config.headers,
  requests: config.requests.map((request) => ({ method: (request.method ?? "GET") as "GET", path: request.path }))
})

console.log(JSON.stringify({
  requestsPerSecond: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  total: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts
}))
