import { assert, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { StoreSql } from "../src/index.ts"
import { describeOnServer, serverClient } from "./support.ts"

/*
 * The served pool pipelines the statements of concurrent requests on a connection
 * (docs/decisions/0510-pipelined-statements.md). What the stores rely on, on one connection so
 * that every statement shares it: each statement gets its own answer, one that fails or is
 * abandoned leaves the others alone, and a transaction still has the connection to itself;
 * and that the number a connection carries is what the pool is told.
 */
describeOnServer("sql (server) pipelined statements", (databaseUrl) => {
  const onOneConnection = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
    Effect.provide(effect, Layer.fresh(serverClient(databaseUrl, 1)))

  it.live("each of a connection's pipelined statements gets its own answer, a failing one fails alone", () =>
    onOneConnection(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const asks = Array.from({ length: 3 * StoreSql.STATEMENTS_PER_CONNECTION }, (_, n) => n)
      const answers = yield* Effect.forEach(
        asks,
        (n) =>
          Effect.exit(
            n % 5 === 3
              ? sql<{ n: number }>`SELECT (1 / (${n}::int - ${n}::int))::int AS n`
              : sql<{ n: number }>`SELECT ${n}::int AS n, pg_sleep(0.001)`
          ),
        { concurrency: "unbounded" }
      )
      answers.forEach((answer, n) => {
        if (n % 5 === 3) assert.isTrue(Exit.isFailure(answer), `statement ${n} divides by zero`)
        else assert.deepStrictEqual(Exit.isSuccess(answer) ? answer.value.map((row) => row.n) : answer, [n])
      })
    })))

  it.live("statements a connection carries at once: 8 share one backend, 1 takes a backend each (DROPSHELF_DB_PIPELINE)", () =>
    Effect.gen(function*() {
      const backendsFor = (statementsPerConnection: number) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const answers = yield* Effect.forEach(
            Array.from({ length: 4 }, (_, n) => n),
            () => sql<{ pid: number }>`SELECT pg_backend_pid() AS pid, pg_sleep(0.2)`,
            { concurrency: "unbounded" }
          )
          return new Set(answers.map((rows) => rows[0]!.pid)).size
        }).pipe(Effect.provide(Layer.fresh(StoreSql.layerPgClient({ url: databaseUrl(), maxConnections: 4, statementsPerConnection }))))
      assert.strictEqual(yield* backendsFor(StoreSql.STATEMENTS_PER_CONNECTION), 1)
      assert.strictEqual(yield* backendsFor(1), 4)
    }))

  it.live("an abandoned statement's answer is dropped, and a transaction after it has the connection alone", () =>
    onOneConnection(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE pipeline_probe (n int)`
      const abandoned = yield* Effect.exit(sql`SELECT pg_sleep(0.3), 1 AS n`.pipe(Effect.timeout("20 millis")))
      assert.isTrue(Exit.isFailure(abandoned))
      const [after, inTransaction] = yield* Effect.all([
        sql<{ n: number }>`SELECT 2::int AS n`,
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO pipeline_probe VALUES (7)`
          // Inside its transaction the statement sees its own uncommitted row.
          return yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pipeline_probe WHERE n = 7`
        }))
      ], { concurrency: "unbounded" })
      assert.deepStrictEqual(after.map((row) => row.n), [2])
      assert.deepStrictEqual(inTransaction.map((row) => row.n), [1])
      assert.deepStrictEqual((yield* sql<{ n: number }>`SELECT 3::int AS n`).map((row) => row.n), [3])
    })))
})
