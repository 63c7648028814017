import type { Plan, Watch, WatchStore } from "@dropshelf/core"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { COLUMNS, LISTING_COLUMNS, toRecord } from "./ListingRows.ts"
import { UPSERT_COLUMNS } from "./ListingWrites.ts"
import { instant, int, json, toDate } from "./Rows.ts"
import type { Row } from "./WatchRows.ts"

/*
 * A matching round. Change events are written by triggers on `listings`; a round takes due
 * events with FOR UPDATE SKIP LOCKED and deletes them, records the matches and their delivery
 * jobs, and schedules follow-ups, all in one transaction, so a crash anywhere in it loses
 * nothing and two workers never take one event.
 */

/*
 * The row before an update, read from its jsonb with the listing columns' types spelled out, not
 * as `jsonb_populate_record(NULL::listings, …)`: a prepared statement holding listings' row type
 * fails once a first load has put a new listings table in place (FirstLoad.ts).
 */
const typeOf = new Map<string, string>([...UPSERT_COLUMNS.map(([name, type]) => [name, type] as const), ["updated_at", "timestamptz"]])
const PREVIOUS_COLUMNS = LISTING_COLUMNS.map((name) => `${name} ${typeOf.get(name)!}`).join(", ")

export const make = (sql: SqlClient.SqlClient) => {
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
          SELECT ${sql.literal(COLUMNS)} FROM jsonb_to_record(taken.previous) AS previous(${sql.literal(PREVIOUS_COLUMNS)})
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

  return matchRound
}
