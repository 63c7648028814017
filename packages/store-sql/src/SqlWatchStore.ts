import { Errors, type Time, Watch, WatchStore } from "@dropshelf/core"
import { Effect, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as MatchRound from "./MatchRound.ts"
import { instant, instantOrNull, int, textOrNull, toDate, toDateOrNull } from "./Rows.ts"
import * as SharedReads from "./SharedReads.ts"
import { StoreCaches } from "./StoreCaches.ts"
import * as WatchDeliveries from "./WatchDeliveries.ts"
import { type Row, toJob, toMatch, toWatch, WATCH_COLUMNS, type WatchRecord } from "./WatchRows.ts"

/*
 * Watches, matches and the delivery outbox (migration 0006), composed of: WatchRows (columns
 * and row decoding), MatchRound (a matching round in one transaction) and WatchDeliveries (the
 * leased outbox). The limit of watches per account is counted under a transaction-scoped
 * advisory lock.
 */

/** Matches, or attempts, deleted per statement in `prune`. */
const PRUNE_CHUNK = 1000

/** Advisory-lock namespace of per-account watch limits. */
const ACCOUNT_WATCH_LOCK = 0x77_61_74_63 // "watc"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const scope = yield* Scope.Scope
  const { sharedReads } = yield* StoreCaches
  const watchColumns = sql.literal(WATCH_COLUMNS)

  const writeColumns = (watch: WatchRecord) => ({
    name: watch.name,
    query: JSON.stringify(watch.query),
    paused: watch.paused,
    webhook_url: watch.webhook?.url ?? null,
    webhook_secret: watch.webhook?.secret ?? null,
    webhook_previous_secret: watch.webhook?.previousSecret ?? null,
    webhook_previous_until: toDateOrNull(watch.webhook?.previousSecretUntil ?? null),
    webhook_state: watch.webhook?.state ?? null,
    webhook_state_reason: watch.webhook?.stateReason ?? null,
    updated_at: toDate(watch.updatedAt)
  })

  const findOwn = (accountId: string, watchId: string, lock: boolean) =>
    sql<Row>`SELECT ${watchColumns} FROM watches w WHERE w.id = ${watchId} AND w.account_id = ${accountId}
      ${lock ? sql.literal("FOR UPDATE") : sql.literal("")}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toWatch(rows[0])))
    )

  const create = (watch: WatchRecord, limit: number) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${ACCOUNT_WATCH_LOCK}, hashtext(${watch.accountId}))`
      const [counted] = yield* sql<{ n: unknown }>`SELECT count(*) AS n FROM watches WHERE account_id = ${watch.accountId}`
      if (int(counted!.n) >= limit) return yield* Effect.fail(new Errors.WatchLimitReached({ limit }))
      const [before] = yield* sql<{ any: boolean }>`SELECT EXISTS (SELECT 1 FROM watches) AS any`
      const columns = writeColumns(watch)
      yield* sql`INSERT INTO watches ${
        sql.insert({ id: watch.id, account_id: watch.accountId, created_at: toDate(watch.createdAt), ...columns })
      }`
      if (before?.any !== true) {
        // The triggers recorded nothing while no watch existed (Watch.catchUpFrom).
        yield* sql`INSERT INTO watch_events (listing_id, due_at, kind)
          SELECT id, updated_at, 'change' FROM listings
          WHERE status = 'active' AND discovered_at > ${toDate(Watch.catchUpFrom(watch.createdAt))}`
      }
      return watch
    })).pipe(Effect.catchTag("SqlError", Effect.die))

  const update = (accountId: string, watchId: string, change: (current: WatchRecord) => WatchRecord) =>
    sql.withTransaction(Effect.gen(function*() {
      const current = yield* findOwn(accountId, watchId, true)
      if (current === undefined) return undefined
      const next = change(current)
      yield* sql`UPDATE watches SET ${sql.update(writeColumns(next))} WHERE id = ${watchId}`
      return next
    })).pipe(Effect.orDie)

  const matchRound = MatchRound.make(sql)
  const { claimDeliveries, finishAttempt } = WatchDeliveries.make(sql)

  /**
   * In statements of PRUNE_CHUNK matches, by the index of their time: on the embedded database
   * every request waits for the one connection, so no statement should run long. Old attempts
   * first, so they are counted; a match's delivery and later attempts go with it (ON DELETE CASCADE).
   */
  const prune: WatchStore.WatchStore["Service"]["prune"] = (before) =>
    Effect.gen(function*() {
      const at = toDate(before)
      let matches = 0
      let attempts = 0
      while (true) {
        const rows = yield* sql<Row>`WITH doomed AS (
            SELECT event_id, attempt FROM watch_delivery_attempts WHERE attempted_at < ${at} ORDER BY attempted_at LIMIT ${PRUNE_CHUNK}
          ), deleted AS (
            DELETE FROM watch_delivery_attempts a USING doomed WHERE a.event_id = doomed.event_id AND a.attempt = doomed.attempt RETURNING 1
          ) SELECT (SELECT count(*) FROM doomed) AS found, (SELECT count(*) FROM deleted) AS pruned`
        attempts += int(rows[0]!.pruned)
        if (int(rows[0]!.found) < PRUNE_CHUNK) break
      }
      while (true) {
        const rows = yield* sql<Row>`WITH doomed AS (
            SELECT id FROM watch_matches WHERE matched_at < ${at} ORDER BY matched_at LIMIT ${PRUNE_CHUNK}
          ), deleted AS (
            DELETE FROM watch_matches m USING doomed WHERE m.id = doomed.id RETURNING 1
          ) SELECT (SELECT count(*) FROM doomed) AS found, (SELECT count(*) FROM deleted) AS pruned`
        matches += int(rows[0]!.pruned)
        if (int(rows[0]!.found) < PRUNE_CHUNK) break
      }
      return { matches, attempts }
    }).pipe(Effect.orDie, Effect.withSpan("SqlWatchStore.prune"))

  /** The watches of every account asked for, each account's oldest first. */
  const forAccounts = (accountIds: ReadonlyArray<string>) =>
    sql<Row>`SELECT ${watchColumns} FROM watches w WHERE w.account_id = ANY(${[...new Set(accountIds)]}::text[])
      ORDER BY w.created_at, w.id`.pipe(
      Effect.map((rows) => {
        const watches = rows.map(toWatch)
        return accountIds.map((accountId) => watches.filter((watch) => watch.accountId === accountId))
      }),
      Effect.orDie
    )

  // Every `/watches` asks its account's watches: concurrent asks, of any accounts, share one statement.
  const sharedForAccounts = SharedReads.makeOutsideTransactions(sql, scope, forAccounts, sharedReads)

  return WatchStore.WatchStore.of({
    create,
    forAccount: (accountId) => sharedForAccounts("forAccount", accountId),
    find: (accountId, watchId) => Effect.orDie(findOwn(accountId, watchId, false)),
    update,
    remove: (accountId, watchId) =>
      sql`DELETE FROM watches WHERE id = ${watchId} AND account_id = ${accountId} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    matches: (watchId, afterSeq, limit) =>
      sql<Row>`SELECT seq, id, watch_id, listing_id, matched_at FROM watch_matches
        WHERE watch_id = ${watchId} AND seq > ${afterSeq ?? 0} ORDER BY seq LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map(toMatch)),
        Effect.orDie
      ),
    findMatch: (watchId, matchId) =>
      sql<Row>`SELECT seq, id, watch_id, listing_id, matched_at FROM watch_matches WHERE watch_id = ${watchId} AND id = ${matchId}`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : toMatch(rows[0]))),
        Effect.orDie
      ),
    attempts: (watchId, limit) =>
      sql<Row>`SELECT event_id, attempt, attempted_at, duration_ms, status_code, error FROM watch_delivery_attempts
        WHERE watch_id = ${watchId} ORDER BY attempted_at DESC, attempt DESC LIMIT ${limit}`.pipe(
        Effect.map((rows) =>
          rows.map((row): WatchStore.AttemptRecord => ({
            eventId: String(row.event_id),
            attempt: int(row.attempt),
            at: instant(row.attempted_at),
            durationMs: int(row.duration_ms),
            statusCode: row.status_code === null || row.status_code === undefined ? null : int(row.status_code),
            error: textOrNull(row.error)
          }))
        ),
        Effect.orDie
      ),
    findDelivery: (watchId, eventId) =>
      sql<Row>`SELECT event_id, watch_id, listing_id, matched_at, attempts, state, next_attempt_at, manual
        FROM watch_deliveries WHERE watch_id = ${watchId} AND event_id = ${eventId}`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : toJob(rows[0]))),
        Effect.orDie
      ),
    resend: (watchId, eventId, at) =>
      sql`UPDATE watch_deliveries SET state = 'pending', next_attempt_at = ${toDate(at)}, manual = true, lease_until = NULL
        WHERE watch_id = ${watchId} AND event_id = ${eventId} RETURNING event_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    matchRound,
    pendingEvents: sql<Row>`SELECT count(*) AS n, min(due_at) AS next FROM watch_events`.pipe(
      Effect.map((rows) => ({ count: int(rows[0]!.n), nextDueAt: instantOrNull(rows[0]!.next) as Time.Instant | null })),
      Effect.orDie
    ),
    pendingDeliveries: sql<Row>`SELECT count(*) AS n, min(matched_at) AS oldest FROM watch_deliveries WHERE state = 'pending'`.pipe(
      Effect.map((rows) => ({ count: int(rows[0]!.n), oldestMatchedAt: instantOrNull(rows[0]!.oldest) as Time.Instant | null })),
      Effect.orDie
    ),
    claimDeliveries,
    releaseLeases: sql`UPDATE watch_deliveries SET lease_until = NULL WHERE lease_until IS NOT NULL RETURNING event_id`.pipe(
      Effect.map((rows) => rows.length),
      Effect.orDie
    ),
    finishAttempt,
    prune
  })
})

export const layer = Layer.effect(WatchStore.WatchStore, make)
