import type { Operators } from "@dropshelf/core"
import * as DataDirLock from "@dropshelf/store-sql/DataDirLock"
import { Duration, Effect, Layer } from "effect"
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import type { DropshelfConfig } from "./Config.ts"
import { CommandRefused } from "./Failure.ts"

/*
 * What an operator command runs against. On a PostgreSQL server, or on an embedded data
 * directory no process holds, the command opens the storage itself (Runtime.ts). On a data
 * directory that a live `serve` holds, it sends each use case to that process's operator
 * endpoint (OperatorSocket.ts): PGlite admits one process, and that process is it. Each path
 * loads only its own modules.
 */

/** How long a holder may take, from taking the lock, to open its endpoint (PGlite's start, migrations). */
export const STARTING_GRACE = Duration.seconds(60)

const POLL = Duration.millis(100)

type Route =
  | { readonly _tag: "Open" }
  | { readonly _tag: "Served"; readonly path: string; readonly holder: string }

/**
 * Whether to open the storage here or use the process that holds it. A holder whose endpoint is
 * not up yet may be a server still starting: it is waited for until `STARTING_GRACE` after it
 * took the lock, or until it exits (then the directory is free). A holder that never opens one
 * (another command) gets the usual refusal from the lock when the grace is over.
 */
const route = (config: DropshelfConfig): Effect.Effect<Route> =>
  Effect.gen(function*() {
    if (config.databaseUrl !== undefined) return { _tag: "Open" } as const
    const dir = resolve(config.dataDir)
    const { answers, socketPath } = yield* Effect.promise(() => import("./OperatorSocket.ts"))
    const path = socketPath(dir)
    while (true) {
      const holder = DataDirLock.holder(dir)
      if (holder === undefined) return { _tag: "Open" } as const
      if (yield* answers(path)) {
        return { _tag: "Served", path, holder: `dropshelf process ${holder.pid} serving ${dir}` } as const
      }
      if (Date.now() - holder.since > Duration.toMillis(STARTING_GRACE)) return { _tag: "Open" } as const
      yield* Effect.sleep(POLL)
    }
  })

/** The core's operator use cases for this command, wherever they run. */
export const operators = (config: DropshelfConfig) =>
  Layer.unwrap(Effect.gen(function*() {
    const where = yield* route(config)
    if (where._tag === "Served") {
      const { layerClient } = yield* Effect.promise(() => import("./OperatorSocket.ts"))
      return layerClient(where.path, where.holder) as Layer.Layer<Operators.Operators, never>
    }
    const Runtime = yield* Effect.promise(() => import("./Runtime.ts"))
    return Runtime.operatorLayer(config)
  }))

/** `dropshelf migrate`, wherever it runs; the names of the migrations applied. */
export const migrate = (config: DropshelfConfig) =>
  Effect.gen(function*() {
    const where = yield* route(config)
    if (where._tag === "Served") {
      const { migrateVia } = yield* Effect.promise(() => import("./OperatorSocket.ts"))
      return yield* migrateVia(where.path, where.holder)
    }
    const Runtime = yield* Effect.promise(() => import("./Runtime.ts"))
    return yield* Runtime.migrate(config)
  })

/** `dropshelf backup`, on the embedded database, wherever it is open; `file` is absolute. */
export const backup = (config: DropshelfConfig, file: string) =>
  Effect.gen(function*() {
    const where = yield* route(config)
    if (where._tag === "Served") {
      const { backupVia } = yield* Effect.promise(() => import("./OperatorSocket.ts"))
      return yield* backupVia(where.path, where.holder, file)
    }
    const dir = resolve(config.dataDir)
    if (!existsSync(join(dir, "pgdata", "PG_VERSION"))) {
      return yield* new CommandRefused({ message: `there is no database in ${dir} to back up (check DROPSHELF_DATA_DIR)` })
    }
    const [Runtime, { StoreSql }, { writeBackup }] = yield* Effect.promise(() =>
      Promise.all([import("./Runtime.ts"), import("@dropshelf/store-sql"), import("./BackupFile.ts")])
    )
    return yield* Effect.gen(function*() {
      const bytes = yield* (yield* StoreSql.EmbeddedDump).dump
      return yield* writeBackup(file, bytes)
    }).pipe(Effect.provide(Runtime.embeddedStorage(config)))
  })
