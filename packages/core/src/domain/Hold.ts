import { Result, Schema } from "effect"
import { AlreadyExtended, HeldByOther, HoldCapReached, HoldCooldown, HoldOver } from "./errors.ts"
import type { HoldId } from "./Ids.ts"
import { Count } from "./Listing.ts"
import { HOLD_COOLDOWN_MS, holdWindowMs, type PlanLimits } from "./Plan.ts"
import { type Instant, toIso } from "./Time.ts"

export const HoldStatus = Schema.Literals(["running", "expired", "released", "registered"])
export type HoldStatus = typeof HoldStatus.Type

export const HoldOutcome = Schema.Literals(["released", "registered"])
export type HoldOutcome = typeof HoldOutcome.Type

/**
 * A hold as stored. Expiry needs no writer: a hold whose `expiresAt` has passed without an
 * explicit end is `expired` from that instant on, so no sweeper job is involved.
 */
export interface HoldRecord {
  readonly id: HoldId
  readonly listingId: string
  readonly accountId: string
  readonly heldAt: Instant
  /** Scheduled end; moved later once by an extension. */
  readonly expiresAt: Instant
  readonly extended: boolean
  /** Set when the holder ended it before `expiresAt`. */
  readonly endedAt: Instant | null
  readonly outcome: HoldOutcome | null
}

export const statusAt = (hold: HoldRecord, now: Instant): HoldStatus => {
  if (hold.outcome !== null) return hold.outcome
  return now < hold.expiresAt ? "running" : "expired"
}

export const isRunningAt = (hold: HoldRecord, now: Instant): boolean => statusAt(hold, now) === "running"

/** When the hold ended, or `null` while it runs. */
export const endedAt = (hold: HoldRecord, now: Instant): Instant | null => {
  if (hold.endedAt !== null) return hold.endedAt
  return now < hold.expiresAt ? null : hold.expiresAt
}

/** End of the holder's 30-day cooldown on the listing, or `null` while the hold runs. */
export const cooldownEndsAt = (hold: HoldRecord, now: Instant): Instant | null => {
  const end = endedAt(hold, now)
  return end === null ? null : end + HOLD_COOLDOWN_MS
}

/** What a store knows when an account asks to hold a listing, read under the store's lock. */
export interface AcquireSnapshot {
  readonly accountId: string
  readonly plan: PlanLimits
  readonly now: Instant
  /** The running hold on the listing, by any account. */
  readonly runningOnListing: HoldRecord | undefined
  /** How many holds of the account are running. */
  readonly accountRunning: number
  /** The account's most recently ended hold on this listing. */
  readonly lastOwnHold: HoldRecord | undefined
}

export type AcquireDecision =
  | { readonly _tag: "Existing"; readonly hold: HoldRecord }
  | { readonly _tag: "Create"; readonly heldAt: Instant; readonly expiresAt: Instant }

/**
 * The hold transition none → running, for a plan that allows holds and an account that has
 * revealed the listing (both checked before the store is asked). Holding again a listing the
 * account already holds returns that hold unchanged.
 */
export const decideAcquire = (
  snapshot: AcquireSnapshot
): Result.Result<AcquireDecision, HeldByOther | HoldCapReached | HoldCooldown> => {
  const { accountId, now, plan, runningOnListing } = snapshot
  if (runningOnListing !== undefined) {
    return runningOnListing.accountId === accountId
      ? Result.succeed({ _tag: "Existing", hold: runningOnListing })
      : Result.fail(new HeldByOther({ expiresAt: runningOnListing.expiresAt }))
  }
  if (snapshot.accountRunning >= plan.concurrentHolds) {
    return Result.fail(new HoldCapReached({ limit: plan.concurrentHolds }))
  }
  if (snapshot.lastOwnHold !== undefined) {
    const availableAt = cooldownEndsAt(snapshot.lastOwnHold, now)
    if (availableAt !== null && now < availableAt) return Result.fail(new HoldCooldown({ availableAt }))
  }
  return Result.succeed({ _tag: "Create", heldAt: now, expiresAt: now + holdWindowMs(plan) })
}

const overAt = (hold: HoldRecord, now: Instant): HoldOver | undefined => {
  const status = statusAt(hold, now)
  return status === "running" ? undefined : new HoldOver({ state: status })
}

/** The one extension, counted from the scheduled end. */
export const decideExtend = (
  hold: HoldRecord,
  now: Instant,
  extensionMs: number
): Result.Result<HoldRecord, AlreadyExtended | HoldOver> => {
  const over = overAt(hold, now)
  if (over !== undefined) return Result.fail(over)
  if (hold.extended) return Result.fail(new AlreadyExtended())
  return Result.succeed({ ...hold, expiresAt: hold.expiresAt + extensionMs, extended: true })
}

/** running → released | registered; the cooldown starts from `now`. */
export const decideEnd = (hold: HoldRecord, now: Instant, outcome: HoldOutcome): Result.Result<HoldRecord, HoldOver> => {
  const over = overAt(hold, now)
  if (over !== undefined) return Result.fail(over)
  return Result.succeed({ ...hold, endedAt: now, outcome })
}

/** Ended holds stay in `GET /holds` this long. */
export const ENDED_HOLD_LISTING_MS = HOLD_COOLDOWN_MS

export const HoldView = Schema.Struct({
  id: Schema.String,
  listing_id: Schema.String,
  state: HoldStatus,
  held_at: Schema.String,
  expires_at: Schema.String,
  ended_at: Schema.NullOr(Schema.String),
  can_extend: Schema.Boolean,
  extend_hours: Count
}).annotate({ identifier: "Hold" })
export type HoldView = typeof HoldView.Type

export const HoldResponse = Schema.Struct({
  hold: HoldView,
  holds: Schema.Struct({
    active: Count,
    hold_hours: Count,
    limit: Count,
    plan: Schema.String
  })
}).annotate({ identifier: "HoldResponse" })
export type HoldResponse = typeof HoldResponse.Type

export const HoldList = Schema.Struct({ data: Schema.Array(HoldView) }).annotate({ identifier: "HoldList" })
export type HoldList = typeof HoldList.Type

export const toHoldView = (hold: HoldRecord, now: Instant, plan: PlanLimits): HoldView => {
  const state = statusAt(hold, now)
  const ended = endedAt(hold, now)
  return {
    id: hold.id,
    listing_id: hold.listingId,
    state,
    held_at: toIso(hold.heldAt),
    expires_at: toIso(hold.expiresAt),
    ended_at: ended === null ? null : toIso(ended),
    can_extend: state === "running" && !hold.extended && plan.concurrentHolds > 0,
    extend_hours: plan.extendHours
  }
}
