import { Effect } from "effect"
import { readFile } from "node:fs/promises"
import { resolve } from "node:path"
import type { DropshelfConfig } from "./Config.ts"
import { CommandRefused, UsageError } from "./Failure.ts"

/*
 * `dropshelf backup` and `dropshelf restore`. The embedded database is copied by PGlite's own
 * dump of its data directory (a gzipped tar), taken between statements by the process that has
 * it open: this command's, or the serving process's through the operator endpoint, so a backup
 * needs no downtime. A PostgreSQL server is PostgreSQL's to back up: the commands refuse and name
 * `pg_dump`/`pg_restore` (docs/operations.md#backup-and-restore).
 */

const RUNBOOK = "docs/operations.md#backup-and-restore"

export const serverRefusal = (command: "backup" | "restore") =>
  new CommandRefused({
    message: command === "backup"
      ? `dropshelf backs up only its embedded database; for the PostgreSQL server of DATABASE_URL run pg_dump --format=custom --file=<file> "$DATABASE_URL" (see ${RUNBOOK})`
      : `dropshelf restores only its embedded database; for the PostgreSQL server of DATABASE_URL run pg_restore --no-owner --dbname="$DATABASE_URL" <file> into an empty database (see ${RUNBOOK})`
  })

/** `dropshelf backup <file>`: beside a running server through its endpoint, else on the storage opened here. */
export const backup = (config: DropshelfConfig, target: string) =>
  Effect.gen(function*() {
    if (config.databaseUrl !== undefined) return yield* serverRefusal("backup")
    const file = resolve(target)
    const Storage = yield* Effect.promise(() => import("./Storage.ts"))
    return yield* Storage.backup(config, file)
  })

/** `dropshelf restore <file>`: into an empty embedded data directory that no process holds. */
export const restore = (config: DropshelfConfig, source: string) =>
  Effect.gen(function*() {
    if (config.databaseUrl !== undefined) return yield* serverRefusal("restore")
    const file = resolve(source)
    const bytes = yield* Effect.tryPromise({
      try: () => readFile(file),
      catch: (error) => new UsageError({ message: `cannot read the backup ${file}: ${error instanceof Error ? error.message : String(error)}` })
    })
    const { StoreSql } = yield* Effect.promise(() => import("@dropshelf/store-sql"))
    yield* StoreSql.restorePglite(config.dataDir, new Uint8Array(bytes))
    return { restored: file, dataDir: resolve(config.dataDir) }
  })
