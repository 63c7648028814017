import { PgPool } from "@effect/sql-pg"
import { Cause, Context, Duration, Effect, Layer, Metric, Redacted, Schedule, type Scope } from "effect"
import { hostname } from "node:os"
import { int } from "./Rows.ts"

/*
 * The database connection pool's usage, as OpenTelemetry's database client metrics name it
 * (semantic conventions, "Connection pools"): `db.client.connection.count` by
 * `db.client.connection.state` (`used`, `idle`), `db.client.connection.max` and, where the pool
 * tells, `db.client.connection.pending_requests`, each with `db.client.connection.pool.name`.
 * Each deployment provides `PoolMetrics`; a process exports it (`layerExport`) only while some
 * exporter collects metrics (docs/decisions/0700-observability.md).
 */

/** What a pool's connections are doing at one moment. */
export interface Usage {
  readonly used: number
  readonly idle: number
  /** Requests waiting for a connection; undefined where the pool does not tell. */
  readonly pending: number | undefined
}

/** A pool as its series name it: `name` is `db.client.connection.pool.name`, `max` the most connections it opens. */
export interface Pool {
  readonly name: string
  readonly max: number
}

/**
 * Gauges rather than the conventions' UpDownCounters: Effect renders a non-monotonic counter as a
 * Prometheus `counter`, which a current count is not; a gauge carries the same value.
 */
const seriesOf = (pool: Pool) => {
  const attributes = { "db.client.connection.pool.name": pool.name }
  const count = (state: "used" | "idle") =>
    Metric.gauge("db.client.connection.count", {
      description: "Connections of the database pool in each state: used (lent to a statement, a transaction or a listener) or idle",
      attributes: { ...attributes, "db.client.connection.state": state, unit: "{connection}" }
    })
  return {
    used: count("used"),
    idle: count("idle"),
    max: Metric.gauge("db.client.connection.max", {
      description: "The most connections the database pool opens",
      attributes: { ...attributes, unit: "{connection}" }
    }),
    pending: Metric.gauge("db.client.connection.pending_requests", {
      description: "Requests waiting for a connection of the database pool",
      attributes: { ...attributes, unit: "{request}" }
    })
  }
}

interface Registration {
  readonly remove: () => void
}

/**
 * The pool's series in the registry of `context`, each read from `read` whenever metrics are
 * collected (a scrape, an OTLP export), so nothing is updated between collections.
 */
const registerUnsafe = (pool: Pool, read: () => Usage, context: Context.Context<never>): Registration => {
  const series = seriesOf(pool)
  const gauge = (metric: Metric.Gauge<number>, value: () => number): Registration =>
    Metric.registerUnsafe(metric, context, { get: () => ({ value: value() }), update: () => {}, modify: () => {} })
  const registrations = [
    gauge(series.used, () => read().used),
    gauge(series.idle, () => read().idle),
    gauge(series.max, () => pool.max)
  ]
  if (read().pending !== undefined) registrations.push(gauge(series.pending, () => read().pending ?? 0))
  return { remove: () => registrations.forEach((registration) => registration.remove()) }
}

/** A deployment's pool, exported as metrics on demand. */
export class PoolMetrics extends Context.Service<PoolMetrics, {
  /** Exports the pool's usage until the scope closes. */
  readonly export: Effect.Effect<void, never, Scope.Scope>
}>()("@dropshelf/store-sql/PoolMetrics") {}

/** Exports the deployment's pool while the layer lives: what a process builds when a metrics exporter is on. */
export const layerExport: Layer.Layer<never, never, PoolMetrics> = Layer.effectDiscard(
  Effect.gen(function*() {
    const metrics = yield* PoolMetrics
    yield* metrics.export
  })
)

/** A pool whose counts live in this process: read as they are at each collection. */
export const live = (pool: Pool, read: () => Usage): PoolMetrics["Service"] =>
  PoolMetrics.of({
    export: Effect.gen(function*() {
      const registration = registerUnsafe(pool, read, yield* Effect.context<never>())
      yield* Effect.addFinalizer(() => Effect.sync(registration.remove))
    })
  })

/** How often a server pool is sampled while exported. */
export const SAMPLE_INTERVAL = Duration.seconds(5)

/** What the sampling connection calls itself in `pg_stat_activity`. */
export const SAMPLER_APPLICATION_NAME = "dropshelf metrics"

/**
 * The pool's backends by state. `idle` waits for a statement; `active`, `idle in transaction`
 * and the rest are lent out. A backend that last ran LISTEN is the key-change listener's, held
 * from the pool for good although PostgreSQL shows it idle between notifications.
 */
const USAGE_STATEMENT = `SELECT
  count(*) FILTER (WHERE state = 'idle' AND query NOT LIKE 'LISTEN %')::int AS idle,
  count(*) FILTER (WHERE state <> 'idle' OR query LIKE 'LISTEN %')::int AS used
FROM pg_stat_activity
WHERE application_name = $1`

/**
 * `db.client.connection.pool.name` for a server pool, as the conventions suggest when the pool
 * has no name of its own: `host:port/database`, never the user or password.
 */
export const serverPoolName = (url: string): string => {
  const parsed = new URL(url)
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || decodeURIComponent(parsed.username) || "postgres"
  return `${parsed.hostname}:${parsed.port || "5432"}/${database}`
}

/**
 * An `application_name` no other pool shares, so `pg_stat_activity` tells a pool's connections
 * from every other instance's: a random token (which survives PostgreSQL's cut at 63 bytes),
 * then the pid and host for the operator reading it. Printable ASCII only, as PostgreSQL keeps it.
 */
export const uniqueApplicationName = (): string => {
  const token = Array.from(crypto.getRandomValues(new Uint8Array(4)), (byte) => byte.toString(16).padStart(2, "0")).join("")
  return `dropshelf ${token} ${process.pid}@${hostname()}`.replace(/[^\x20-\x7e]/g, "?").slice(0, 63)
}

/**
 * A server pool, whose counts @effect/sql-pg keeps private: PostgreSQL's own view of the
 * backends named `applicationName`, sampled every `interval` over a connection of its own (a
 * sample taken through the pool would queue behind the requests exactly when the pool is
 * exhausted, and count itself as used). Requests waiting for a connection are not visible there:
 * no `pending_requests` series. While sampling fails the series are withdrawn, not left stale.
 */
export const sampled = (
  options: { readonly pool: Pool; readonly url: string; readonly applicationName: string; readonly interval?: Duration.Input }
): PoolMetrics["Service"] =>
  PoolMetrics.of({
    export: Effect.gen(function*() {
      const context = yield* Effect.context<never>()
      const sampler = yield* PgPool.make({
        url: Redacted.make(options.url),
        applicationName: SAMPLER_APPLICATION_NAME,
        maxConnections: 1,
        connectTimeout: Duration.seconds(2),
        idleTimeout: Duration.minutes(1)
      })
      let latest: Usage = { used: 0, idle: 0, pending: undefined }
      let registration: Registration | undefined
      let failing = false
      const withdraw = () => {
        registration?.remove()
        registration = undefined
      }
      yield* Effect.addFinalizer(() => Effect.sync(withdraw))
      const sample = sampler.use((connection) => connection.query(USAGE_STATEMENT, [options.applicationName])).pipe(
        Effect.timeout(Duration.seconds(2)),
        Effect.map((result): Usage => ({ used: int(result.rows[0]?.used), idle: int(result.rows[0]?.idle), pending: undefined }))
      )
      yield* sample.pipe(
        Effect.flatMap((usage) =>
          Effect.sync(() => {
            latest = usage
            registration ??= registerUnsafe(options.pool, () => latest, context)
            failing = false
          })
        ),
        Effect.catchCause((cause) =>
          Effect.suspend(() => {
            withdraw()
            if (failing) return Effect.void
            failing = true
            return Effect.logWarning(`dropshelf: database pool metrics withdrawn until pg_stat_activity answers again: ${oneLine(Cause.squash(cause))}`)
          })
        ),
        Effect.repeat(Schedule.spaced(options.interval ?? SAMPLE_INTERVAL)),
        Effect.forkScoped
      )
    }).pipe(
      // The pool of one connects lazily; should it still fail to open, the server serves on unmeasured.
      Effect.catchCause((cause) => Effect.logWarning(`dropshelf: no database pool metrics: ${oneLine(Cause.squash(cause))}`))
    )
  })

const oneLine = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause)).replace(/\s+/g, " ").trim()
