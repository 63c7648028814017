import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { instant } from "./Rows.ts"

/**
 * An instant before which every row that will ever be visible is visible now, `lagSeconds`
 * behind the database clock. updated_at is the time of the write, not of the commit: a
 * transaction that stamped a row and has not committed yet can still make that row visible with
 * an updated_at in the past. So the watermark never passes the start of the oldest open
 * transaction that has written anything (it holds an xid).
 */
export const readWatermark = (sql: SqlClient.SqlClient, lagSeconds: number) =>
  sql<{ synced_at: unknown }>`SELECT LEAST(
      clock_timestamp() - make_interval(secs => ${lagSeconds}),
      (SELECT min(xact_start) FROM pg_stat_activity
        WHERE backend_xid IS NOT NULL AND datname = current_database() AND pid <> pg_backend_pid())
    ) AS synced_at`.pipe(
    Effect.map((rows) => instant(rows[0]!.synced_at)),
    Effect.orDie
  )
