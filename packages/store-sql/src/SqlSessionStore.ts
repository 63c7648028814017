import { Session, SessionStore } from "@dropshelf/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { instant, instantOrNull, int, toDate } from "./Rows.ts"

/*
 * Sign-in links and sessions of the account area (migration 0017), by the digest of their
 * token. A redeem is one statement: the link's UPDATE takes its row lock, so of two concurrent
 * redeems the second re-reads the row, finds it used, and inserts no session.
 */

type Row = Record<string, unknown>

const SESSION_COLUMNS = "id, account_id, digest, created_at, last_seen_at, expires_at, ended_at"

const toSession = (row: Row): Session.SessionRecord => ({
  id: row.id as string,
  accountId: row.account_id as string,
  digest: row.digest as string,
  createdAt: instant(row.created_at),
  lastSeenAt: instant(row.last_seen_at),
  expiresAt: instant(row.expires_at),
  endedAt: instantOrNull(row.ended_at)
})

const newId = () => `sess_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(SESSION_COLUMNS)

  const issueLink = (link: { readonly accountId: string; readonly digest: string; readonly createdAt: number; readonly expiresAt: number }) =>
    sql`INSERT INTO sign_in_links (digest, account_id, created_at, expires_at)
      VALUES (${link.digest}, ${link.accountId}, ${toDate(link.createdAt)}, ${toDate(link.expiresAt)})`.pipe(Effect.asVoid, Effect.orDie)

  const redeemLink = (request: {
    readonly linkDigest: string
    readonly session: { readonly digest: string; readonly expiresAt: number }
    readonly at: number
  }) =>
    sql<Row>`WITH spent AS (
        UPDATE sign_in_links SET used_at = ${toDate(request.at)}
        WHERE digest = ${request.linkDigest} AND used_at IS NULL AND expires_at > ${toDate(request.at)}
        RETURNING account_id
      )
      INSERT INTO sessions (id, account_id, digest, created_at, last_seen_at, expires_at)
      SELECT ${newId()}, account_id, ${request.session.digest},
        ${toDate(request.at)}, ${toDate(request.at)}, ${toDate(request.session.expiresAt)}
      FROM spent
      RETURNING ${columns}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toSession(rows[0]))),
      Effect.orDie
    )

  const createSession = (request: {
    readonly accountId: string
    readonly session: { readonly digest: string; readonly expiresAt: number }
    readonly at: number
  }) =>
    sql<Row>`INSERT INTO sessions (id, account_id, digest, created_at, last_seen_at, expires_at)
      SELECT ${newId()}, id, ${request.session.digest}, ${toDate(request.at)}, ${toDate(request.at)}, ${toDate(request.session.expiresAt)}
      FROM accounts WHERE id = ${request.accountId}
      RETURNING ${columns}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toSession(rows[0]))),
      Effect.orDie
    )

  const findSession = (digest: string) =>
    sql<Row>`SELECT ${columns} FROM sessions WHERE digest = ${digest}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toSession(rows[0]))),
      Effect.orDie
    )

  const touchSession = (id: string, at: number) =>
    sql`UPDATE sessions SET last_seen_at = ${toDate(at)} WHERE id = ${id} AND last_seen_at < ${toDate(at)}`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

  const endSession = (id: string, at: number) =>
    sql`UPDATE sessions SET ended_at = ${toDate(at)} WHERE id = ${id} AND ended_at IS NULL`.pipe(Effect.asVoid, Effect.orDie)

  const endAccountSessions = (accountId: string, at: number) =>
    sql<{ ended: unknown }>`WITH ended AS (
        UPDATE sessions SET ended_at = ${toDate(at)} WHERE account_id = ${accountId} AND ended_at IS NULL RETURNING 1
      ) SELECT count(*) AS ended FROM ended`.pipe(
      Effect.map((rows) => int(rows[0]!.ended)),
      Effect.orDie
    )

  // Session.linkOverAt and Session.overAt, as conditions: over before `before`.
  const prune = (before: number) =>
    sql<{ links: unknown; sessions: unknown }>`WITH links AS (
        DELETE FROM sign_in_links WHERE used_at < ${toDate(before)} OR expires_at < ${toDate(before)} RETURNING 1
      ), sessions AS (
        DELETE FROM sessions
        WHERE ended_at < ${toDate(before)} OR expires_at < ${toDate(before)} OR last_seen_at < ${toDate(before - Session.IDLE_MS)}
        RETURNING 1
      ) SELECT (SELECT count(*) FROM links) AS links, (SELECT count(*) FROM sessions) AS sessions`.pipe(
      Effect.map((rows) => ({ links: int(rows[0]!.links), sessions: int(rows[0]!.sessions) })),
      Effect.orDie,
      Effect.withSpan("SqlSessionStore.prune")
    )

  return SessionStore.SessionStore.of({ issueLink, redeemLink, createSession, findSession, touchSession, endSession, endAccountSessions, prune })
})

export const layer = Layer.effect(SessionStore.SessionStore, make)
