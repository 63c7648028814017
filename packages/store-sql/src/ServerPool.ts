import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import * as CopyLoader from "./CopyLoader.ts"
import { DEFAULT_MAX_CONNECTIONS, pipelining } from "./PoolDefaults.ts"
import * as PoolMetrics from "./PoolMetrics.ts"
import { oneLine, StoreOpenError } from "./StoreOpenError.ts"

export { pipelining } from "./PoolDefaults.ts"

/** The server deployment's pool: where, how many connections, how many statements a connection carries at once. */
export interface ServerPoolOptions {
  readonly url: string
  /** Connections at most, the key listener's among them (default 10); at least 2. */
  readonly maxConnections?: number | undefined
  /** Statements pipelined on a connection at most (default 8); 1 pipelines none. */
  readonly statementsPerConnection?: number | undefined
}

/**
 * The server deployment's pool to PostgreSQL 15+, checked on open, as both `PgClient` (which
 * the key-change listener needs) and `SqlClient` (which the stores use), and its metrics. Its
 * connections carry an `application_name` no other pool shares (`dropshelf <token> <pid>@<host>`),
 * which is how the metrics find them in `pg_stat_activity`.
 */
export const layerPgClient = (
  options: ServerPoolOptions
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient | PoolMetrics.PoolMetrics, StoreOpenError> => {
  const applicationName = PoolMetrics.uniqueApplicationName()
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS
  const client = PgClient.layerFrom(
    Effect.gen(function*() {
      const client = yield* PgClient.make({
        url: Redacted.make(options.url),
        applicationName,
        // Short statements: JIT compiling one (it triggers on a high estimate, as for a rare
        // search term) costs far more than it could ever save here.
        startupParameters: { jit: "off" },
        maxConnections,
        ...pipelining(options.statementsPerConnection)
      })
      yield* client`SELECT 1`
      return client
    }).pipe(
      Effect.mapError((cause) =>
        new StoreOpenError({ reason: "ConnectionFailed", message: `Could not connect to DATABASE_URL: ${oneLine(cause)}` })
      )
    )
  )
  const metrics = Layer.succeed(
    PoolMetrics.PoolMetrics,
    PoolMetrics.sampled({ pool: { name: PoolMetrics.serverPoolName(options.url), max: maxConnections }, url: options.url, applicationName })
  )
  return Layer.merge(client, metrics)
}

/**
 * The SqlClient of the server deployment: a connection pool to PostgreSQL 15+, checked on open,
 * and the import's COPY loader on the same server (CopyLoader.ts).
 */
export const layerServerClient = (
  options: ServerPoolOptions
): Layer.Layer<SqlClient.SqlClient | CopyLoader.CopyLoader | PoolMetrics.PoolMetrics, StoreOpenError> =>
  Layer.merge(layerPgClient(options), CopyLoader.layer(options.url))

/** Why `options` cannot make a pool, if they cannot. */
export const refusedPoolOptions = (options: ServerPoolOptions): string | undefined => {
  const { maxConnections, statementsPerConnection } = options
  if (maxConnections !== undefined && !(Number.isInteger(maxConnections) && maxConnections >= 2)) {
    return `maxConnections must be an integer of at least 2 (one connection listens for key and plan changes); got ${maxConnections}`
  }
  if (statementsPerConnection !== undefined && !(Number.isInteger(statementsPerConnection) && statementsPerConnection >= 1)) {
    return `statementsPerConnection must be an integer of at least 1; got ${statementsPerConnection}`
  }
  return undefined
}
