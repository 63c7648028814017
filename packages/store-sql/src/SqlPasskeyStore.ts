import { type Passkey, PasskeyStore } from "@dropshelf/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { instant, instantOrNull, int, json, toDate } from "./Rows.ts"

/*
 * Passkeys and their ceremonies' challenges (migration 0019). Taking a challenge is one
 * DELETE … RETURNING: of two requests answering one challenge, the second finds no row.
 */

type Row = Record<string, unknown>

const PASSKEY_COLUMNS = "id, account_id, name, public_key, counter, transports, created_at, last_used_at"
const CHALLENGE_COLUMNS = "id, purpose, challenge, session_id, created_at, expires_at"

const toPasskey = (row: Row): Passkey.PasskeyRecord => ({
  id: row.id as string,
  accountId: row.account_id as string,
  name: row.name as string,
  publicKey: row.public_key as string,
  counter: int(row.counter),
  transports: json(row.transports) as ReadonlyArray<string>,
  createdAt: instant(row.created_at),
  lastUsedAt: instantOrNull(row.last_used_at)
})

const toChallenge = (row: Row): Passkey.ChallengeRecord => ({
  id: row.id as string,
  purpose: row.purpose as Passkey.ChallengeRecord["purpose"],
  challenge: row.challenge as string,
  sessionId: (row.session_id as string | null) ?? null,
  createdAt: instant(row.created_at),
  expiresAt: instant(row.expires_at)
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const passkeyColumns = sql.literal(PASSKEY_COLUMNS)
  const challengeColumns = sql.literal(CHALLENGE_COLUMNS)
  const one = <A>(rows: ReadonlyArray<Row>, to: (row: Row) => A) => (rows[0] === undefined ? undefined : to(rows[0]))

  const addChallenge = (challenge: Passkey.ChallengeRecord) =>
    Effect.gen(function*() {
      yield* sql`DELETE FROM passkey_challenges WHERE expires_at <= ${toDate(challenge.createdAt)}`
      yield* sql`INSERT INTO passkey_challenges (id, purpose, challenge, session_id, created_at, expires_at)
        VALUES (${challenge.id}, ${challenge.purpose}, ${challenge.challenge}, ${challenge.sessionId},
          ${toDate(challenge.createdAt)}, ${toDate(challenge.expiresAt)})`
    }).pipe(Effect.orDie)

  const takeChallenge = (id: string) =>
    sql<Row>`DELETE FROM passkey_challenges WHERE id = ${id} RETURNING ${challengeColumns}`.pipe(
      Effect.map((rows) => one(rows, toChallenge)),
      Effect.orDie
    )

  const addPasskey = (passkey: Passkey.PasskeyRecord) =>
    sql<Row>`INSERT INTO passkeys (id, account_id, name, public_key, counter, transports, created_at, last_used_at)
      VALUES (${passkey.id}, ${passkey.accountId}, ${passkey.name}, ${passkey.publicKey}, ${passkey.counter},
        ${JSON.stringify(passkey.transports)}::jsonb, ${toDate(passkey.createdAt)},
        ${passkey.lastUsedAt === null ? null : toDate(passkey.lastUsedAt)})
      ON CONFLICT (id) DO NOTHING
      RETURNING id`.pipe(
      Effect.map((rows) => rows.length === 1),
      Effect.orDie
    )

  const findPasskey = (id: string) =>
    sql<Row>`SELECT ${passkeyColumns} FROM passkeys WHERE id = ${id}`.pipe(Effect.map((rows) => one(rows, toPasskey)), Effect.orDie)

  const listPasskeys = (accountId: string) =>
    sql<Row>`SELECT ${passkeyColumns} FROM passkeys WHERE account_id = ${accountId} ORDER BY created_at, id`.pipe(
      Effect.map((rows) => rows.map(toPasskey)),
      Effect.orDie
    )

  const usePasskey = (id: string, counter: number, at: number) =>
    sql`UPDATE passkeys SET counter = ${counter}, last_used_at = ${toDate(at)} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

  const deletePasskey = (accountId: string, id: string) =>
    sql<Row>`DELETE FROM passkeys WHERE id = ${id} AND account_id = ${accountId} RETURNING ${passkeyColumns}`.pipe(
      Effect.map((rows) => one(rows, toPasskey)),
      Effect.orDie
    )

  return PasskeyStore.PasskeyStore.of({ addChallenge, takeChallenge, addPasskey, findPasskey, listPasskeys, usePasskey, deletePasskey })
})

export const layer = Layer.effect(PasskeyStore.PasskeyStore, make)
