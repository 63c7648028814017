import { Clock, Context, Effect, Layer } from "effect"
import { type Instant, MINUTE } from "../domain/Time.ts"

export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  /** Left in the current window after this request. */
  readonly remaining: number
  /** When the current window ends: the next wall-clock minute (or window of the length asked). */
  readonly resetAt: Instant
}

/**
 * Per-key counters in fixed windows on the wall clock, shared by REST and tool calls: one minute
 * unless `windowMs` says otherwise (a whole divisor of a day, such as `HOUR`). A key is counted
 * in one window length only.
 */
export class RateLimiter extends Context.Service<RateLimiter, {
  /** Counts one request against the key's current window, allowed or not. */
  readonly hit: (keyId: string, limit: number, windowMs?: number) => Effect.Effect<RateDecision>
  /**
   * The key's current window without counting: `remaining` as the last counted request left it,
   * `allowed` whether one more request would be. For answers that do not count (a 304).
   */
  readonly peek: (keyId: string, limit: number, windowMs?: number) => Effect.Effect<RateDecision>
}>()("@dropshelf/core/RateLimiter") {}

/** The decision for a window holding `count` requests: after a hit, or, when peeking, before the next one. */
export const decisionOf = (count: number, limit: number, resetAt: Instant, peeked: boolean): RateDecision => ({
  allowed: peeked ? count < limit : count <= limit,
  limit,
  remaining: Math.max(0, limit - count),
  resetAt
})

/** Counters for this process only: the default, and the fallback when a shared store is unreachable. */
export const makeInProcess = Effect.sync(() => {
  const windows = new Map<string, { start: number; length: number; count: number }>()
  return RateLimiter.of({
    hit: (keyId, limit, windowMs = MINUTE) =>
      Effect.map(Clock.currentTimeMillis, (now): RateDecision => {
        const start = now - (now % windowMs)
        const window = windows.get(keyId)
        const current = window !== undefined && window.start === start ? window : { start, length: windowMs, count: 0 }
        current.count++
        windows.set(keyId, current)
        // Old windows are dropped in bulk, so memory follows the keys active this minute.
        if (windows.size > 100_000) {
          for (const [key, value] of windows) if (value.start + value.length <= now) windows.delete(key)
        }
        return decisionOf(current.count, limit, start + windowMs, false)
      }),
    peek: (keyId, limit, windowMs = MINUTE) =>
      Effect.map(Clock.currentTimeMillis, (now): RateDecision => {
        const start = now - (now % windowMs)
        const window = windows.get(keyId)
        return decisionOf(window !== undefined && window.start === start ? window.count : 0, limit, start + windowMs, true)
      })
  })
})

export const layerInProcess = Layer.effect(RateLimiter, makeInProcess)

/**
 * For benchmarks only: every request is still counted (the limiter stays on the measured path)
 * but none is refused, so a load test measures the service rather than 429s.
 */
export const countOnly = (limiter: RateLimiter["Service"]): RateLimiter["Service"] =>
  RateLimiter.of({
    hit: (keyId, limit, windowMs) => Effect.map(limiter.hit(keyId, limit, windowMs), (decision) => ({ ...decision, allowed: true })),
    peek: (keyId, limit, windowMs) => Effect.map(limiter.peek(keyId, limit, windowMs), (decision) => ({ ...decision, allowed: true }))
  })
