import type { HoldState, ListingRecord, ReaderView, Tier } from "./Listing.ts"
import type { PlanLimits } from "./Plan.ts"
import type { Instant } from "./Time.ts"

export interface DisclosureInput {
  readonly plan: PlanLimits
  readonly tier: Tier
  readonly holdState: HoldState
  /** The account has a reveal ledger entry for the listing. */
  readonly revealed: boolean
}

/**
 * The spec's `domain` rules 1-6 in one place. Rule 1 (another account's hold hides the name)
 * outranks everything, on every plan and tier; `open` names and plans without a reveal ceiling
 * are disclosed; otherwise only a revealed name is. Reading never spends a reveal (rule 5):
 * this function only looks.
 */
export const isNameDisclosed = ({ holdState, plan, revealed, tier }: DisclosureInput): boolean => {
  if (holdState === "other") return false
  if (tier === "open") return true
  if (plan.revealsPerMonth === null) return true
  return revealed
}

/** Whether an account on `plan` may read the listing at `now`: active, and past the plan's access delay. */
export const isReadableAt = (listing: Pick<ListingRecord, "status" | "discoveredAt">, plan: PlanLimits, now: Instant): boolean =>
  listing.status === "active" && listing.discoveredAt <= now - plan.accessDelayMs

/**
 * Whose reveals a reader on `plan` needs looked up: its own, unless the plan has no reveal
 * ceiling, whose readers are told every name anyway (`isNameDisclosed`).
 */
export const revealsOf = (plan: PlanLimits, accountId: string): string | undefined =>
  plan.revealsPerMonth === null ? undefined : accountId

/** A listing's running hold as an account sees it: none, its own, or another account's. */
export const holdStateOf = (accountId: string, hold: { readonly accountId: string } | undefined): HoldState =>
  hold === undefined ? "none" : hold.accountId === accountId ? "mine" : "other"

/**
 * What an account on `plan` is told of a listing's name and hold, given the hold running on it
 * and whether the account revealed it: the reader-dependent part of every published row.
 */
export const readerViewOf = (input: {
  readonly plan: PlanLimits
  readonly accountId: string
  readonly tier: Tier
  readonly hold: { readonly accountId: string; readonly expiresAt: Instant } | undefined
  readonly revealed: boolean
}): ReaderView => {
  const holdState = holdStateOf(input.accountId, input.hold)
  return {
    disclosed: isNameDisclosed({ plan: input.plan, tier: input.tier, holdState, revealed: input.revealed }),
    holdState,
    holdExpiresAt: input.hold?.expiresAt ?? null
  }
}
