import type { Plan, WatchStore } from "@dropshelf/core"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { toDate } from "./Rows.ts"
import { type Row, toJob, toWatch, WATCH_COLUMNS } from "./WatchRows.ts"

/*
 * The delivery outbox. Deliveries are leased (`lease_until`) by a single UPDATE over rows taken
 * with SKIP LOCKED; a worker that dies holding one leaves it to the next worker when the lease
 * ends. An attempt's outcome is recorded with the job's new state in one transaction.
 */

export const make = (sql: SqlClient.SqlClient) => {
  const watchColumns = sql.literal(WATCH_COLUMNS)

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

  return { claimDeliveries, finishAttempt }
}
