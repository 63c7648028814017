/**
 * The load generator, run as its own process so that it does not share an event loop with the
 * server: `node bench/load.ts` reads a JSON config on standard input (a list of thousands of
 * paths would not fit in one argument) and prints one JSON line of results.
 *
 * A config gives either `requests`, which every connection sends in turn, or `walks`: paths each
 * followed through their first pages by `next_cursor`, as a client pages, which every
 * connection walks in turn from a starting point of its own.
 */
import autocannon from "autocannon"
import { readFileSync } from "node:fs"
import { percentileOf } from "./stats.ts"

export interface Walk {
  /** The first page's path (or a single read's). */
  readonly path: string
  /** How many pages to follow; each after the first asks for the `next_cursor` the one before gave. */
  readonly pages: number
}

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
  /** For walks: keys the connections take in turn (each its own account), instead of the one in `headers`. */
  readonly keys?: ReadonlyArray<string>
  readonly requests?: ReadonlyArray<{ readonly method?: string; readonly path: string }>
  readonly walks?: ReadonlyArray<Walk>
}

const config = JSON.parse(readFileSync(0, "utf8")) as LoadConfig

/** Bodies of the first answers that were not 200, to show what failed. */
const failures: Array<string> = []
const noteFailure = (status: number, body: string) => {
  if (status !== 200 && failures.length < 5) failures.push(`${status} ${body.slice(0, 300)}`)
}
/** Pages a walk asked for when the page before had no next one (the filter matched too few). */
let walksCutShort = 0

/** The `next_cursor` of a page, found from the end so a large page is not parsed whole. */
const nextCursorOf = (body: string): string | null => {
  const at = body.lastIndexOf(`"next_cursor":`)
  if (at < 0) return null
  const match = /^"next_cursor":\s*("(?:[^"\\]|\\.)*"|null)/.exec(body.slice(at, at + 1024))
  return match === null ? null : (JSON.parse(match[1]!) as string | null)
}

/** Pages of a walk (`pages` > 1) and single reads, whose latencies are also given apart. */
type Kind = "pages" | "reads"

interface WalkContext {
  cursor?: string | null | undefined
  /** What the response just received answered. */
  kind?: Kind | undefined
}

/**
 * One connection's requests: every walk in turn, from `start`. Every entry builds its request
 * when reached (`setupRequest`), so nothing is built up front for thousands of entries; a walk's
 * later page reads the cursor its previous answer left in the connection's context (autocannon
 * resets the context only when a connection starts its list again, between two walks).
 */
const walkRequests = (walks: ReadonlyArray<Walk>, start: number, key?: string): Array<autocannon.Request> => {
  const requests: Array<autocannon.Request> = []
  const headers = key === undefined ? undefined : { ...config.headers, authorization: `Bearer ${key}` }
  for (let i = 0; i < walks.length; i++) {
    const walk = walks[(start + i) % walks.length]!
    const separator = walk.path.includes("?") ? "&" : "?"
    for (let page = 1; page <= walk.pages; page++) {
      const last = page === walk.pages
      requests.push({
        method: "GET",
        path: walk.path,
        ...(headers === undefined ? {} : { headers }),
        setupRequest: (request, context: WalkContext) => {
          if (page === 1) return request
          const cursor = context.cursor
          context.cursor = undefined
          if (cursor === undefined || cursor === null) {
            walksCutShort++
            return request
          }
          return { ...request, path: `${walk.path}${separator}cursor=${encodeURIComponent(cursor)}` }
        },
        onResponse: (status, body, context: WalkContext) => {
          noteFailure(status, body)
          context.kind = walk.pages > 1 ? "pages" : "reads"
          if (!last) context.cursor = status === 200 ? nextCursorOf(body) : null
        }
      })
    }
  }
  return requests
}

let connectionsMade = 0
/** Each connection starts its walks at its own point, spread evenly, so they do not ask for the same pages together. */
const setupClient = (client: autocannon.Client) => {
  const walks = config.walks!
  const connection = connectionsMade++ % config.connections
  const key = config.keys === undefined ? undefined : config.keys[connection % config.keys.length]
  client.setRequests(walkRequests(walks, Math.floor((connection * walks.length) / config.connections), key))
}

/*
 * autocannon's own percentiles come from a histogram of whole milliseconds, too coarse for
 * pages answered in 5-10 ms (one millisecond is 10-20 % there). Every 2xx response's exact time
 * is kept instead, as autocannon keeps only 2xx latencies, of the requests sent after the
 * warm-up. One run, the warm-up its first seconds: after autocannon's own warm-up, a run of its
 * own, new connections all start their walks at once, a burst of first pages no steady
 * population of callers makes. Called without a callback, autocannon returns its tracker made
 * thenable (lib/init.js), which its types declare as a bare promise.
 */
const latencies: Array<number> = []
const latenciesOf: Record<Kind, Array<number>> = { pages: [], reads: [] }
const warmupMs = config.amount === undefined ? (config.warmupSeconds ?? 0) * 1000 : 0
const durationSeconds = config.durationSeconds ?? 10
/** Responses to requests sent after the warm-up, by status. */
const statuses = new Map<number, number>()
const instance = autocannon({
  url: config.url,
  connections: config.connections,
  ...(config.amount === undefined ? { duration: warmupMs / 1000 + durationSeconds } : { amount: config.amount }),
  headers: config.headers,
  ...(config.walks === undefined
    ? {
      requests: (config.requests ?? []).map((request) => ({
        method: (request.method ?? "GET") as "GET",
        path: request.path,
        onResponse: noteFailure
      }))
    }
    // Replaced by each connection's own list in setupClient.
    : { requests: walkRequests(config.walks.slice(0, 1), 0), setupClient })
}) as unknown as autocannon.Instance & Promise<autocannon.Result>
// autocannon runs a request's onResponse, which notes the walk's kind in the connection's
// context, just before it emits "response" with the time.
const kindOf = (client: autocannon.Client): Kind | undefined =>
  (client as unknown as { readonly requestIterator?: { readonly context?: WalkContext } }).requestIterator?.context?.kind
const started = performance.now()
instance.on("response", (client, statusCode, _bytes, milliseconds) => {
  if (performance.now() - milliseconds - started < warmupMs) return
  statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1)
  if (statusCode < 200 || statusCode >= 300) return
  latencies.push(milliseconds)
  const kind = kindOf(client)
  if (kind !== undefined) latenciesOf[kind].push(milliseconds)
})
const result = await instance

/** Nearest-rank percentile of sorted `values`, to a hundredth of a millisecond. */
const hundredthsOf = (values: ReadonlyArray<number>, p: number) => Math.round(percentileOf(values, p) * 100) / 100
for (const values of [latencies, latenciesOf.pages, latenciesOf.reads]) values.sort((a, b) => a - b)
const percentile = (p: number) => hundredthsOf(latencies, p)
const summaryOf = (values: ReadonlyArray<number>) => ({ count: values.length, p50: hundredthsOf(values, 0.5), p99: hundredthsOf(values, 0.99) })
const kinds = config.walks === undefined ? undefined : { pages: summaryOf(latenciesOf.pages), reads: summaryOf(latenciesOf.reads) }

const total = [...statuses.values()].reduce((sum, count) => sum + count, 0)
console.log(JSON.stringify({
  requestsPerSecond: config.amount === undefined ? total / durationSeconds : result.requests.average,
  p50: percentile(0.5),
  p99: percentile(0.99),
  total,
  non2xx: total - latencies.length,
  errors: result.errors,
  timeouts: result.timeouts,
  statuses: Object.fromEntries(statuses),
  failures,
  walksCutShort,
  kinds
}))
