/**
 * The retry decision on its own: which answers are sent again, after how long, and the headers
 * that name the wait.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { RetryPolicy } from "@dropshelf/client"

const NOW = Date.parse("2026-11-24T09:30:00.000Z")
const policy = RetryPolicy.policyOf({ maxRetries: 4, baseDelayMs: 100, maxDelayMs: 1_000, maxWaitMs: 60_000 })
const answered = (status: number, headers: Record<string, string> = {}): RetryPolicy.Outcome => ({ _tag: "Answered", status, headers })

describe("RetryPolicy.decide", () => {
  it("never sends again a 4xx other than 429, nor a 2xx or 3xx", () => {
    fc.assert(fc.property(
      fc.integer({ min: 200, max: 499 }).filter((status) => status !== 429),
      fc.integer({ min: 0, max: 3 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (status, retries, random) => RetryPolicy.decide(policy, answered(status, { "retry-after": "1" }), retries, NOW, random) === undefined
    ))
  })

  it("sends 5xx and network failures again after a backoff between half and all of its capped ceiling", () => {
    fc.assert(fc.property(
      fc.oneof(fc.integer({ min: 500, max: 599 }).map((status) => answered(status)), fc.constant<RetryPolicy.Outcome>({ _tag: "NetworkFailed" })),
      fc.integer({ min: 0, max: 3 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (outcome, retries, random) => {
        const decision = RetryPolicy.decide(policy, outcome, retries, NOW, random)
        const ceiling = Math.min(1_000, 100 * 2 ** retries)
        expect(decision?.reason).toBe(outcome._tag === "NetworkFailed" ? "network" : "server-error")
        expect(decision!.delayMs).toBeGreaterThanOrEqual(ceiling / 2)
        expect(decision!.delayMs).toBeLessThanOrEqual(ceiling)
      }
    ))
  })

  it("stops once maxRetries retries were made, whatever the answer", () => {
    fc.assert(fc.property(
      fc.oneof(fc.constantFrom(429, 500, 503).map((status) => answered(status, { "retry-after": "1" })), fc.constant<RetryPolicy.Outcome>({ _tag: "NetworkFailed" })),
      fc.integer({ min: 4, max: 100 }),
      (outcome, retries) => RetryPolicy.decide(policy, outcome, retries, NOW, 0.5) === undefined
    ))
    expect(RetryPolicy.decide(RetryPolicy.policyOf({ maxRetries: 0 }), { _tag: "NetworkFailed" }, 0, NOW, 0.5)).toBeUndefined()
  })

  it("waits out a 429 as Retry-After says, in seconds or as an HTTP date", () => {
    expect(RetryPolicy.decide(policy, answered(429, { "retry-after": "7" }), 0, NOW, 0.5)).toEqual({ delayMs: 7_000, reason: "rate-limited" })
    expect(RetryPolicy.decide(policy, answered(429, { "retry-after": "Tue, 24 Nov 2026 09:30:12 GMT" }), 0, NOW, 0.5)).toEqual({
      delayMs: 12_000,
      reason: "rate-limited"
    })
  })

  it("prefers Retry-After to the RateLimit field, and backs off when a 429 names no wait", () => {
    const both = { "retry-after": "3", ratelimit: "\"per-minute\";r=0;t=40" }
    expect(RetryPolicy.decide(policy, answered(429, both), 0, NOW, 1)?.delayMs).toBe(3_000)
    expect(RetryPolicy.decide(policy, answered(429), 2, NOW, 1)?.delayMs).toBe(400)
  })

  it("does not wait longer than maxWaitMs: the 429 or 503 is answered instead", () => {
    expect(RetryPolicy.decide(policy, answered(429, { "retry-after": "61" }), 0, NOW, 0.5)).toBeUndefined()
    expect(RetryPolicy.decide(policy, answered(503, { "retry-after": "3600" }), 0, NOW, 0.5)).toBeUndefined()
    expect(RetryPolicy.decide(policy, answered(503, { "retry-after": "2" }), 0, NOW, 0.5)).toEqual({ delayMs: 2_000, reason: "server-error" })
  })
})

describe("RetryPolicy.rateLimitResetMs", () => {
  it("reads the reset of the exhausted policy, the longest when several are", () => {
    expect(RetryPolicy.rateLimitResetMs({ ratelimit: "\"per-minute\";r=0;t=23" })).toBe(23_000)
    expect(RetryPolicy.rateLimitResetMs({ ratelimit: "\"burst\";r=5;t=1, \"day\";r=0;t=3600, \"minute\";r=0;t=30" })).toBe(3_600_000)
  })

  it("names no wait when no policy is exhausted, or the field cannot be read", () => {
    expect(RetryPolicy.rateLimitResetMs({ ratelimit: "\"per-minute\";r=3;t=23" })).toBeUndefined()
    expect(RetryPolicy.rateLimitResetMs({ ratelimit: "limit=60, remaining=0" })).toBeUndefined()
    expect(RetryPolicy.rateLimitResetMs({ ratelimit: "\"per-minute\";r=0;t=-4" })).toBeUndefined()
    expect(RetryPolicy.rateLimitResetMs({})).toBeUndefined()
  })
})
