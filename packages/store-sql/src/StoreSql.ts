import type { PGlite } from "@electric-sql/pglite"
import { AccountStore, HoldStore, IdempotencyStore, KeyStore, ListingStore, RevealStore, WatchStore } from "@dropshelf/core"
import { PgClient } from "@effect/sql-pg"
import { Cause, Config, Context, Duration, Effect, Layer, Option, Queue, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync, readdirSync, rmSync } from "node:fs"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { gzip } from "node:zlib"
import * as AuthCache from "./AuthCache.ts"
import * as CopyLoader from "./CopyLoader.ts"
import * as DataDirLock from "./DataDirLock.ts"
import * as Migrations from "./Migrations.ts"
import * as PgliteClient from "./PgliteClient.ts"
import { DEFAULT_MAX_CONNECTIONS, STATEMENTS_PER_CONNECTION } from "./PoolDefaults.ts"
import * as PoolMetrics from "./PoolMetrics.ts"
import * as SqlAccountStore from "./SqlAccountStore.ts"
import * as SqlHoldStore from "./SqlHoldStore.ts"
import * as SqlIdempotencyStore from "./SqlIdempotencyStore.ts"
import * as SqlKeyStore from "./SqlKeyStore.ts"
import * as SqlListingStore from "./SqlListingStore.ts"
import * as SqlRevealStore from "./SqlRevealStore.ts"
import * as SpooledSnapshot from "./SpooledSnapshot.ts"
import * as SqlWatchStore from "./SqlWatchStore.ts"

/** Every storage port of the core. */
export type Stores =
  | ListingStore.ListingStore
  | RevealStore.RevealStore
  | HoldStore.HoldStore
  | AccountStore.AccountStore
  | KeyStore.KeyStore
  | IdempotencyStore.IdempotencyStore
  | WatchStore.WatchStore

/** What every deployment layer provides: every storage port and the SqlClient they run on. */
export type Services = Stores | SqlClient.SqlClient

/** The database could not be opened; `message` is one line, fit for an operator's terminal. */
export class StoreOpenError extends Schema.TaggedError<StoreOpenError>()("StoreOpenError", {
  reason: Schema.Literals(["DataDirInUse", "OpenFailed", "ConnectionFailed"]),
  message: Schema.String
}) {}

/**
 * A consistent copy of the embedded database while it is open: PGlite's own dump of its data
 * directory (a gzipped tar), taken between statements, never inside a transaction. Only the
 * embedded deployment provides it; a PostgreSQL server is backed up with `pg_dump`.
 */
export class EmbeddedDump extends Context.Service<EmbeddedDump, {
  readonly dump: Effect.Effect<Uint8Array>
}>()("@dropshelf/store-sql/EmbeddedDump") {}

/** Why a restore was refused: the target is not empty, or is in use. */
export class RestoreRefused extends Schema.TaggedError<RestoreRefused>()("RestoreRefused", {
  message: Schema.String
}) {}

/**
 * Locks the data directory `dir` for this process until the scope closes; a directory another
 * live process holds is refused `DataDirInUse`, the message naming the holder and then `advice`.
 */
const lockDataDir = (dir: string, advice: string) =>
  Effect.gen(function*() {
    const lock = yield* Effect.acquireRelease(
      Effect.try({
        try: () => DataDirLock.acquire(dir),
        catch: (cause) =>
          new StoreOpenError({ reason: "OpenFailed", message: `Could not lock the data directory ${dir}: ${oneLine(cause)}` })
      }),
      (lock) => Effect.sync(() => lock._tag === "Acquired" && lock.release())
    )
    if (lock._tag === "Held") {
      return yield* new StoreOpenError({
        reason: "DataDirInUse",
        message: `The data directory ${dir} is in use by process ${lock.pid} (lock file ${lock.lockPath}); ${advice}`
      })
    }
  })

/**
 * Restores a dump of `EmbeddedDump` into the data directory `dataDir`, which must hold no
 * database yet; the directory is locked meanwhile, as an open would lock it.
 */
export const restorePglite = (dataDir: string, dump: Uint8Array): Effect.Effect<void, StoreOpenError | RestoreRefused> =>
  Effect.scoped(Effect.gen(function*() {
    const dir = resolve(dataDir)
    const pgdata = join(dir, "pgdata")
    yield* lockDataDir(dir, "a restore needs an empty data directory no process holds")
    if (existsSync(pgdata) && readdirSync(pgdata).length > 0) {
      return yield* new RestoreRefused({
        message: `The data directory ${dir} already holds a database; restore only into an empty one (a new DROPSHELF_DATA_DIR, or move ${pgdata} aside first)`
      })
    }
    // A restore that fails part-way leaves no half-written database behind.
    yield* Effect.addFinalizer((exit) => exit._tag === "Failure" ? Effect.sync(() => rmSync(pgdata, { recursive: true, force: true })) : Effect.void)
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const [{ PGlite }, { btree_gist }, { pg_trgm }] = await Promise.all([
            import("@electric-sql/pglite"),
            import("@electric-sql/pglite/contrib/btree_gist"),
            import("@electric-sql/pglite/contrib/pg_trgm")
          ])
          return PGlite.create({ dataDir: pgdata, loadDataDir: new Blob([dump as Uint8Array<ArrayBuffer>]), extensions: { btree_gist, pg_trgm } })
        },
        catch: (cause) => {
          const detail = oneLine(cause)
          return new RestoreRefused({
            message: `The file is not a dropshelf backup PGlite can load${detail === "" ? " (not a gzipped tar of a data directory)" : `: ${detail}`}`
          })
        }
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    // The restored database must answer before the restore counts as done.
    yield* Effect.tryPromise({
      try: () => db.query("SELECT count(*) FROM effect_sql_migrations"),
      catch: (cause) => new RestoreRefused({ message: `The restored database does not answer as a dropshelf database: ${oneLine(cause)}` })
    })
  }))

const gzipAsync = promisify(gzip)

/** Default embedded data directory, relative to the working directory. */
export const DEFAULT_DATA_DIR = DataDirLock.DEFAULT_DATA_DIR

/**
 * Every storage port over whatever SqlClient is in context (migrations are not run here), with the
 * key look-up cache they share.
 */
export const layerStores: Layer.Layer<Stores | AuthCache.AuthCache, never, SqlClient.SqlClient> = Layer.mergeAll(
  SqlListingStore.layer,
  SqlRevealStore.layer,
  SqlHoldStore.layer,
  SqlAccountStore.layer,
  SqlKeyStore.layer,
  SqlIdempotencyStore.layer,
  SqlWatchStore.layer
).pipe(Layer.provideMerge(AuthCache.AuthCache.layer))

/**
 * Drops the cached key look-ups whenever the database announces a revoked key or a changed
 * plan (a trigger of migration 0002 notifies `dropshelf_auth`), so an operator's change made
 * from another process takes effect on this server at once. While the listening connection is
 * down, a look-up lives out its TTL (AuthCache.TTL_MS); the cache is cleared again on reconnecting.
 */
export const layerAuthListener: Layer.Layer<never, never, PgClient.PgClient | AuthCache.AuthCache> = Layer.effectDiscard(
  Effect.gen(function*() {
    const pg = yield* PgClient.PgClient
    const cache = yield* AuthCache.AuthCache
    const session = Effect.gen(function*() {
      const notifications = yield* pg.listen(AuthCache.CHANNEL)
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

const oneLine = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause)).replace(/\s+/g, " ").trim()

/**
 * Server settings for an embedded database, passed as `-c name=value` at start. A process that
 * runs one command and exits wants `PGLITE_COMMAND_SETTINGS`.
 */
export type PgliteSettings = Readonly<Record<string, string>>

/**
 * What a one-command process opens the embedded database with: Postgres zeroes all of
 * `shared_buffers` at start, which is most of the open's CPU time and
 * memory, while one command touches a few pages (docs/decisions/0300-cli.md).
 */
export const PGLITE_COMMAND_SETTINGS: PgliteSettings = { shared_buffers: "16MB" }

/** PGlite and its extensions, loaded only by a process that opens the embedded database. */
const createPglite = async (options: { readonly dataDir?: string; readonly settings?: PgliteSettings }): Promise<PGlite> => {
  const [{ PGlite }, { btree_gist }, { pg_trgm }] = await Promise.all([
    import("@electric-sql/pglite"),
    import("@electric-sql/pglite/contrib/btree_gist"),
    import("@electric-sql/pglite/contrib/pg_trgm")
  ])
  const settings = Object.entries(options.settings ?? {}).flatMap(([name, value]) => ["-c", `${name}=${value}`])
  return PGlite.create({
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(settings.length === 0 ? {} : { startParams: [...PGlite.defaultStartParams, ...settings] }),
    extensions: { btree_gist, pg_trgm }
  })
}

/** Opens PGlite on `pgdataDir` (in memory when undefined) with the extensions the schema uses. */
export const openPglite = (pgdataDir: string | undefined, settings?: PgliteSettings) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => createPglite({ ...(pgdataDir === undefined ? {} : { dataDir: pgdataDir }), ...(settings === undefined ? {} : { settings }) }),
      catch: (cause) =>
        new StoreOpenError({
          reason: "OpenFailed",
          message: `Could not open the embedded database${pgdataDir === undefined ? "" : ` in ${pgdataDir}`}: ${oneLine(cause)}`
        })
    }),
    (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
  )

/**
 * The SqlClient of the embedded deployment: PGlite persisted in `<dataDir>/pgdata`, opened by
 * this process alone (`<dataDir>/dropshelf.lock` names the holder; a second process is refused).
 */
export const layerPgliteClient = (
  options: { readonly dataDir: string; readonly settings?: PgliteSettings }
): Layer.Layer<SqlClient.SqlClient | EmbeddedDump | PoolMetrics.PoolMetrics, StoreOpenError> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const dir = resolve(options.dataDir)
      yield* lockDataDir(dir, "stop that process, or point DROPSHELF_DATA_DIR elsewhere")
      const db = yield* openPglite(join(dir, "pgdata"), options.settings)
      const { client, exclusive, usage } = yield* PgliteClient.makeWithExclusive(db)
      // One backend behind one permit: the permit's holders and waiters are the pool's exact figures.
      const poolMetrics = PoolMetrics.live({ name: dir, max: 1 }, () => {
        const { held, waiting } = usage()
        return { used: Math.min(held, 1), idle: held > 0 ? 0 : 1, pending: waiting }
      })
      const dump = exclusive(Effect.gen(function*() {
        // Written back to the data files first, so a restore starts without replaying the WAL.
        // On PGlite itself: the client's own statements wait for the permit held here.
        yield* Effect.promise(() => db.exec("CHECKPOINT"))
        // The tar alone under the permit; compressing it (zlib, off the event loop) need not
        // keep the database waiting.
        const file = yield* Effect.promise(() => db.dumpDataDir("none"))
        return new Uint8Array(yield* Effect.promise(() => file.arrayBuffer()))
      })).pipe(
        Effect.flatMap((tar) => Effect.promise(() => gzipAsync(tar, { level: 1 }))),
        Effect.map((gz) => new Uint8Array(gz.buffer, gz.byteOffset, gz.byteLength)),
        Effect.orDie
      )
      return Context.make(SqlClient.SqlClient, client).pipe(
        Context.add(EmbeddedDump, EmbeddedDump.of({ dump })),
        Context.add(PoolMetrics.PoolMetrics, poolMetrics)
      )
    })
  )

export { DEFAULT_MAX_CONNECTIONS, STATEMENTS_PER_CONNECTION }

/**
 * The pool's pipelining: statements of concurrent requests written together on a connection
 * and answered by one backend in one wake-up. Transactions, the snapshot's cursor and the
 * listener still take a connection alone. One statement a connection turns it off, for a
 * pooler in front that cannot pass pipelined statements through.
 */
export const pipelining = (statementsPerConnection: number = STATEMENTS_PER_CONNECTION) =>
  ({ multiplex: statementsPerConnection > 1, multiplexConcurrency: statementsPerConnection }) as const

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
export const layerStoresEmbedded: Layer.Layer<Stores | AuthCache.AuthCache, never, SqlClient.SqlClient> = Layer.effectContext(
  Effect.map(Layer.build(layerStores), (context) =>
    Context.add(context, ListingStore.ListingStore, SpooledSnapshot.spooled(Context.get(context, ListingStore.ListingStore))))
)

/** Why `options` cannot make a pool, if they cannot. */
const refusedPoolOptions = (options: ServerPoolOptions): string | undefined => {
  const { maxConnections, statementsPerConnection } = options
  if (maxConnections !== undefined && !(Number.isInteger(maxConnections) && maxConnections >= 2)) {
    return `maxConnections must be an integer of at least 2 (one connection listens for key and plan changes); got ${maxConnections}`
  }
  if (statementsPerConnection !== undefined && !(Number.isInteger(statementsPerConnection) && statementsPerConnection >= 1)) {
    return `statementsPerConnection must be an integer of at least 1; got ${statementsPerConnection}`
  }
  return undefined
}

/**
 * Server deployment: every storage port and the SqlClient over the PostgreSQL at `url`, listening
 * for key and plan changes made by other processes. The listener keeps one of the pool's
 * `maxConnections` (default 10) for itself, so the pool needs at least two: with one, every
 * statement would wait forever for a connection; it is refused as a `StoreOpenError` instead,
 * as is a `statementsPerConnection` below one.
 */
export const layerServer = (
  options: ServerPoolOptions
): Layer.Layer<Services | PoolMetrics.PoolMetrics, StoreOpenError> => {
  const refused = refusedPoolOptions(options)
  return refused !== undefined
    ? Layer.unwrap(Effect.fail(new StoreOpenError({ reason: "OpenFailed", message: refused })))
    : layerAuthListener.pipe(
      Layer.provideMerge(layerStores),
      Layer.provideMerge(Layer.merge(layerPgClient(options), CopyLoader.layer(options.url)))
    )
}

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
