import type { HoldState, Tier } from "./Listing.ts"
import type { PlanLimits } from "./Plan.ts"

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
