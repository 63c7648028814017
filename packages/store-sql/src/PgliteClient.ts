import type { PGlite } from "@electric-sql/pglite"
import { PgClient } from "@effect/sql-pg"
import { Effect, Semaphore, Stream } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import type { Connection } from "effect/sql/SqlConnection"
import { ConstraintError, SqlError, UniqueViolation, UnknownError } from "effect/sql/SqlError"

/*
 * An in-process SqlClient over PGlite. PGlite is one Postgres backend, so every statement
 * goes through one permit; a transaction takes the permit at BEGIN and keeps it until COMMIT
 * or ROLLBACK, so no other fiber's statement lands inside it. Statements are compiled by
 * @effect/sql-pg's own compiler, so the stores write the same SQL for both deployments.
 */

interface PgliteErrorFields {
  readonly code?: string | undefined
  readonly constraint?: string | undefined
  readonly message?: string | undefined
}

const toSqlError = (cause: unknown, operation: string): SqlError => {
  const fields = (typeof cause === "object" && cause !== null ? cause : {}) as PgliteErrorFields
  const message = fields.message ?? String(cause)
  const props = { cause, message, operation }
  if (fields.code === "23505") {
    return new SqlError({ reason: new UniqueViolation({ ...props, constraint: fields.constraint ?? "" }) })
  }
  if (fields.code?.startsWith("23")) return new SqlError({ reason: new ConstraintError(props) })
  return new SqlError({ reason: new UnknownError(props) })
}

const makeConnection = (db: PGlite): Connection => {
  const rows = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.tryPromise({
      try: () => db.query<Record<string, unknown>>(sql, params as Array<unknown>, { rowMode: "object" }),
      catch: (cause) => toSqlError(cause, "execute")
    })
  const values = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.tryPromise({
      try: () => db.query<Array<unknown>>(sql, params as Array<unknown>, { rowMode: "array" }),
      catch: (cause) => toSqlError(cause, "execute")
    }).pipe(Effect.map((result) => result.rows))
  const execute = <A extends object>(
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: ((rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) =>
    Effect.map(rows(sql, params), (result) => {
      const out = result.rows as unknown as ReadonlyArray<A>
      return transformRows ? transformRows(out) : out
    })
  return {
    execute,
    executeUnprepared: execute,
    executeRaw: (sql, params) => Effect.map(rows(sql, params), (result) => ({ ...result, command: commandOf(sql) })),
    executeValues: values,
    executeValuesUnprepared: values,
    executeStream: (sql, params, transformRows) => Stream.fromIterableEffect(execute(sql, params, transformRows))
  }
}

const commandOf = (sql: string) => sql.trim().split(/\s+/)[0]?.toUpperCase() ?? ""

/** A SqlClient (pg dialect) over one PGlite instance; the caller owns the instance's lifetime. */
export const make = (db: PGlite): Effect.Effect<SqlClient.SqlClient> => Effect.map(makeWithExclusive(db), ({ client }) => client)

/**
 * The SqlClient, and `exclusive`: runs an effect while no statement or transaction of the client
 * is under way (it takes the same permit), as a consistent dump of the database needs.
 */
export const makeWithExclusive = (db: PGlite): Effect.Effect<{
  readonly client: SqlClient.SqlClient
  readonly exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}> =>
  Effect.gen(function*() {
    const semaphore = yield* Semaphore.make(1)
    const connection = makeConnection(db)
    const acquirers = SqlClient.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore,
      isTransaction: () => true
    })
    const client = yield* SqlClient.make({
      ...acquirers,
      compiler: PgClient.makeCompiler(),
      driver: "pglite",
      spanAttributes: [["db.system.name", "postgresql"]],
      beginTransaction: "BEGIN",
      commit: "COMMIT",
      rollback: "ROLLBACK",
      savepoint: (name) => `SAVEPOINT ${name}`,
      releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`,
      rollbackSavepoint: (name) => `ROLLBACK TO SAVEPOINT ${name}`
    })
    return { client, exclusive: semaphore.withPermits(1) }
  }).pipe(Effect.provide(Reactivity.layer))
