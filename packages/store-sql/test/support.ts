import { PGlite } from "@electric-sql/pglite"
import { btree_gist } from "@electric-sql/pglite/contrib/btree_gist"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { PgClient } from "@effect/sql-pg"
import { afterAll, beforeAll, describe } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import { pgliteTemplateDump } from "../../../scripts/PgliteTemplate.ts"
import * as PgliteClient from "../src/PgliteClient.ts"
import { CopyLoader, StoreSql } from "../src/index.ts"

/*
 * Fresh databases for every test, cheaply: one PGlite (or one server database) per test file,
 * one schema per test, migrated from scratch. Extensions live in `public`, created once.
 */

export const DATABASE_URL = process.env.DATABASE_URL?.trim() || undefined

if (DATABASE_URL === undefined) {
  console.info("store-sql: the server (PostgreSQL) suites are skipped: DATABASE_URL not set")
}

const unique = () => `${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6).toString(36)}`

let schemaCounter = 0
const nextSchema = () => `t_${unique()}_${++schemaCounter}`

/** Migrates on `client` and hands it on: the layer's SqlClient is ready to use. */
const migrated = (client: SqlClient.SqlClient) =>
  Effect.as(Effect.provideService(StoreSql.migrate, SqlClient.SqlClient, client), client)

// ---------------------------------------------------------------------------------------------
// PGlite

let sharedPglite: Promise<PGlite> | undefined

const pglite = (): Promise<PGlite> => {
  if (sharedPglite === undefined) {
    // In memory, from a copy of the empty database when there is one: initdb would cost seconds.
    const template = pgliteTemplateDump()
    sharedPglite = PGlite.create({ extensions: { btree_gist, pg_trgm }, ...(template === undefined ? {} : { loadDataDir: template }) })
  }
  return sharedPglite
}

/** Closes the file's PGlite (call in afterAll). */
export const closePglite = async () => {
  if (sharedPglite !== undefined) await (await sharedPglite).close()
  sharedPglite = undefined
}

/** A SqlClient on the file's PGlite, in a new, migrated schema. */
export const pgliteClient: Layer.Layer<SqlClient.SqlClient> = Layer.effect(
  SqlClient.SqlClient,
  Effect.gen(function*() {
    const db = yield* Effect.promise(pglite)
    const schema = nextSchema()
    yield* Effect.promise(() =>
      db.exec(`CREATE EXTENSION IF NOT EXISTS btree_gist WITH SCHEMA public;
        CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
        CREATE SCHEMA ${schema}; SET search_path TO ${schema}, public`)
    )
    return yield* migrated(yield* PgliteClient.make(db))
  })
)

export const pgliteStores: Layer.Layer<StoreSql.Services> = StoreSql.layerStores.pipe(Layer.provideMerge(pgliteClient))

// ---------------------------------------------------------------------------------------------
// Server

const withUrlDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

const adminRun = (url: string, statements: ReadonlyArray<string>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const sql = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 1 })
        for (const statement of statements) yield* sql.unsafe(statement)
      })
    ).pipe(Effect.provide(Reactivity.layer), Effect.orDie)
  )

/** A database of its own for one test file; `drop` removes it. */
export const serverDatabase = async (url: string) => {
  const name = `dropshelf_test_${unique()}`
  await adminRun(url, [`CREATE DATABASE ${name}`])
  const databaseUrl = withUrlDatabase(url, name)
  await adminRun(databaseUrl, [
    "CREATE EXTENSION IF NOT EXISTS btree_gist WITH SCHEMA public",
    "CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public"
  ])
  return {
    url: databaseUrl,
    drop: () => adminRun(url, [`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`])
  }
}

/** A pooled SqlClient on `databaseUrl` whose connections all use `schema` (created if missing). */
export const serverClientIn = (databaseUrl: string, schema: string, maxConnections = 20) =>
  Effect.gen(function*() {
    const client = yield* PgClient.make({
      url: Redacted.make(databaseUrl),
      maxConnections,
      startupParameters: { search_path: `${schema}, public` },
      // Pipelined as the served pool is (StoreSql.layerPgClient), so the stores are tested as they run.
      ...StoreSql.pipelining()
    })
    yield* client.unsafe(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
    return client as SqlClient.SqlClient
  }).pipe(Effect.provide(Reactivity.layer), Effect.orDie)

/** A SqlClient on the test file's server database, in a new, migrated schema. */
export const serverClient = (databaseUrl: () => string, maxConnections = 20): Layer.Layer<SqlClient.SqlClient> =>
  Layer.effect(
    SqlClient.SqlClient,
    Effect.flatMap(Effect.suspend(() => serverClientIn(databaseUrl(), nextSchema(), maxConnections)), migrated)
  )

export const serverStores = (databaseUrl: () => string): Layer.Layer<StoreSql.Services> =>
  StoreSql.layerStores.pipe(Layer.provideMerge(serverClient(databaseUrl)))

/** As `serverStores`, with imports through COPY (CopyLoader) into the same schema, as a served deployment writes them. */
export const serverCopyStores = (databaseUrl: () => string): Layer.Layer<StoreSql.Services | CopyLoader.CopyLoader> =>
  Layer.unwrap(Effect.sync(() => {
    const schema = nextSchema()
    const client = Layer.effect(SqlClient.SqlClient, Effect.flatMap(Effect.suspend(() => serverClientIn(databaseUrl(), schema)), migrated))
    const loader = Layer.suspend(() => CopyLoader.layer(databaseUrl(), { searchPath: `${schema},public` }))
    return StoreSql.layerStores.pipe(Layer.provideMerge(Layer.merge(client, loader)))
  }))

/**
 * A suite that needs a PostgreSQL server: skipped, saying why, without DATABASE_URL; otherwise
 * given the URL of a database of its own, created before and dropped after.
 */
export const describeOnServer = (name: string, body: (databaseUrl: () => string) => void) =>
  describe.skipIf(DATABASE_URL === undefined)(
    `${name}${DATABASE_URL === undefined ? " (skipped: DATABASE_URL not set)" : ""}`,
    () => {
      let database: Awaited<ReturnType<typeof serverDatabase>> | undefined
      beforeAll(async () => {
        database = await serverDatabase(DATABASE_URL!)
      })
      afterAll(async () => {
        await database?.drop()
      })
      body(() => database!.url)
    }
  )
