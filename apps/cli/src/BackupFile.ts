import { Effect, Schema } from "effect"
import { renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { UsageError } from "./Failure.ts"

/** What `dropshelf backup` reports, wherever the dump was taken. */
export const BackupReport = Schema.Struct({ file: Schema.String, bytes: Schema.Number })
export type BackupReport = typeof BackupReport.Type

/**
 * Writes `bytes` to `file` whole or not at all: to a temporary name beside it, then renamed, so a
 * reader (or a crash) never sees half a backup.
 */
export const writeBackup = (file: string, bytes: Uint8Array): Effect.Effect<BackupReport, UsageError> =>
  Effect.try({
    try: () => {
      const temporary = `${file}.partial-${process.pid}`
      try {
        writeFileSync(temporary, bytes, { mode: 0o600 })
        renameSync(temporary, file)
      } catch (error) {
        rmSync(temporary, { force: true })
        throw error
      }
      return { file, bytes: statSync(file).size }
    },
    catch: (error) => new UsageError({ message: `cannot write the backup to ${file}: ${error instanceof Error ? error.message : String(error)}` })
  })
