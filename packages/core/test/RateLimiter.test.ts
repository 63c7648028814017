import { assert, describe, it } from "@effect/vitest"
import { RateLimiter } from "@dropshelf/core"
import { Effect } from "effect"
import { TestClock } from "effect/testing"

const MINUTE_START = Date.UTC(2026, 10, 22, 9, 30)

describe("in-process rate limiter", () => {
  it.effect("counts per key in fixed windows that reset on the wall-clock minute", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MINUTE_START + 50_000)
      const limiter = yield* RateLimiter.makeInProcess
      const first = yield* limiter.hit("k1", 2)
      assert.deepStrictEqual(first, { allowed: true, limit: 2, remaining: 1, resetAt: MINUTE_START + 60_000 })
      assert.isTrue((yield* limiter.hit("k1", 2)).allowed)
      const over = yield* limiter.hit("k1", 2)
      assert.deepStrictEqual(over, { allowed: false, limit: 2, remaining: 0, resetAt: MINUTE_START + 60_000 })
      assert.isTrue((yield* limiter.hit("k2", 2)).allowed)
      // Ten seconds later is a new wall-clock minute: a fresh window, not a sliding one.
      yield* TestClock.adjust(10_000)
      assert.deepStrictEqual(yield* limiter.hit("k1", 2), {
        allowed: true,
        limit: 2,
        remaining: 1,
        resetAt: MINUTE_START + 120_000
      })
    }))

  it.effect("peek reads the window without counting: what the last request left, and whether one more is allowed", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MINUTE_START + 50_000)
      const limiter = yield* RateLimiter.makeInProcess
      assert.deepStrictEqual(yield* limiter.peek("k1", 2), { allowed: true, limit: 2, remaining: 2, resetAt: MINUTE_START + 60_000 })
      yield* limiter.hit("k1", 2)
      const peeked = yield* limiter.peek("k1", 2)
      assert.deepStrictEqual(peeked, { allowed: true, limit: 2, remaining: 1, resetAt: MINUTE_START + 60_000 })
      assert.deepStrictEqual(yield* limiter.peek("k1", 2), peeked)
      // Peeking counted nothing: the second hit is still allowed, the third is not.
      assert.deepStrictEqual(yield* limiter.hit("k1", 2), { allowed: true, limit: 2, remaining: 0, resetAt: MINUTE_START + 60_000 })
      assert.deepStrictEqual(yield* limiter.peek("k1", 2), { allowed: false, limit: 2, remaining: 0, resetAt: MINUTE_START + 60_000 })
      assert.isFalse((yield* limiter.hit("k1", 2)).allowed)
      yield* TestClock.adjust(10_000)
      assert.deepStrictEqual(yield* limiter.peek("k1", 2), { allowed: true, limit: 2, remaining: 2, resetAt: MINUTE_START + 120_000 })
    }))

  it.effect("count-only mode counts every request and refuses none", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MINUTE_START)
      const limiter = RateLimiter.countOnly(yield* RateLimiter.makeInProcess)
      const decisions = yield* Effect.forEach([1, 2, 3], () => limiter.hit("k", 2))
      assert.deepStrictEqual(decisions.map((decision) => [decision.allowed, decision.remaining]), [[true, 1], [true, 0], [true, 0]])
      assert.deepStrictEqual(yield* limiter.peek("k", 2), { allowed: true, limit: 2, remaining: 0, resetAt: MINUTE_START + 60_000 })
    }))
})
