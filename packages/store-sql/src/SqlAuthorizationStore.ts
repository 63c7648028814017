import { AuthorizationStore, type Time } from "@dropshelf/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { json, toDate } from "./Rows.ts"

/* The authorization server's documents (migration 0021): one row each, found by kind and id. */

type Row = Record<string, unknown>

const payloadOf = (rows: ReadonlyArray<Row>): unknown => {
  const row = rows[0]
  if (row === undefined) return undefined
  const payload = json(row.payload) as object
  const consumedAt = row.consumed_at
  return consumedAt === null || consumedAt === undefined
    ? payload
    : { ...payload, consumed: Math.floor(new Date(consumedAt as string | Date).getTime() / 1000) }
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const live = (at: Time.Instant) => sql`(expires_at IS NULL OR expires_at > ${toDate(at)})`

  const upsert = (document: AuthorizationStore.AuthorizationDocument) =>
    sql`INSERT INTO authorization_documents (kind, id, payload, grant_id, uid, user_code, expires_at)
      VALUES (${document.kind}, ${document.id}, ${JSON.stringify(document.payload)}, ${document.grantId ?? null},
        ${document.uid ?? null}, ${document.userCode ?? null},
        ${document.expiresAt === null ? null : toDate(document.expiresAt)})
      ON CONFLICT (kind, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid,
        user_code = EXCLUDED.user_code, expires_at = EXCLUDED.expires_at, consumed_at = NULL`.pipe(Effect.asVoid, Effect.orDie)

  const find = (kind: string, id: string, at: Time.Instant) =>
    sql<Row>`SELECT payload, consumed_at FROM authorization_documents
      WHERE kind = ${kind} AND id = ${id} AND ${live(at)}`.pipe(Effect.map(payloadOf), Effect.orDie)

  const findByUid = (kind: string, uid: string, at: Time.Instant) =>
    sql<Row>`SELECT payload, consumed_at FROM authorization_documents
      WHERE kind = ${kind} AND uid = ${uid} AND ${live(at)} LIMIT 1`.pipe(Effect.map(payloadOf), Effect.orDie)

  const findByUserCode = (kind: string, userCode: string, at: Time.Instant) =>
    sql<Row>`SELECT payload, consumed_at FROM authorization_documents
      WHERE kind = ${kind} AND user_code = ${userCode} AND ${live(at)} LIMIT 1`.pipe(Effect.map(payloadOf), Effect.orDie)

  const consume = (kind: string, id: string, at: Time.Instant) =>
    sql`UPDATE authorization_documents SET consumed_at = COALESCE(consumed_at, ${toDate(at)})
      WHERE kind = ${kind} AND id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

  const destroy = (kind: string, id: string) =>
    sql`DELETE FROM authorization_documents WHERE kind = ${kind} AND id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

  const revokeGrant = (grantId: string) =>
    sql`DELETE FROM authorization_documents WHERE grant_id = ${grantId}`.pipe(Effect.asVoid, Effect.orDie)

  const keep = (kind: string, id: string, payload: unknown) =>
    Effect.gen(function*() {
      yield* sql`INSERT INTO authorization_documents (kind, id, payload) VALUES (${kind}, ${id}, ${JSON.stringify(payload)})
        ON CONFLICT (kind, id) DO NOTHING`
      return payloadOf(yield* sql<Row>`SELECT payload, consumed_at FROM authorization_documents WHERE kind = ${kind} AND id = ${id}`)
    }).pipe(Effect.orDie)

  const prune = (at: Time.Instant) =>
    sql<Row>`DELETE FROM authorization_documents WHERE expires_at <= ${toDate(at)} RETURNING 1`.pipe(
      Effect.map((rows) => rows.length),
      Effect.orDie
    )

  return AuthorizationStore.AuthorizationStore.of({ upsert, find, findByUid, findByUserCode, consume, destroy, revokeGrant, keep, prune })
})

export const layer = Layer.effect(AuthorizationStore.AuthorizationStore, make)
