import { Context, type Effect } from "effect"
import type { AlreadyExtended, HeldByOther, HoldCapReached, HoldCooldown, HoldNotFound, HoldOver } from "../domain/errors.ts"
import type { HoldOutcome, HoldRecord } from "../domain/Hold.ts"
import type { PlanLimits } from "../domain/Plan.ts"
import type { KeysetRequest } from "../domain/Keyset.ts"
import type { Instant } from "../domain/Time.ts"

export interface AcquireHold {
  readonly accountId: string
  readonly listingId: string
  readonly plan: PlanLimits
  readonly now: Instant
  /** The new hold's id; by default the store makes one. Set only by `dropshelf demo`, whose fixture hold has a documented id. */
  readonly id?: string | undefined
}

/**
 * Holds, with the guarantees that need the store's own atomicity: never two running holds on
 * one listing, never more running holds than the plan's cap, the 30-day cooldown, and one
 * extension. Each write follows `Hold.decideAcquire` / `decideExtend` / `decideEnd`.
 */
export class HoldStore extends Context.Service<HoldStore, {
  readonly acquire: (
    request: AcquireHold
  ) => Effect.Effect<{ readonly hold: HoldRecord; readonly created: boolean }, HeldByOther | HoldCapReached | HoldCooldown>
  readonly extend: (
    request: { readonly accountId: string; readonly holdId: string; readonly now: Instant; readonly extensionMs: number }
  ) => Effect.Effect<HoldRecord, HoldNotFound | AlreadyExtended | HoldOver>
  readonly end: (
    request: { readonly accountId: string; readonly holdId: string; readonly now: Instant; readonly outcome: HoldOutcome }
  ) => Effect.Effect<HoldRecord, HoldNotFound | HoldOver>
  /** The account's own hold, in any state; `undefined` for another account's. */
  readonly findOwn: (accountId: string, holdId: string) => Effect.Effect<HoldRecord | undefined>
  /**
   * Running holds on these listings, by listing id, at `now` or (as `ListingStore.PageRequest`
   * allows) at a later instant of the same clock inside the call, never an earlier one.
   */
  readonly runningOn: (listingIds: ReadonlyArray<string>, now: Instant) => Effect.Effect<ReadonlyMap<string, HoldRecord>>
  /**
   * The account's running holds and those that ended at or after `endedSince`, newest first, at
   * `now` or (as `runningOn`) at a later instant of the same clock inside the call.
   */
  readonly forAccount: (accountId: string, endedSince: Instant, now: Instant) => Effect.Effect<ReadonlyArray<HoldRecord>>
  readonly countRunning: (accountId: string, now: Instant) => Effect.Effect<number>
  /**
   * Every hold (of one account when `accountId` is set; only those running at `runningAt` when
   * set), in order of `heldAt` then id; `after` names a hold id.
   */
  readonly list: (
    filter: { readonly accountId: string | undefined; readonly runningAt: Instant | undefined },
    page: KeysetRequest
  ) => Effect.Effect<ReadonlyArray<HoldRecord>>
}>()("@dropshelf/core/HoldStore") {}
