import { Errors, type Ids, KeyStore, type Time } from "@dropshelf/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AuthCache } from "./AuthCache.ts"
import { toAccount } from "./SqlAccountStore.ts"
import { instant, instantOrNull, int, toDate } from "./Rows.ts"

/*
 * API keys, stored only as the SHA-256 digest of the secret (computed by the core) and a
 * unique display prefix. Creating a key locks the account row, so the live-key ceiling holds
 * when two operators create keys for one account at once.
 */

type Row = Record<string, unknown>

const KEY_COLUMNS = "id, account_id, name, prefix, digest, created_at, last_used_at, revoked_at"

const toKey = (row: Row): KeyStore.KeyRecord => ({
  id: row.id as Ids.KeyId,
  accountId: row.account_id as string,
  name: row.name as string,
  prefix: row.prefix as string,
  digest: row.digest as string,
  createdAt: instant(row.created_at),
  lastUsedAt: instantOrNull(row.last_used_at),
  revokedAt: instantOrNull(row.revoked_at)
})

/** Signals a full account inside the transaction, which then rolls back. */
class LimitReached {
  readonly _tag = "LimitReached"
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cache = yield* AuthCache
  const columns = sql.literal(KEY_COLUMNS)

  const create = (request: {
    readonly accountId: string
    readonly name: string
    readonly prefix: string
    readonly digest: string
    readonly liveLimit: number
    readonly at: Time.Instant
  }) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT id FROM accounts WHERE id = ${request.accountId} FOR UPDATE`
      const live = yield* sql<{ live: unknown }>`SELECT count(*) AS live FROM api_keys
        WHERE account_id = ${request.accountId} AND revoked_at IS NULL`
      if (int(live[0]!.live) >= request.liveLimit) return yield* Effect.fail(new LimitReached())
      const rows = yield* sql<Row>`INSERT INTO api_keys (id, account_id, name, prefix, digest, created_at)
        VALUES (${`key_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`}, ${request.accountId}, ${request.name},
          ${request.prefix}, ${request.digest}, ${toDate(request.at)})
        RETURNING ${columns}`
      return toKey(rows[0]!)
    })).pipe(
      Effect.catchIf(
        (error): error is LimitReached => error instanceof LimitReached,
        () => Effect.fail(new Errors.KeyLimitReached({ limit: request.liveLimit }))
      ),
      Effect.catchTag("SqlError", Effect.die)
    )

  const lookUp = (digest: string) =>
    sql<Row>`SELECT k.id, k.account_id, k.name, k.prefix, k.digest, k.created_at, k.last_used_at, k.revoked_at,
        a.id AS a_id, a.name AS a_name, a.plan AS a_plan, a.created_at AS a_created_at
      FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE k.digest = ${digest}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : { key: toKey(rows[0]), account: toAccount(rows[0], "a_") })),
      Effect.orDie
    )

  /**
   * A live key's look-up is reused from AuthCache while fresh. Unknown and revoked digests are
   * never remembered here, so both cost the same statement (the core remembers them instead).
   */
  const findByDigest = (digest: string) =>
    Effect.suspend(() => {
      const cached = cache.get(digest)
      if (cached !== undefined) return Effect.succeed(cached)
      const generation = cache.generation()
      return Effect.map(lookUp(digest), (found) => {
        if (found !== undefined && found.key.revokedAt === null) cache.set(digest, found, generation)
        return found
      })
    })

  const anyLiveWithPrefix = (start: string) =>
    sql<{ live: unknown }>`SELECT EXISTS (
        SELECT 1 FROM api_keys WHERE revoked_at IS NULL AND starts_with(prefix, ${start})
      ) AS live`.pipe(
      Effect.map((rows) => rows[0]!.live === true),
      Effect.orDie
    )

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

  return KeyStore.KeyStore.of({ create, findByDigest, anyLiveWithPrefix, touch, revoke })
})

export const layer = Layer.effect(KeyStore.KeyStore, make)
