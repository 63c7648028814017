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

/** Who has the permit now: fibers holding it (a statement, a transaction, a dump) and fibers waiting for it. */
export interface PermitUsage {
  readonly held: number
  readonly waiting: number
}

/**
 * `inner`, counting as it goes: a take that has asked and not yet got its permits is waiting,
 * one that got them is held until it gives them back. Plain integers, read when metrics are
 * collected, so a statement pays no metric update.
 */
export const countingSemaphore = (inner: Semaphore.Semaphore): { readonly semaphore: Semaphore.Semaphore; readonly usage: () => PermitUsage } => {
  let held = 0
  let waiting = 0
  const withCounted = <A, E, R>(
    permits: number,
    withInner: (effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
    self: Effect.Effect<A, E, R>
  ) =>
    Effect.suspend(() => {
      waiting++
      let acquired = false
      return withInner(Effect.suspend(() => {
        acquired = true
        waiting--
        held += permits
        return self
      })).pipe(Effect.ensuring(Effect.sync(() => {
        if (acquired) held -= permits
        else waiting--
      })))
    })
  const semaphore: Semaphore.Semaphore = {
    resize: (permits) => inner.resize(permits),
    withPermits: (permits) => {
      const withInner = inner.withPermits(permits)
      return (self) => withCounted(permits, withInner, self)
    },
    // The path of every statement outside a transaction.
    withPermit: (self) => withCounted(1, (effect) => inner.withPermit(effect), self),
    withPermitsIfAvailable: (permits) => (self) =>
      Effect.suspend(() => {
        let acquired = false
        return inner.withPermitsIfAvailable(permits)(Effect.suspend(() => {
          acquired = true
          held += permits
          return self
        })).pipe(Effect.ensuring(Effect.sync(() => {
          if (acquired) held -= permits
        })))
      }),
    take: (permits) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          waiting++
          return restore(inner.take(permits)).pipe(Effect.onExit((exit) =>
            Effect.sync(() => {
              waiting--
              if (exit._tag === "Success") held += permits
            })
          ))
        })
      ),
    takeScoped: (permits) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          waiting++
          return restore(inner.takeScoped(permits)).pipe(
            Effect.onExit((exit) =>
              Effect.sync(() => {
                waiting--
                if (exit._tag === "Success") held += permits
              })
            ),
            // Added after the permit's own release, so it runs first: never counted held once free.
            Effect.andThen(Effect.addFinalizer(() => Effect.sync(() => {
              held -= permits
            })))
          )
        })
      ),
    takeIfAvailable: (permits) =>
      Effect.map(inner.takeIfAvailable(permits), (taken) => {
        if (taken) held += permits
        return taken
      }),
    release: (permits) =>
      Effect.map(inner.release(permits), (free) => {
        held = Math.max(0, held - permits)
        return free
      }),
    releaseAll: Effect.map(Effect.suspend(() => inner.releaseAll), (free) => {
      held = 0
      return free
    })
  }
  return { semaphore, usage: () => ({ held, waiting }) }
}

/** A SqlClient (pg dialect) over one PGlite instance; the caller owns the instance's lifetime. */
export const make = (db: PGlite): Effect.Effect<SqlClient.SqlClient> => Effect.map(makeWithExclusive(db), ({ client }) => client)

/**
 * The SqlClient, `exclusive`: runs an effect while no statement or transaction of the client
 * is under way (it takes the same permit), as a consistent dump of the database needs; and
 * `usage`: who holds and who waits for that permit now.
 */
export const makeWithExclusive = (db: PGlite): Effect.Effect<{
  readonly client: SqlClient.SqlClient
  readonly exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly usage: () => PermitUsage
}> =>
  Effect.gen(function*() {
    const { semaphore, usage } = countingSemaphore(yield* Semaphore.make(1))
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
    return { client, exclusive: semaphore.withPermits(1), usage }
  }).pipe(Effect.provide(Reactivity.layer))
