import { Schema } from "effect"
import { DAY, HOUR } from "./Time.ts"

export const PlanName = Schema.Literals(["free", "pro", "business"])
export type PlanName = typeof PlanName.Type

/** What an operator can set: a lapsed subscription is stored as such and reads as `free`. */
export const StoredPlan = Schema.Literals(["free", "pro", "business", "lapsed"])
export type StoredPlan = typeof StoredPlan.Type

export interface PlanLimits {
  readonly name: PlanName
  /** Requests per key per wall-clock minute. */
  readonly requestsPerMinute: number
  readonly liveKeys: number
  /** `null`: no monthly ceiling. */
  readonly revealsPerMonth: number | null
  readonly revealFeatured: boolean
  /** 0: the plan allows no holds. */
  readonly concurrentHolds: number
  readonly holdHours: number
  readonly extendHours: number
  /** A listing is hidden from this plan until it is this old (ms since `discovered_at`). */
  readonly accessDelayMs: number
  readonly sinceFeed: boolean
  /** Watches the account may keep at once (docs/decisions/0012-watches.md). */
  readonly watches: number
}

/** The spec's Limits table, the one place the whole system reads it from. */
export const Plans: { readonly [P in PlanName]: PlanLimits } = {
  free: {
    name: "free",
    requestsPerMinute: 20,
    liveKeys: 2,
    revealsPerMonth: 10,
    revealFeatured: false,
    concurrentHolds: 0,
    holdHours: 0,
    extendHours: 0,
    accessDelayMs: 7 * DAY,
    sinceFeed: false,
    watches: 1
  },
  pro: {
    name: "pro",
    requestsPerMinute: 60,
    liveKeys: 5,
    revealsPerMonth: 500,
    revealFeatured: true,
    concurrentHolds: 3,
    holdHours: 48,
    extendHours: 24,
    accessDelayMs: 1 * DAY,
    sinceFeed: false,
    watches: 10
  },
  business: {
    name: "business",
    requestsPerMinute: 120,
    liveKeys: 10,
    revealsPerMonth: null,
    revealFeatured: true,
    concurrentHolds: 20,
    holdHours: 168,
    extendHours: 168,
    accessDelayMs: 0,
    sinceFeed: true,
    watches: 100
  }
}

/**
 * Bulk snapshots (`GET /domains/snapshot`) an account may start per wall-clock hour, on a plan
 * with the since feed: a snapshot replaces thousands of feed pages, once, at the start of a sync.
 */
export const SNAPSHOTS_PER_HOUR = 4

export const effectivePlan = (stored: StoredPlan): PlanLimits => Plans[stored === "lapsed" ? "free" : stored]

export const holdWindowMs = (plan: PlanLimits): number => plan.holdHours * HOUR
export const extensionMs = (plan: PlanLimits): number => plan.extendHours * HOUR

/** After any end of an account's hold, that account waits this long to hold the same listing again. */
export const HOLD_COOLDOWN_MS = 30 * DAY
