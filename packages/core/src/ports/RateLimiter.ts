import { Context, type Effect } from "effect"
import type { Instant } from "../domain/Time.ts"

export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  /** Left in the current window after this request. */
  readonly remaining: number
  /** When the current window ends: the next wall-clock minute. */
  readonly resetAt: Instant
}

/** Per-key counters in fixed one-minute windows on the wall clock, shared by REST and tool calls. */
export class RateLimiter extends Context.Service<RateLimiter, {
  /** Counts one request against the key's current window, allowed or not. */
  readonly hit: (keyId: string, limit: number) => Effect.Effect<RateDecision>
}>()("@dropshelf/core/RateLimiter") {}
