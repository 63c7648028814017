/**
 * The storage adapters the black-box tests run on: memory always; SQL on embedded PGlite, and
 * on a PostgreSQL server when DATABASE_URL is set. The SQL adapter is loaded lazily, so these
 * tests still run (and say why SQL was skipped) where it cannot load.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { RateLimiter } from "@dropshelf/core"
import { copyPgliteTemplate } from "../../../scripts/PgliteTemplate.ts"
import { type Adapter, memoryAdapter, type Ports } from "./harness.ts"

type StoreSqlModule = typeof import("@dropshelf/store-sql")

let storeSql: StoreSqlModule | undefined
let loadError: string | undefined
try {
  storeSql = await import("@dropshelf/store-sql")
} catch (error) {
  loadError = `@dropshelf/store-sql could not be loaded: ${error instanceof Error ? error.message : String(error)}`
}

const sqlAdapter = (
  name: string,
  client: (sql: StoreSqlModule) => Layer.Layer<any, unknown>,
  skip?: string,
  options: { readonly embedded?: boolean } = {}
): Adapter => ({
  name,
  skip: skip ?? loadError,
  layer: () => {
    const sql = storeSql!
    const migrated = Layer.effectDiscard(sql.StoreSql.migrate).pipe(Layer.provideMerge(client(sql)))
    // The embedded deployment's ports (its snapshot spooled), as `dropshelf serve` opens them.
    const stores = options.embedded === true ? sql.StoreSql.layerStoresEmbedded : sql.StoreSql.layerStores
    return Layer.mergeAll(stores, RateLimiter.layerInProcess).pipe(
      Layer.provide(migrated)
    ) as Layer.Layer<Ports, unknown>
  }
})

const pgliteDirs: Array<string> = []
export const cleanupPgliteDirs = () => {
  for (const dir of pgliteDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

const databaseUrl = process.env.DATABASE_URL?.trim()

/**
 * A database of its own on the server named by DATABASE_URL, dropped afterwards, so the tests
 * see only their own rows; where the role may not create databases, the named one as it is.
 */
const freshServerDatabase = (sql: StoreSqlModule, adminUrl: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const name = `dropshelf_server_test_${process.pid}_${Date.now().toString(36)}`
    const onAdmin = (statement: string) =>
      Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(sql.StoreSql.layerServerClient({ url: adminUrl }))
        yield* Context.get(context, SqlClient.SqlClient).unsafe(statement)
      }))
    const created = yield* Effect.result(onAdmin(`CREATE DATABASE ${name}`))
    if (created._tag === "Failure") return sql.StoreSql.layerServerClient({ url: adminUrl })
    yield* Effect.addFinalizer(() => Effect.ignore(onAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    return sql.StoreSql.layerServerClient({ url: url.toString() })
  }))

export const adapters: ReadonlyArray<Adapter> = [
  memoryAdapter,
  sqlAdapter("sql-pglite", (sql) => {
    const dir = mkdtempSync(join(tmpdir(), "dropshelf-server-test-"))
    pgliteDirs.push(dir)
    // A copy of a migrated database rather than initdb's and the migrations' seconds of CPU,
    // opened with the small shared_buffers of a short-lived process (zeroing 128 MB is most of an open).
    copyPgliteTemplate(join(dir, "pgdata"), { migrated: true })
    return sql.StoreSql.layerPgliteClient({ dataDir: dir, settings: sql.StoreSql.PGLITE_COMMAND_SETTINGS })
  }, undefined, { embedded: true }),
  sqlAdapter(
    "sql-server",
    (sql) => freshServerDatabase(sql, databaseUrl!),
    databaseUrl === undefined || databaseUrl === "" ? "DATABASE_URL is not set" : undefined
  )
]
