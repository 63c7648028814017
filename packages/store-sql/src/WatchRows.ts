import type { Watch, WatchStore } from "@dropshelf/core"
import { instant, instantOrNull, int, json, textOrNull } from "./Rows.ts"

/* Watch, match and delivery-job rows as the core's records. */

export type Row = Record<string, unknown>
export type WatchRecord = WatchStore.WatchRecord

export const WATCH_COLUMNS = `w.id, w.account_id, w.name, w.query, w.paused, w.webhook_url, w.webhook_secret,
  w.webhook_previous_secret, w.webhook_previous_until, w.webhook_state, w.webhook_state_reason, w.created_at, w.updated_at`

export const toWatch = (row: Row): WatchRecord => ({
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

export const toMatch = (row: Row): WatchStore.MatchRecord => ({
  id: String(row.id),
  seq: int(row.seq),
  watchId: String(row.watch_id),
  listingId: String(row.listing_id),
  matchedAt: instant(row.matched_at)
})

export const toJob = (row: Row): WatchStore.DeliveryJob => ({
  eventId: String(row.event_id),
  watchId: String(row.watch_id),
  listingId: String(row.listing_id),
  matchedAt: instant(row.matched_at),
  attempts: int(row.attempts),
  state: row.state as WatchStore.DeliveryState,
  nextAttemptAt: instant(row.next_attempt_at),
  manual: row.manual === true
})
