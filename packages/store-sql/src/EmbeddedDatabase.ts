import type { PGlite } from "@electric-sql/pglite"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync, readdirSync, rmSync } from "node:fs"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { gzip } from "node:zlib"
import * as DataDirLock from "./DataDirLock.ts"
import * as PgliteClient from "./PgliteClient.ts"
import * as PoolMetrics from "./PoolMetrics.ts"
import { oneLine, StoreOpenError } from "./StoreOpenError.ts"

/*
 * The embedded database: PGlite in a data directory one process holds at a time, opened,
 * dumped while open and restored into an empty directory.
 */

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
export const lockDataDir = (dir: string, advice: string) =>
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
