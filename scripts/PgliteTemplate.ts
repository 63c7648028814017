import { createHash } from "node:crypto"
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

/*
 * An empty PGlite database for the tests to copy. A new PGlite data directory runs initdb first,
 * about 5 s of CPU and half a gigabyte each time, while opening a copy of one costs what any
 * reopen does. The template is made once per PGlite version (the globalSetup of vitest.config.ts
 * makes it before the first test file starts) and kept in node_modules/.cache. It is initdb's
 * output only, for the tests that watch a database migrate.
 *
 * A second template is the same database migrated (about 3 s of CPU more at each first open,
 * and a few hundred megabytes), for the tests that only need a dropshelf database: it is made
 * again whenever the migrations' source changes. Without a template (a test file run some
 * other way) the helpers give what they gave before.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")

const pgliteVersion = (): string =>
  JSON.parse(readFileSync(join(root, "node_modules", "@electric-sql", "pglite", "package.json"), "utf8")).version

const templateDir = join(root, "node_modules", ".cache", "dropshelf-test", `pglite-${pgliteVersion()}`)
const templatePgdata = join(templateDir, "pgdata")
/** The same data directory as PGlite's own dump (a tar), for instances kept in memory. */
const templateDump = join(templateDir, "pgdata.tar")

/**
 * Makes `target` by `fill` in a directory of its own beside it, then renames it into place, so a
 * template is whole or absent and concurrent makers are safe: the first rename wins.
 */
const makeAside = async (target: string, fill: (building: string) => Promise<void>): Promise<void> => {
  const building = `${target}.${process.pid}.building`
  rmSync(building, { recursive: true, force: true })
  mkdirSync(building, { recursive: true })
  try {
    await fill(building)
    try {
      renameSync(building, target)
    } catch {
      // Another run put its template there first.
    }
  } finally {
    rmSync(building, { recursive: true, force: true })
  }
}

/** Makes the template unless there is one. */
export const ensurePgliteTemplate = async (): Promise<void> => {
  if (existsSync(templateDump)) return
  await makeAside(templateDir, async (building) => {
    const { PGlite } = await import("@electric-sql/pglite")
    const db = await PGlite.create({ dataDir: join(building, "pgdata") })
    // Written back to the data files first, as the embedded backup does, so a copy replays no WAL.
    await db.exec("CHECKPOINT")
    const dump = await db.dumpDataDir("none")
    await db.close()
    writeFileSync(join(building, "pgdata.tar"), new Uint8Array(await dump.arrayBuffer()))
  })
}

/** The migrated template, named by the migrations' source so that a changed migration makes a new one. */
const migratedPrefix = `${basename(templateDir)}-migrated-`
const migratedDir = join(
  dirname(templateDir),
  `${migratedPrefix}${createHash("sha256").update(readFileSync(join(root, "packages", "store-sql", "src", "Migrations.ts"))).digest("hex").slice(0, 16)}`
)

/**
 * Makes the migrated template unless there is one (after `ensurePgliteTemplate`, from a copy of
 * its database); older ones, of other migrations, are removed.
 */
export const ensureMigratedPgliteTemplate = async (): Promise<void> => {
  if (existsSync(join(migratedDir, "pgdata", "PG_VERSION")) || !existsSync(templateDump)) return
  await makeAside(migratedDir, async (building) => {
    cpSync(templatePgdata, join(building, "pgdata"), { recursive: true })
    const [{ Effect }, { SqlClient }, { PgliteClient, StoreSql }] = await Promise.all([
      import("effect"),
      import("effect/sql"),
      import("../packages/store-sql/src/index.ts")
    ])
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const db = yield* StoreSql.openPglite(join(building, "pgdata"), StoreSql.PGLITE_COMMAND_SETTINGS)
      yield* Effect.provideService(StoreSql.migrate, SqlClient.SqlClient, yield* PgliteClient.make(db))
      // Written back to the data files, so a copy replays no WAL.
      yield* Effect.promise(() => db.exec("CHECKPOINT"))
    })))
  })
  for (const name of readdirSync(dirname(templateDir))) {
    if (name.startsWith(migratedPrefix) && !name.includes(".building") && join(dirname(templateDir), name) !== migratedDir) {
      rmSync(join(dirname(templateDir), name), { recursive: true, force: true })
    }
  }
}

/**
 * Copies a template's data directory to `pgdata`, which must not exist yet: by default what a
 * new embedded data directory holds once its first process has opened it, before any
 * migration; `migrated`, the same with every migration applied. False, and nothing written,
 * when there is no such template.
 */
export const copyPgliteTemplate = (pgdata: string, options: { readonly migrated?: boolean } = {}): boolean => {
  if (!existsSync(templateDump)) return false
  const source = options.migrated === true ? join(migratedDir, "pgdata") : templatePgdata
  if (!existsSync(join(source, "PG_VERSION"))) return false
  cpSync(source, pgdata, { recursive: true })
  return true
}

/** The template as a dump for `PGlite.create({ loadDataDir })`; undefined when there is none. */
export const pgliteTemplateDump = (): Blob | undefined =>
  existsSync(templateDump) ? new Blob([readFileSync(templateDump)]) : undefined
