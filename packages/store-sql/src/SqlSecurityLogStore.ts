import { type SecurityEvent, SecurityLogStore } from "@dropshelf/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { instant, toDate } from "./Rows.ts"

/* The accounts' security logs (migration 0020): one row an event, its id the row's sequence number. */

type Row = Record<string, unknown>

const toEvent = (row: Row): SecurityEvent.SecurityEventRecord => ({
  id: String(row.id),
  accountId: row.account_id as string,
  kind: row.kind as string,
  at: instant(row.at),
  detail: (row.detail as string | null) ?? null
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const record = (event: SecurityEvent.NewSecurityEvent) =>
    sql<Row>`INSERT INTO security_events (account_id, kind, at, detail)
      VALUES (${event.accountId}, ${event.kind}, ${toDate(event.at)}, ${event.detail})
      RETURNING id, account_id, kind, at, detail`.pipe(
      Effect.map((rows) => toEvent(rows[0]!)),
      Effect.orDie
    )

  const forAccount = (accountId: string, page: { readonly after: string | undefined; readonly limit: number }) => {
    const after = page.after === undefined || !/^\d{1,18}$/.test(page.after) ? undefined : page.after
    return (after === undefined
      ? sql<Row>`SELECT id, account_id, kind, at, detail FROM security_events
          WHERE account_id = ${accountId} ORDER BY id DESC LIMIT ${page.limit}`
      : sql<Row>`SELECT id, account_id, kind, at, detail FROM security_events
          WHERE account_id = ${accountId} AND id < ${after}::bigint ORDER BY id DESC LIMIT ${page.limit}`).pipe(
      Effect.map((rows) => rows.map(toEvent)),
      Effect.orDie
    )
  }

  return SecurityLogStore.SecurityLogStore.of({ record, forAccount })
})

export const layer = Layer.effect(SecurityLogStore.SecurityLogStore, make)
