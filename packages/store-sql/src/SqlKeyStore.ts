import { Errors, type Ids, type Keyset, KeyStore, type Time } from "@dropshelf/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { KeyLookups } from "./KeyLookups.ts"
import { toAccount } from "./SqlAccountStore.ts"
import { instant, instantOrNull, int, json, toDate } from "./Rows.ts"

/*
 * API keys, stored only as the SHA-256 digest of the secret (computed by the core) and a
 * unique display prefix. Creating a key locks the account row, so the live-key ceiling holds
 * when two operators create keys for one account at once.
 */

type Row = Record<string, unknown>

const KEY_COLUMNS = "id, account_id, name, prefix, digest, created_at, last_used_at, revoked_at, expires_at, application"

const toKey = (row: Row): KeyStore.KeyRecord => ({
  id: row.id as Ids.KeyId,
  accountId: row.account_id as string,
  name: row.name as string,
  prefix: row.prefix as string,
  digest: row.digest as string,
  createdAt: instant(row.created_at),
  lastUsedAt: instantOrNull(row.last_used_at),
  revokedAt: instantOrNull(row.revoked_at),
  expiresAt: instantOrNull(row.expires_at),
  application: row.application === null || row.application === undefined ? null : json(row.application) as KeyStore.Application
})

/** Signals a full account inside the transaction, which then rolls back. */
class LimitReached {
  readonly _tag = "LimitReached"
}

/** Signals, inside a rotation's transaction, that no live key has the prefix. */
class NoLiveKey {
  readonly _tag = "NoLiveKey"
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cache = yield* KeyLookups
  const columns = sql.literal(KEY_COLUMNS)

  /** Keys of the account live at `at`, other than `except`; the caller holds the account row's lock. */
  const countLive = (accountId: string, at: Time.Instant, except = "") =>
    sql<{ live: unknown }>`SELECT count(*) AS live FROM api_keys
      WHERE account_id = ${accountId} AND id <> ${except} AND revoked_at IS NULL
        AND (expires_at IS NULL OR expires_at > ${toDate(at)})`.pipe(Effect.map((rows) => int(rows[0]!.live)))

  const insert = (accountId: string, fields: KeyStore.NewKey, at: Time.Instant) =>
    sql<Row>`INSERT INTO api_keys (id, account_id, name, prefix, digest, created_at, expires_at, application)
      VALUES (${`key_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`}, ${accountId}, ${fields.name},
        ${fields.prefix}, ${fields.digest}, ${toDate(at)},
        ${fields.expiresAt === undefined || fields.expiresAt === null ? null : toDate(fields.expiresAt)},
        ${fields.application ? JSON.stringify(fields.application) : null})
      RETURNING ${columns}`.pipe(Effect.map((rows) => toKey(rows[0]!)))

  const create = (request: KeyStore.NewKey & {
    readonly accountId: string
    readonly liveLimit: number
    readonly at: Time.Instant
  }) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT id FROM accounts WHERE id = ${request.accountId} FOR UPDATE`
      if ((yield* countLive(request.accountId, request.at)) >= request.liveLimit) return yield* Effect.fail(new LimitReached())
      return yield* insert(request.accountId, request, request.at)
    })).pipe(
      // A digest asked before its key existed was remembered as unknown. Another process's new
      // key is not announced: no one can have asked for a random secret before it was made.
      Effect.ensuring(Effect.sync(() => cache.invalidate())),
      Effect.catchIf(
        (error): error is LimitReached => error instanceof LimitReached,
        () => Effect.fail(new Errors.KeyLimitReached({ limit: request.liveLimit }))
      ),
      Effect.catchTag("SqlError", Effect.die)
    )

  /** The successor and the old key's earlier expiry commit together, or neither does. */
  const rotate = (request: {
    readonly prefix: string
    readonly successor: KeyStore.NewKey
    readonly liveLimit: number
    readonly retireAt: Time.Instant
    readonly at: Time.Instant
  }) =>
    sql.withTransaction(Effect.gen(function*() {
      const owner = yield* sql<{ account_id: string }>`SELECT account_id FROM api_keys WHERE prefix = ${request.prefix}`
      if (owner[0] === undefined) return yield* Effect.fail(new NoLiveKey())
      yield* sql`SELECT id FROM accounts WHERE id = ${owner[0].account_id} FOR UPDATE`
      const old = yield* sql<Row>`SELECT ${columns} FROM api_keys WHERE prefix = ${request.prefix}
        AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${toDate(request.at)}) FOR UPDATE`
      if (old[0] === undefined) return yield* Effect.fail(new NoLiveKey())
      const oldKey = toKey(old[0])
      if ((yield* countLive(oldKey.accountId, request.at, oldKey.id)) >= request.liveLimit) return yield* Effect.fail(new LimitReached())
      const successor = yield* insert(oldKey.accountId, request.successor, request.at)
      const retired = yield* sql<Row>`UPDATE api_keys
        SET expires_at = LEAST(COALESCE(expires_at, ${toDate(request.retireAt)}), ${toDate(request.retireAt)})
        WHERE id = ${oldKey.id} RETURNING ${columns}`
      return { retired: toKey(retired[0]!), successor }
    })).pipe(
      Effect.ensuring(Effect.sync(() => cache.invalidate())),
      Effect.catchIf(
        (error): error is LimitReached => error instanceof LimitReached,
        () => Effect.fail(new Errors.KeyLimitReached({ limit: request.liveLimit }))
      ),
      Effect.catchIf(
        (error): error is NoLiveKey => error instanceof NoLiveKey,
        () => Effect.fail(new Errors.KeyNotFound({ prefix: request.prefix }))
      ),
      Effect.catchTag("SqlError", Effect.die)
    )

  const lookUp = (digest: string) =>
    sql<Row>`SELECT k.id, k.account_id, k.name, k.prefix, k.digest, k.created_at, k.last_used_at, k.revoked_at,
        k.expires_at, k.application, a.id AS a_id, a.name AS a_name, a.plan AS a_plan, a.created_at AS a_created_at, a.email AS a_email
      FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE k.digest = ${digest}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : { key: toKey(rows[0]), account: toAccount(rows[0], "a_") })),
      Effect.orDie
    )

  /** Every answer, a key or none, is reused from KeyLookups while fresh. */
  const findByDigest = (digest: string) =>
    Effect.suspend(() => {
      const cached = cache.get(digest)
      if (cached !== undefined) return Effect.succeed(cached.found)
      const generation = cache.generation()
      return Effect.map(lookUp(digest), (found) => {
        cache.set(digest, found, generation)
        return found
      })
    })

  const touch = (id: Ids.KeyId, at: Time.Instant) =>
    sql`UPDATE api_keys SET last_used_at = ${toDate(at)} WHERE id = ${id}`.pipe(
      Effect.orDie,
      Effect.map(() => cache.touched(id, at))
    )

  /** Revoking a revoked key keeps its first revocation time. */
  const revoke = (prefix: string, at: Time.Instant) =>
    Effect.gen(function*() {
      const rows = yield* sql<Row>`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${toDate(at)})
        WHERE prefix = ${prefix} RETURNING ${columns}`.pipe(Effect.orDie)
      cache.invalidate()
      if (rows[0] === undefined) return yield* new Errors.KeyNotFound({ prefix })
      return toKey(rows[0])
    })

  const findByPrefix = (prefix: string) =>
    sql<Row>`SELECT k.id, k.account_id, k.name, k.prefix, k.digest, k.created_at, k.last_used_at, k.revoked_at,
        k.expires_at, k.application, a.id AS a_id, a.name AS a_name, a.plan AS a_plan, a.created_at AS a_created_at, a.email AS a_email
      FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE k.prefix = ${prefix}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : { key: toKey(rows[0]), account: toAccount(rows[0], "a_") })),
      Effect.orDie
    )

  const forAccount = (accountId: string, page: Keyset.KeysetRequest) =>
    sql<Row>`SELECT ${columns} FROM api_keys
      WHERE account_id = ${accountId}
        AND ${
      page.after === undefined
        ? sql`TRUE`
        : sql`(created_at, id COLLATE "C") > (SELECT created_at, id COLLATE "C" FROM api_keys WHERE id = ${page.after})`
    }
      ORDER BY created_at, id COLLATE "C" LIMIT ${page.limit}`.pipe(
      Effect.map((rows) => rows.map(toKey)),
      Effect.orDie
    )

  return KeyStore.KeyStore.of({ create, findByDigest, touch, revoke, findByPrefix, forAccount, rotate })
})

export const layer = Layer.effect(KeyStore.KeyStore, make)
