import { Schema } from "effect"
import { Count } from "./Listing.ts"
import { PlanName } from "./Plan.ts"

const Timestamp = Schema.String.annotate({ description: "ISO 8601 instant in UTC with millisecond precision" })
/** A ceiling: a plan's reveals per month or requests per minute. */
const Positive = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

/** `GET /me`: the key and the plan its owner is on right now. */
export const MeView = Schema.Struct({
  plan: PlanName,
  reveals: Schema.Struct({
    limit: Schema.NullOr(Positive),
    remaining: Schema.NullOr(Count),
    used: Count,
    resets_at: Timestamp
  }),
  rate_limit: Schema.Struct({ limit: Positive, remaining: Count }),
  sync_feed: Schema.Boolean,
  // Optional in the schema only, so that a client of this version still reads a server that
  // predates the field; this server always sends it.
  since_horizon_days: Schema.optionalKey(Schema.NullOr(Positive).annotate({
    description:
      "With the since feed: how many days back a `since` is accepted (older ones are refused 400 `invalid_request` naming `since`; resynchronise with a full run). Null on plans without the feed. Always sent by this version; absent from servers before it."
  })),
  key: Schema.Struct({
    name: Schema.String,
    prefix: Schema.String,
    created_at: Timestamp,
    last_used_at: Schema.NullOr(Timestamp)
  })
}).annotate({ identifier: "Me" })
export type MeView = typeof MeView.Type
