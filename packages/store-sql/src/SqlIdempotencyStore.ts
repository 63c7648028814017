import { Idempotency, IdempotencyStore } from "@dropshelf/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { instant, toDate } from "./Rows.ts"

/*
 * Idempotency keys: one row per (account, key). `begin` inserts a new key's row, or reads the
 * row under FOR UPDATE and applies the core's `decideBegin` in one short transaction, so of
 * concurrent begins one runs the write and the others wait or replay; no transaction stays
 * open while a write runs or a repeat waits, so the single connection of the embedded database
 * is never held by a waiter.
 * A run is named by its `started_at`: `complete` and `release` touch the row only while it is
 * still that run's and unanswered.
 */

type Row = Record<string, unknown>

const COLUMNS = "account_id, key, fingerprint, started_at, outcome"

const toRecord = (row: Row): Idempotency.IdempotencyRecord => ({
  accountId: row.account_id as string,
  key: row.key as string,
  fingerprint: row.fingerprint as string,
  startedAt: instant(row.started_at),
  outcome: (row.outcome ?? null) as string | null
})

/** A concurrent begin inserted the row first: read it again. */
class InsertedMeanwhile {
  readonly _tag = "InsertedMeanwhile"
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(COLUMNS)

  const attemptBegin = (request: IdempotencyStore.BeginRequest) =>
    Effect.gen(function*() {
      const rows = yield* sql<Row>`SELECT ${columns} FROM idempotency_keys
        WHERE account_id = ${request.accountId} AND key = ${request.key} FOR UPDATE`
      const decision = Idempotency.decideBegin(rows[0] === undefined ? undefined : toRecord(rows[0]), request)
      if (decision._tag !== "Run") return decision
      if (rows[0] === undefined) {
        const inserted = yield* sql`INSERT INTO idempotency_keys (account_id, key, fingerprint, started_at, outcome)
          VALUES (${request.accountId}, ${request.key}, ${request.fingerprint}, ${toDate(request.now)}, NULL)
          ON CONFLICT (account_id, key) DO NOTHING
          RETURNING account_id`
        if (inserted.length === 0) return yield* Effect.fail(new InsertedMeanwhile())
      } else {
        yield* sql`UPDATE idempotency_keys
          SET fingerprint = ${request.fingerprint}, started_at = ${toDate(request.now)}, outcome = NULL
          WHERE account_id = ${request.accountId} AND key = ${request.key}`
      }
      return decision
    })

  const decide = (request: IdempotencyStore.BeginRequest, retries = 3): Effect.Effect<Idempotency.BeginDecision, unknown> =>
    sql.withTransaction(attemptBegin(request)).pipe(
      Effect.catchIf(
        (error): error is InsertedMeanwhile => error instanceof InsertedMeanwhile && retries > 0,
        () => decide(request, retries - 1)
      )
    )

  // A new key, the usual case, is one statement: with no record, the rules say run. A key
  // already recorded is decided under the row's lock.
  const begin = (request: IdempotencyStore.BeginRequest): Effect.Effect<Idempotency.BeginDecision> =>
    sql`INSERT INTO idempotency_keys (account_id, key, fingerprint, started_at, outcome)
      VALUES (${request.accountId}, ${request.key}, ${request.fingerprint}, ${toDate(request.now)}, NULL)
      ON CONFLICT (account_id, key) DO NOTHING
      RETURNING account_id`.pipe(
      Effect.flatMap((inserted) => inserted.length > 0 ? Effect.succeed({ _tag: "Run" } as const) : decide(request)),
      Effect.orDie,
      Effect.withSpan("SqlIdempotencyStore.begin")
    )

  const complete = (run: IdempotencyStore.RunOf & { readonly outcome: string }) =>
    sql`UPDATE idempotency_keys SET outcome = ${run.outcome}
      WHERE account_id = ${run.accountId} AND key = ${run.key}
        AND started_at = ${toDate(run.startedAt)} AND outcome IS NULL
      RETURNING account_id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

  const release = (run: IdempotencyStore.RunOf) =>
    sql`DELETE FROM idempotency_keys
      WHERE account_id = ${run.accountId} AND key = ${run.key}
        AND started_at = ${toDate(run.startedAt)} AND outcome IS NULL`.pipe(Effect.asVoid, Effect.orDie)

  const find = (accountId: string, key: string) =>
    sql<Row>`SELECT ${columns} FROM idempotency_keys WHERE account_id = ${accountId} AND key = ${key}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toRecord(rows[0]))),
      Effect.orDie
    )

  const prune = (before: number) =>
    sql<{ pruned: unknown }>`WITH pruned AS (
        DELETE FROM idempotency_keys WHERE started_at < ${toDate(before)} RETURNING 1
      ) SELECT count(*) AS pruned FROM pruned`.pipe(
      Effect.map((rows) => Number(rows[0]!.pruned)),
      Effect.orDie
    )

  return IdempotencyStore.IdempotencyStore.of({ begin, complete, release, find, prune })
})

export const layer = Layer.effect(IdempotencyStore.IdempotencyStore, make)
