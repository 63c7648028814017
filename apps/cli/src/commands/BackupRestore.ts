import { Effect } from "effect"
import { Argument, Command } from "effect/cli"
import { DropshelfConfig } from "../Config.ts"
import { emit } from "../Output.ts"
import { json, load } from "./Shared.ts"

/* Backing up and restoring an embedded data directory. */

export const backup = Command.make("backup", {
  json,
  file: Argument.String("file").pipe(Argument.withDescription("Where to write the backup (a gzipped tar of the data directory)"))
}, ({ file, json }) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const Backup = yield* load(() => import("../Backup.ts"))
    const report = yield* Backup.backup(config, file)
    yield* emit(json, report, () => `Backed up ${config.dataDir} to ${report.file} (${report.bytes} bytes).`)
  })).pipe(Command.withDescription("Back up the embedded database, consistently, while it serves (PostgreSQL: use pg_dump)"))

export const restore = Command.make("restore", {
  json,
  file: Argument.String("file").pipe(Argument.withDescription("A file written by dropshelf backup"))
}, ({ file, json }) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const Backup = yield* load(() => import("../Backup.ts"))
    const report = yield* Backup.restore(config, file)
    yield* emit(json, report, () => `Restored ${report.restored} into ${report.dataDir}.`)
  })).pipe(Command.withDescription("Restore a backup into an empty data directory; refuses one that holds a database (PostgreSQL: use pg_restore)"))
