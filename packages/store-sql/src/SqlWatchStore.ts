import { Errors, type Plan, type Time, Watch, WatchStore } from "@dropshelf/core"
import { Effect, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { COLUMNS, toRecord } from "./ListingRows.ts"
import { instant, instantOrNull, int, json, textOrNull, toDate, toDateOrNull } from "./Rows.ts"
import * as SharedReads from "./SharedReads.ts"

/*
 * Watches, matches and the delivery outbox (migration 0006). Change events are written by
 * triggers on `listings`; a matching round takes due events with FOR UPDATE SKIP LOCKED and
 * deletes them, records the matches and their delivery jobs, and schedules follow-ups, all in
 * one transaction, so a crash anywhere in it loses nothing and two workers never take one
 * event. Deliveries are leased (`lease_until`) by a single UPDATE over rows taken with SKIP
 * LOCKED; a worker that dies holding one leaves it to the next worker when the lease ends. The
 * limit of watches per account is counted under a transaction-scoped advisory lock.
 */

type Row = Record<string, unknown>
type WatchRecord = WatchStore.WatchRecord

const WATCH_COLUMNS = `w.id, w.account_id, w.name, w.query, w.paused, w.webhook_url, w.webhook_secret,
  w.webhook_previous_secret, w.webhook_previous_until, w.webhook_state, w.webhook_state_reason, w.created_at, w.updated_at`

/** Matches, or attempts, deleted per statement in `prune`. */
const PRUNE_CHUNK = 1000

/** Advisory-lock namespace of per-account watch limits. */
const ACCOUNT_WATCH_LOCK = 0x77_61_74_63 // "watc"

const toWatch = (row: Row): WatchRecord => ({
  id: String(row.id),
  accountId: String(row.account_id),
  name: String(row.name),
  query: json(row.query) as Watch.QueryText,
  paused: row.paused === true,
  webhook: row.webhook_url === null || row.webhook_url === undefined ? null : {
    url: String(row.webhook_url),
    secret: String(row.webhook_secret),
    previousSecret: textOrNull(row.webhook_previous_secret),
    previousSecretUntil: instantOrNull(row.webhook_previous_until),
    state: (row.webhook_state ?? "active") as WatchStore.WebhookState,
    stateReason: textOrNull(row.webhook_state_reason)
  },
  createdAt: instant(row.created_at),
  updatedAt: instant(row.updated_at)
})

const toMatch = (row: Row): WatchStore.MatchRecord => ({
  id: String(row.id),
  seq: int(row.seq),
  watchId: String(row.watch_id),
  listingId: String(row.listing_id),
  matchedAt: instant(row.matched_at)
})

const toJob = (row: Row): WatchStore.DeliveryJob => ({
  eventId: String(row.event_id),
  watchId: String(row.watch_id),
  listingId: String(row.listing_id),
  matchedAt: instant(row.matched_at),
  attempts: int(row.attempts),
  state: row.state as WatchStore.DeliveryState,
  nextAttemptAt: instant(row.next_attempt_at),
  manual: row.manual === true
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const scope = yield* Scope.Scope
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

  const matchRound: WatchStore.WatchStore["Service"]["matchRound"] = ({ limit, now, plan }) =>
    sql.withTransaction(Effect.gen(function*() {
      const at = toDate(now)
      // The row before an update comes back as listing columns, read as any listing row is.
      const taken = yield* sql`WITH due AS (
          SELECT seq FROM watch_events WHERE due_at <= ${at} ORDER BY due_at, seq LIMIT ${limit} FOR UPDATE SKIP LOCKED
        ),
        taken AS (
          DELETE FROM watch_events e USING due WHERE e.seq = due.seq
          RETURNING e.seq, e.listing_id, e.due_at, e.kind, e.previous
        )
        SELECT taken.seq, taken.listing_id, taken.due_at, taken.kind, p.*
        FROM taken LEFT JOIN LATERAL (
          SELECT ${sql.literal(COLUMNS)} FROM jsonb_populate_record(NULL::listings, taken.previous)
        ) p ON taken.previous IS NOT NULL`.values
      if (taken.length === 0) return { events: 0, matches: 0 }
      const events = taken.map((row) => ({
        seq: int(row[0]),
        listingId: String(row[1]),
        dueAt: instant(row[2]),
        kind: row[3] as Watch.DueEvent["kind"],
        previous: row[4] === null || row[4] === undefined ? undefined : toRecord(row.slice(4))
      })).sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq)
      const ids = [...new Set(events.map((event) => event.listingId))]
      const listingRows = yield* sql`SELECT ${sql.literal(COLUMNS)} FROM listings WHERE id = ANY(${ids}::text[])`.values
      const listings = new Map(listingRows.map((row) => {
        const record = toRecord(row)
        return [record.id as string, record] as const
      }))
      const generationRows = yield* sql<Row>`SELECT listing_id, generation FROM listing_generations WHERE listing_id = ANY(${ids}::text[])`
      const generations = new Map(generationRows.map((row) => [String(row.listing_id), int(row.generation)] as const))
      const candidates = (yield* sql<Row>`SELECT w.id, w.account_id, a.plan, w.query, w.created_at
        FROM watches w JOIN accounts a ON a.id = w.account_id WHERE NOT w.paused`).map((row): WatchStore.CandidateRow => ({
          watchId: String(row.id),
          accountId: String(row.account_id),
          plan: row.plan as Plan.StoredPlan,
          query: json(row.query) as Watch.QueryText,
          createdAt: instant(row.created_at)
        }))
      const round = plan(
        events.map((event) => ({
          event: { listingId: event.listingId, dueAt: event.dueAt, kind: event.kind, previous: event.previous },
          listing: listings.get(event.listingId),
          generation: generations.get(event.listingId) ?? 0
        })),
        candidates
      )
      let recorded = 0
      if (round.matches.length > 0) {
        const inserted = yield* sql<Row>`WITH found AS (
            SELECT * FROM jsonb_to_recordset(${JSON.stringify(round.matches)}::jsonb)
              AS r("watchId" text, "listingId" text, generation integer, id text)
          ),
          added AS (
            INSERT INTO watch_matches (id, watch_id, listing_id, generation, matched_at)
            SELECT coalesce(found.id, 'msg_' || replace(gen_random_uuid()::text, '-', '')), found."watchId", found."listingId", found.generation, ${at}
            FROM found JOIN watches w ON w.id = found."watchId"
            ON CONFLICT (watch_id, listing_id, generation) DO NOTHING
            RETURNING id, watch_id, listing_id, matched_at
          ),
          jobs AS (
            INSERT INTO watch_deliveries (event_id, watch_id, listing_id, matched_at, state, next_attempt_at)
            SELECT added.id, added.watch_id, added.listing_id, added.matched_at, 'pending', added.matched_at
            FROM added JOIN watches w ON w.id = added.watch_id WHERE w.webhook_url IS NOT NULL
            RETURNING event_id
          )
          SELECT (SELECT count(*) FROM added) AS matches, (SELECT count(*) FROM jobs) AS jobs`
        recorded = int(inserted[0]!.matches)
      }
      if (round.followUps.length > 0) {
        yield* sql`INSERT INTO watch_events (listing_id, due_at, kind)
          SELECT r."listingId", to_timestamp(r."dueAt" / 1000.0), 'clock'
          FROM jsonb_to_recordset(${JSON.stringify(round.followUps)}::jsonb) AS r("listingId" text, "dueAt" bigint)`
      }
      return { events: events.length, matches: recorded }
    })).pipe(Effect.orDie, Effect.withSpan("SqlWatchStore.matchRound", undefined, { captureStackTrace: false }))

  const claimDeliveries: WatchStore.WatchStore["Service"]["claimDeliveries"] = ({ leaseUntil, limit, now }) =>
    sql<Row>`WITH claimed AS (
        SELECT d.event_id FROM watch_deliveries d JOIN watches w ON w.id = d.watch_id
        WHERE d.state = 'pending' AND d.next_attempt_at <= ${toDate(now)}
          AND (d.lease_until IS NULL OR d.lease_until <= ${toDate(now)})
          AND NOT w.paused AND w.webhook_url IS NOT NULL AND w.webhook_state = 'active'
        ORDER BY d.next_attempt_at, d.event_id
        LIMIT ${limit}
        FOR UPDATE OF d SKIP LOCKED
      ),
      leased AS (
        UPDATE watch_deliveries d SET lease_until = ${toDate(leaseUntil)} FROM claimed WHERE d.event_id = claimed.event_id
        RETURNING d.event_id, d.watch_id AS job_watch_id, d.listing_id, d.matched_at, d.attempts, d.state, d.next_attempt_at, d.manual
      )
      SELECT leased.*, ${watchColumns}, a.plan AS account_plan
      FROM leased JOIN watches w ON w.id = leased.job_watch_id JOIN accounts a ON a.id = w.account_id
      ORDER BY leased.next_attempt_at, leased.event_id`.pipe(
      Effect.map((rows) =>
        rows.map((row): WatchStore.ClaimedDelivery => ({
          job: toJob({ ...row, watch_id: row.job_watch_id }),
          watch: toWatch(row),
          accountPlan: row.account_plan as Plan.StoredPlan
        }))
      ),
      Effect.orDie
    )

  const finishAttempt: WatchStore.WatchStore["Service"]["finishAttempt"] = (attempt, outcome) =>
    sql.withTransaction(Effect.gen(function*() {
      const jobs = yield* sql<Row>`INSERT INTO watch_delivery_attempts
          (event_id, watch_id, attempt, attempted_at, duration_ms, status_code, error)
        SELECT event_id, watch_id, ${attempt.attempt}, ${toDate(attempt.at)}, ${Math.round(attempt.durationMs)},
          ${attempt.statusCode}, ${attempt.error}
        FROM watch_deliveries WHERE event_id = ${attempt.eventId}
        ON CONFLICT (event_id, attempt) DO NOTHING
        RETURNING watch_id`
      if (jobs.length === 0) return
      const watchId = String(jobs[0]!.watch_id)
      switch (outcome._tag) {
        case "Delivered":
          yield* sql`UPDATE watch_deliveries SET attempts = attempts + 1, state = 'delivered', manual = false, lease_until = NULL
            WHERE event_id = ${attempt.eventId}`
          return
        case "Retry":
          yield* sql`UPDATE watch_deliveries SET attempts = attempts + 1, next_attempt_at = ${toDate(outcome.at)}, lease_until = NULL
            WHERE event_id = ${attempt.eventId}`
          return
        default: {
          yield* sql`UPDATE watch_deliveries SET attempts = attempts + 1, state = 'failed', manual = false, lease_until = NULL
            WHERE event_id = ${attempt.eventId}`
          if (outcome._tag === "Failed") return
          yield* sql`UPDATE watches SET webhook_state = ${outcome._tag === "Gone" ? "disabled" : "paused"},
            webhook_state_reason = ${outcome.reason} WHERE id = ${watchId} AND webhook_url IS NOT NULL`
        }
      }
    })).pipe(Effect.orDie)

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
  const sharedForAccounts = SharedReads.makeOutsideTransactions(sql, scope, forAccounts)

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
