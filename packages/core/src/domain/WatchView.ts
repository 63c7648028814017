import { Schema } from "effect"
import { ListingView } from "./Listing.ts"

/* The wire shapes of watches, their matches and their deliveries (snake_case, ISO instants). */

const Timestamp = Schema.String.annotate({
  description: "ISO 8601 instant in UTC with millisecond precision",
  examples: ["2026-11-22T09:30:00.000Z"]
})

export const WebhookView = Schema.Struct({
  url: Schema.String.annotate({ description: "Where matches are POSTed, signed per Standard Webhooks v1" }),
  state: Schema.Literals(["active", "paused", "disabled"]).annotate({
    description:
      "`active`: deliveries run. `paused`: every attempt of the retry schedule failed for one delivery. `disabled`: the receiver answered 410 Gone. PATCH `webhook_url` (or `paused: false` for `paused`) to resume."
  }),
  state_reason: Schema.NullOr(Schema.String).annotate({ description: "Why the webhook is paused or disabled" }),
  previous_secret_expires_at: Schema.NullOr(Timestamp).annotate({
    description: "After a rotation: until when the previous secret still signs beside the new one"
  })
}).annotate({ identifier: "WatchWebhook" })
export type WebhookView = typeof WebhookView.Type

export const WatchQueryView = Schema.Record(Schema.String, Schema.String).annotate({
  description: "The watch's `GET /domains` filters, as the query string would carry them (canonical text)"
})

export const WatchView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  query: WatchQueryView,
  webhook: Schema.NullOr(WebhookView),
  paused: Schema.Boolean.annotate({ description: "Set by the owner: a paused watch records no matches" }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotate({ identifier: "Watch" })
export type WatchView = typeof WatchView.Type

export const CreatedWatchView = Schema.Struct({
  ...WatchView.fields,
  webhook_secret: Schema.optionalKey(Schema.String.annotate({
    description: "With a webhook: its signing secret (`whsec_…`), shown this once"
  }))
}).annotate({ identifier: "CreatedWatch" })
export type CreatedWatchView = typeof CreatedWatchView.Type

export const WatchList = Schema.Struct({ data: Schema.Array(WatchView) }).annotate({ identifier: "WatchList" })
export type WatchList = typeof WatchList.Type

export const RotatedSecretView = Schema.Struct({
  webhook_secret: Schema.String.annotate({ description: "The new signing secret (`whsec_…`), shown this once" }),
  previous_secret_expires_at: Timestamp.annotate({ description: "Until then the previous secret also signs every delivery" })
}).annotate({ identifier: "RotatedSecret" })
export type RotatedSecretView = typeof RotatedSecretView.Type

export const MatchView = Schema.Struct({
  id: Schema.String.annotate({ description: "The match, and its event's `webhook-id`" }),
  matched_at: Timestamp,
  listing: Schema.NullOr(ListingView).annotate({
    description: "The listing as this account reads it now (disclosure rules apply); null once it is no longer readable"
  })
}).annotate({ identifier: "WatchMatch" })
export type MatchView = typeof MatchView.Type

export const MatchPage = Schema.Struct({
  data: Schema.Array(MatchView),
  next_cursor: Schema.NullOr(Schema.String).annotate({
    description: "Continues after this page's last match, on the last page too: keep it to ask later for only newer matches. Null when the page is empty (keep the cursor you sent)"
  }),
  has_more: Schema.Boolean.annotate({ description: "Whether more matches are waiting now: ask again with `next_cursor` at once" })
}).annotate({ identifier: "WatchMatchPage" })
export type MatchPage = typeof MatchPage.Type

export const AttemptView = Schema.Struct({
  event_id: Schema.String,
  attempt: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({ description: "1 for the first attempt of the event" }),
  attempted_at: Timestamp,
  duration_ms: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  status_code: Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 999 }))).annotate({ description: "The receiver's HTTP status; null when none came" }),
  error: Schema.NullOr(Schema.String).annotate({ description: "Why no status came (timeout, refused address, connection error)" })
}).annotate({ identifier: "WatchDeliveryAttempt" })
export type AttemptView = typeof AttemptView.Type

export const AttemptList = Schema.Struct({ data: Schema.Array(AttemptView) }).annotate({ identifier: "WatchDeliveryAttempts" })
export type AttemptList = typeof AttemptList.Type

export const ResendView = Schema.Struct({
  event_id: Schema.String,
  state: Schema.Literal("pending"),
  next_attempt_at: Timestamp
}).annotate({ identifier: "WatchDeliveryResend" })
export type ResendView = typeof ResendView.Type

/** The body of a webhook delivery. */
export const MatchEvent = Schema.Struct({
  type: Schema.Literal("watch.match"),
  timestamp: Timestamp,
  data: Schema.Struct({ watch_id: Schema.String, match: MatchView })
}).annotate({ identifier: "WatchMatchEvent" })
export type MatchEvent = typeof MatchEvent.Type
