import { Result } from "effect"
import { FeaturedRequiresPro, HeldByOther } from "./errors.ts"
import type { Tier } from "./Listing.ts"
import type { PlanLimits } from "./Plan.ts"
import type { Instant } from "./Time.ts"
import { monthOf } from "./Time.ts"

/** One ledger entry per account and listing; revealed is permanent. */
export interface RevealEntry {
  readonly accountId: string
  readonly listingId: string
  readonly revealedAt: Instant
  /** Whether this reveal spent one of the month's allowance. */
  readonly charged: boolean
}

export interface RevealRequest {
  readonly plan: PlanLimits
  readonly tier: Tier
  /** The account's existing entry for this listing, if any. */
  readonly existing: RevealEntry | undefined
  /** End of another account's running hold on the listing, if any. */
  readonly heldByOtherUntil: Instant | undefined
}

/** What a reveal will do once the refusals that need no counter are ruled out. */
export type RevealPlan =
  | { readonly _tag: "Repeat"; readonly entry: RevealEntry }
  | { readonly _tag: "First"; readonly charged: boolean }

/**
 * The reveal rules that need no counter: a repeat re-opens at no cost, whatever else holds; a
 * first reveal of a `featured` listing needs a plan that reveals featured names; another
 * account's hold refuses only a first reveal. `open` listings and plans without a ceiling
 * cost nothing but still write a ledger entry. Whether the month's allowance has room is
 * decided atomically by the ledger store.
 */
export const planReveal = (request: RevealRequest): Result.Result<RevealPlan, FeaturedRequiresPro | HeldByOther> => {
  if (request.existing !== undefined) return Result.succeed({ _tag: "Repeat", entry: request.existing })
  if (request.tier === "featured" && !request.plan.revealFeatured) return Result.fail(new FeaturedRequiresPro())
  if (request.heldByOtherUntil !== undefined) {
    return Result.fail(new HeldByOther({ expiresAt: request.heldByOtherUntil }))
  }
  return Result.succeed({ _tag: "First", charged: isCharged(request.plan, request.tier) })
}

export const isCharged = (plan: PlanLimits, tier: Tier): boolean => tier !== "open" && plan.revealsPerMonth !== null

/** The monthly allowance a charged reveal draws on: calendar months in UTC. */
export interface Allowance {
  readonly month: string
  readonly limit: number
}

export const allowanceAt = (plan: PlanLimits, now: Instant): Allowance | undefined =>
  plan.revealsPerMonth === null ? undefined : { month: monthOf(now), limit: plan.revealsPerMonth }

/** Budget left; `null` on a plan without a ceiling. A downgrade can leave `used` above the new limit. */
export const remainingReveals = (plan: PlanLimits, used: number): number | null =>
  plan.revealsPerMonth === null ? null : Math.max(0, plan.revealsPerMonth - used)
