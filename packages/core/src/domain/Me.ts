import { Schema } from "effect"
import { PlanName } from "./Plan.ts"

const Timestamp = Schema.String.annotate({ description: "ISO 8601 instant in UTC with millisecond precision" })

/** `GET /me`: the key and the plan its owner is on right now. */
export const MeView = Schema.Struct({
  plan: PlanName,
  reveals: Schema.Struct({
    limit: Schema.NullOr(Schema.Int),
    remaining: Schema.NullOr(Schema.Int),
    used: Schema.Int,
    resets_at: Timestamp
  }),
  rate_limit: Schema.Struct({ limit: Schema.Int, remaining: Schema.Int }),
  sync_feed: Schema.Boolean,
  key: Schema.Struct({
    name: Schema.String,
    prefix: Schema.String,
    created_at: Timestamp,
    last_used_at: Schema.NullOr(Timestamp)
  })
}).annotate({ identifier: "Me" })
export type MeView = typeof MeView.Type
