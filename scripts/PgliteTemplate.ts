import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

/*
 * An empty PGlite database for the tests to copy. A new PGlite data directory runs initdb first,
 * about 5 s of CPU and half a gigabyte each time, while opening a copy of one costs what any
 * reopen does. The template is made once per PGlite version (the globalSetup of vitest.config.ts
 * makes it before the first test file starts) and kept in node_modules/.cache beside the
 * launcher's bundle. It is initdb's output only: every test still migrates its database itself.
 * Without a template (a test file run some other way) the helpers give what they gave before.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")

const pgliteVersion = (): string =>
  JSON.parse(readFileSync(join(root, "node_modules", "@electric-sql", "pglite", "package.json"), "utf8")).version

const templateDir = join(root, "node_modules", ".cache", "dropshelf-test", `pglite-${pgliteVersion()}`)
const templatePgdata = join(templateDir, "pgdata")
/** The same data directory as PGlite's own dump (a tar), for instances kept in memory. */
const templateDump = join(templateDir, "pgdata.tar")

/** Makes the template unless there is one; concurrent makers are safe (made aside, then renamed). */
export const ensurePgliteTemplate = async (): Promise<void> => {
  if (existsSync(templateDump)) return
  const building = `${templateDir}.${process.pid}.building`
  rmSync(building, { recursive: true, force: true })
  mkdirSync(building, { recursive: true })
  try {
    const { PGlite } = await import("@electric-sql/pglite")
    const db = await PGlite.create({ dataDir: join(building, "pgdata") })
    // Written back to the data files first, as the embedded backup does, so a copy replays no WAL.
    await db.exec("CHECKPOINT")
    const dump = await db.dumpDataDir("none")
    await db.close()
    writeFileSync(join(building, "pgdata.tar"), new Uint8Array(await dump.arrayBuffer()))
    try {
      renameSync(building, templateDir)
    } catch {
      // Another run put its template there first.
    }
  } finally {
    rmSync(building, { recursive: true, force: true })
  }
}

/**
 * Copies the template's data directory to `pgdata`, which must not exist yet: what a new
 * embedded data directory holds once its first process has opened it, before any migration.
 * False, and nothing written, when there is no template.
 */
export const copyPgliteTemplate = (pgdata: string): boolean => {
  if (!existsSync(templateDump)) return false
  cpSync(templatePgdata, pgdata, { recursive: true })
  return true
}

/** The template as a dump for `PGlite.create({ loadDataDir })`; undefined when there is none. */
export const pgliteTemplateDump = (): Blob | undefined =>
  existsSync(templateDump) ? new Blob([readFileSync(templateDump)]) : undefined
