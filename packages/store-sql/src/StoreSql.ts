import {
  AccountStore,
  HoldStore,
  IdempotencyStore,
  KeyStore,
  ListingStore,
  PasskeyStore,
  AuthorizationStore,
  RevealStore,
  SecurityLogStore,
  SessionStore,
  WatchStore
} from "@dropshelf/core"
import { PgClient } from "@effect/sql-pg"
import { Cause, Config, Context, Duration, Effect, Layer, Option, Queue } from "effect"
import { SqlClient } from "effect/sql"
import * as CopyLoader from "./CopyLoader.ts"
import * as DataDirLock from "./DataDirLock.ts"
import { CHANNEL, KeyLookups } from "./KeyLookups.ts"
import { type EmbeddedDump, layerPgliteClient, type PgliteSettings } from "./EmbeddedDatabase.ts"
import * as Migrations from "./Migrations.ts"
import { DEFAULT_MAX_CONNECTIONS } from "./PoolDefaults.ts"
import * as PoolMetrics from "./PoolMetrics.ts"
import * as ReadReplicas from "./ReadReplicas.ts"
import { layerPgClient, refusedPoolOptions, type ServerPoolOptions } from "./ServerPool.ts"
import * as SqlAccountStore from "./SqlAccountStore.ts"
import * as SqlHoldStore from "./SqlHoldStore.ts"
import * as SqlIdempotencyStore from "./SqlIdempotencyStore.ts"
import * as SqlKeyStore from "./SqlKeyStore.ts"
import * as SqlListingStore from "./SqlListingStore.ts"
import * as SqlRevealStore from "./SqlRevealStore.ts"
import * as SqlAuthorizationStore from "./SqlAuthorizationStore.ts"
import * as SqlPasskeyStore from "./SqlPasskeyStore.ts"
import * as SqlSecurityLogStore from "./SqlSecurityLogStore.ts"
import * as SqlSessionStore from "./SqlSessionStore.ts"
import * as SpooledSnapshot from "./SpooledSnapshot.ts"
import * as SqlWatchStore from "./SqlWatchStore.ts"
import { oneLine, StoreOpenError } from "./StoreOpenError.ts"

export {
  EmbeddedDump,
  layerPgliteClient,
  openPglite,
  PGLITE_COMMAND_SETTINGS,
  type PgliteSettings,
  RestoreRefused,
  restorePglite
} from "./EmbeddedDatabase.ts"
export { DEFAULT_MAX_CONNECTIONS, STATEMENTS_PER_CONNECTION } from "./PoolDefaults.ts"
export { layerPgClient, layerServerClient, pipelining, type ServerPoolOptions } from "./ServerPool.ts"
export { StoreOpenError } from "./StoreOpenError.ts"

/** Every storage port of the core. */
export type Stores =
  | ListingStore.ListingStore
  | RevealStore.RevealStore
  | HoldStore.HoldStore
  | AccountStore.AccountStore
  | KeyStore.KeyStore
  | IdempotencyStore.IdempotencyStore
  | WatchStore.WatchStore
  | SessionStore.SessionStore
  | PasskeyStore.PasskeyStore
  | SecurityLogStore.SecurityLogStore
  | AuthorizationStore.AuthorizationStore

/** What every deployment layer provides: every storage port and the SqlClient they run on. */
export type Services = Stores | SqlClient.SqlClient

/** Default embedded data directory, relative to the working directory. */
export const DEFAULT_DATA_DIR = DataDirLock.DEFAULT_DATA_DIR

/**
 * Every storage port over whatever SqlClient is in context (migrations are not run here), with the
 * key look-up cache they share.
 */
export const layerStores: Layer.Layer<Stores | KeyLookups, never, SqlClient.SqlClient> = Layer.mergeAll(
  SqlListingStore.layer,
  SqlRevealStore.layer,
  SqlHoldStore.layer,
  SqlAccountStore.layer,
  SqlKeyStore.layer,
  SqlIdempotencyStore.layer,
  SqlWatchStore.layer,
  SqlSessionStore.layer,
  SqlSecurityLogStore.layer,
  SqlPasskeyStore.layer,
  SqlAuthorizationStore.layer
).pipe(Layer.provideMerge(KeyLookups.layer))

/**
 * Drops the cached key look-ups whenever the database announces a revoked key or a changed
 * plan (a trigger of migration 0002 notifies `dropshelf_auth`), so an operator's change made
 * from another process takes effect on this server at once. While the listening connection is
 * down, a look-up lives out its TTL (KeyLookups.TTL_MS); the cache is cleared again on reconnecting.
 */
export const layerAuthListener: Layer.Layer<never, never, PgClient.PgClient | KeyLookups> = Layer.effectDiscard(
  Effect.gen(function*() {
    const pg = yield* PgClient.PgClient
    const cache = yield* KeyLookups
    const session = Effect.gen(function*() {
      const notifications = yield* pg.listen(CHANNEL)
      cache.invalidate()
      while (true) {
        yield* Queue.take(notifications)
        cache.invalidate()
      }
    }).pipe(Effect.scoped)
    yield* session.pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning(`dropshelf: not listening for key and plan changes; retrying in 1 s: ${oneLine(Cause.squash(cause))}`)
      ),
      Effect.andThen(Effect.sleep(Duration.seconds(1))),
      Effect.forever,
      Effect.forkScoped
    )
  })
)

/** Applies pending migrations; returns the names applied by this call. */
export const migrate: Effect.Effect<ReadonlyArray<string>, never, SqlClient.SqlClient> = Migrations.migrate

const CURSOR_SECRET_KEY = "cursor_secret"
const CURSOR_SECRET_BYTES = 32

const toHex = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
const fromHex = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16))

/**
 * The deployment's cursor-signing secret: 32 random bytes generated by the first instance that
 * asks and kept in `settings`, so every instance signs and verifies cursors alike.
 */
export const cursorSecret: Effect.Effect<Uint8Array, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const candidate = toHex(crypto.getRandomValues(new Uint8Array(CURSOR_SECRET_BYTES)))
  yield* sql`INSERT INTO settings (key, value) VALUES (${CURSOR_SECRET_KEY}, ${candidate}) ON CONFLICT (key) DO NOTHING`
  const rows = yield* sql<{ value: string }>`SELECT value FROM settings WHERE key = ${CURSOR_SECRET_KEY}`
  return fromHex(rows[0]!.value)
}).pipe(Effect.orDie)

/** Embedded deployment: every storage port (`layerStoresEmbedded`) and the SqlClient over PGlite in `dataDir`, and its dump. */
export const layerPglite = (
  options: { readonly dataDir: string; readonly settings?: PgliteSettings }
): Layer.Layer<Services | EmbeddedDump | PoolMetrics.PoolMetrics, StoreOpenError> =>
  layerStoresEmbedded.pipe(Layer.provideMerge(layerPgliteClient(options)))

/**
 * Every storage port as `layerStores` gives it, for the embedded database's one connection: its
 * bulk snapshot is read into a file before the first chunk is handed on, so a slow client
 * never holds the connection (SpooledSnapshot.ts).
 */
export const layerStoresEmbedded: Layer.Layer<Stores | KeyLookups, never, SqlClient.SqlClient> = Layer.effectContext(
  Effect.map(Layer.build(layerStores), (context) =>
    Context.add(context, ListingStore.ListingStore, SpooledSnapshot.spooled(Context.get(context, ListingStore.ListingStore))))
)


/**
 * Server deployment: every storage port and the SqlClient over the PostgreSQL at `url`, listening
 * for key and plan changes made by other processes. The listener keeps one of the pool's
 * `maxConnections` (default 10) for itself, so the pool needs at least two: with one, every
 * statement would wait forever for a connection; it is refused as a `StoreOpenError` instead,
 * as is a `statementsPerConnection` below one.
 */
export const layerServer = (
  options: ServerPoolOptions & ReplicaOptions
): Layer.Layer<Services | PoolMetrics.PoolMetrics, StoreOpenError> => {
  const refused = refusedPoolOptions(options)
  const readUrls = options.readUrls ?? []
  return refused !== undefined
    ? Layer.unwrap(Effect.fail(new StoreOpenError({ reason: "OpenFailed", message: refused })))
    : layerAuthListener.pipe(
      Layer.provideMerge(layerStores),
      Layer.provideMerge(readUrls.length === 0 ? Layer.empty : layerReplicas(readUrls, options)),
      Layer.provideMerge(Layer.merge(layerPgClient(options), CopyLoader.layer(options.url)))
    )
}

/** Streaming replicas that take the server's reads (ReadReplicas.ts); none by default. */
export interface ReplicaOptions {
  /** `DATABASE_READ_URL`: one URL a replica. */
  readonly readUrls?: ReadonlyArray<string> | undefined
  /** `DROPSHELF_READ_MAX_LAG_MS`: a replica further behind takes no reads. */
  readonly readMaxLagMs?: number | undefined
}

/** The replicas over the primary's pool, and the pool's metrics with each replica's state beside them. */
const layerReplicas = (readUrls: ReadonlyArray<string>, options: ServerPoolOptions & ReplicaOptions) =>
  Layer.effectContext(Effect.gen(function*() {
    const replicas = yield* ReadReplicas.make({
      primaryUrl: options.url,
      urls: readUrls,
      maxLagMs: options.readMaxLagMs,
      maxConnections: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
      statementsPerConnection: options.statementsPerConnection
    })
    const pool = yield* PoolMetrics.PoolMetrics
    return Context.make(ReadReplicas.ReadReplicas, replicas).pipe(
      Context.add(PoolMetrics.PoolMetrics, PoolMetrics.PoolMetrics.of({
        export: Effect.gen(function*() {
          yield* pool.export
          yield* ReadReplicas.exportMetrics(replicas)
          // Each replica's pool as the primary's is measured, named by its own host:port/database.
          for (const replica of replicas.replicas) {
            yield* PoolMetrics.sampled({
              pool: { name: replica.name, max: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS },
              url: replica.url,
              applicationName: replica.applicationName
            }).export
          }
        })
      }))
    )
  }))

/** `DATABASE_URL` set (non-empty): the server; otherwise PGlite in `DROPSHELF_DATA_DIR` (default `./.dropshelf`). */
export const layerFromEnv: Layer.Layer<Services | PoolMetrics.PoolMetrics, StoreOpenError> = Layer.unwrap(
  Effect.gen(function*() {
    const url = yield* Config.String("DATABASE_URL").pipe(Config.option)
    const dataDir = yield* Config.String("DROPSHELF_DATA_DIR").pipe(Config.withDefault(DEFAULT_DATA_DIR))
    return Option.isSome(url) && url.value.trim() !== ""
      ? layerServer({ url: url.value.trim() })
      : layerPglite({ dataDir: dataDir.trim() === "" ? DEFAULT_DATA_DIR : dataDir })
  }).pipe(Effect.orDie)
)
