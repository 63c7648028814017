import { describe, expect, it } from "@effect/vitest"
import { RateLimiter } from "@dropshelf/core"
import { RateLimitRedis } from "@dropshelf/ratelimit-redis"
import { Effect, Layer, Logger, ManagedRuntime } from "effect"

const url = process.env.REDIS_URL

/** Keeps a burst inside one wall-clock minute: waits out the last seconds of the current one. */
const awayFromMinuteEdge = async () => {
  const intoMinute = Date.now() % 60_000
  if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100))
}

const limiterOn = (redisUrl: string) => ManagedRuntime.make(RateLimitRedis.layer(redisUrl))

const hit = (runtime: ManagedRuntime.ManagedRuntime<RateLimiter.RateLimiter, never>, keyId: string, limit: number, windowMs?: number) =>
  runtime.runPromise(Effect.gen(function*() {
    const limiter = yield* RateLimiter.RateLimiter
    return yield* limiter.hit(keyId, limit, windowMs)
  }))

const peek = (runtime: ManagedRuntime.ManagedRuntime<RateLimiter.RateLimiter, never>, keyId: string, limit: number) =>
  runtime.runPromise(Effect.gen(function*() {
    const limiter = yield* RateLimiter.RateLimiter
    return yield* limiter.peek(keyId, limit)
  }))

describe.skipIf(url === undefined)(`Redis rate limiter${url === undefined ? " (skipped: REDIS_URL not set)" : ""}`, () => {
  it("three instances sharing one Redis let exactly the limit through, each with its own remaining", async () => {
    const instances = [limiterOn(url!), limiterOn(url!), limiterOn(url!)]
    try {
      const keyId = `test-${crypto.randomUUID()}`
      await awayFromMinuteEdge()
      const decisions = await Promise.all(
        Array.from({ length: 200 }, (_, i) => hit(instances[i % 3]!, keyId, 60))
      )
      const allowed = decisions.filter((decision) => decision.allowed)
      expect(allowed).toHaveLength(60)
      expect(new Set(allowed.map((decision) => decision.remaining)).size).toBe(60)
      expect(decisions.filter((decision) => !decision.allowed).every((decision) => decision.remaining === 0)).toBe(true)
      const resets = new Set(decisions.map((decision) => decision.resetAt))
      expect(resets.size).toBe(1)
      const [resetAt] = resets
      expect(resetAt! % 60_000).toBe(0)
      expect(resetAt! - Date.now()).toBeLessThanOrEqual(60_000)
      expect(resetAt! - Date.now()).toBeGreaterThan(0)
    } finally {
      await Promise.all(instances.map((instance) => instance.dispose()))
    }
  })

  it("keys count separately", async () => {
    const runtime = limiterOn(url!)
    try {
      await awayFromMinuteEdge()
      const a = `test-${crypto.randomUUID()}`
      const b = `test-${crypto.randomUUID()}`
      await hit(runtime, a, 2)
      await hit(runtime, a, 2)
      expect((await hit(runtime, a, 2)).allowed).toBe(false)
      expect(await hit(runtime, b, 2)).toMatchObject({ allowed: true, remaining: 1 })
    } finally {
      await runtime.dispose()
    }
  })

  it("an hour-long window (the snapshot allowance) is shared by instances and ends at the next wall-clock hour", async () => {
    const [one, other] = [limiterOn(url!), limiterOn(url!)]
    try {
      const hour = 3_600_000
      const keyId = `test-snapshot-${crypto.randomUUID()}`
      const decisions = []
      for (let i = 0; i < 5; i++) decisions.push(await hit(i % 2 === 0 ? one : other, keyId, 4, hour))
      expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, true, false])
      expect(decisions.map((decision) => decision.remaining)).toEqual([3, 2, 1, 0, 0])
      const resetAt = decisions[4]!.resetAt
      expect(resetAt % hour).toBe(0)
      expect(resetAt - Date.now()).toBeGreaterThan(0)
      expect(resetAt - Date.now()).toBeLessThanOrEqual(hour)
    } finally {
      await Promise.all([one.dispose(), other.dispose()])
    }
  })

  it("peek reads the shared window without counting", async () => {
    const [one, other] = [limiterOn(url!), limiterOn(url!)]
    try {
      await awayFromMinuteEdge()
      const keyId = `test-${crypto.randomUUID()}`
      expect(await peek(one, keyId, 3)).toMatchObject({ allowed: true, limit: 3, remaining: 3 })
      const counted = await hit(one, keyId, 3)
      const peeked = await peek(other, keyId, 3)
      expect(peeked).toEqual({ ...counted, allowed: true, remaining: 2 })
      expect(await peek(other, keyId, 3)).toEqual(peeked)
      expect(await hit(other, keyId, 3)).toMatchObject({ allowed: true, remaining: 1 })
      expect(await hit(one, keyId, 3)).toMatchObject({ allowed: true, remaining: 0 })
      expect(await peek(one, keyId, 3)).toMatchObject({ allowed: false, remaining: 0 })
    } finally {
      await Promise.all([one.dispose(), other.dispose()])
    }
  })
})

describe("Redis rate limiter without Redis", () => {
  it("falls back to counting in this process, and says so once", async () => {
    const logs: Array<string> = []
    const capture = Logger.layer([Logger.make(({ message }) => {
      logs.push(String(message))
    })])
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const runtime = ManagedRuntime.make(RateLimitRedis.layer("redis://127.0.0.1:1").pipe(Layer.provide(capture)))
    try {
      await awayFromMinuteEdge()
      const keyId = `test-${crypto.randomUUID()}`
      const decisions = []
      for (let i = 0; i < 4; i++) decisions.push(await hit(runtime, keyId, 3))
      expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, false])
      expect(await peek(runtime, keyId, 3)).toMatchObject({ allowed: false, remaining: 0 })
      expect(logs.filter((line) => line.includes("Redis unreachable"))).toHaveLength(1)
    } finally {
      await runtime.dispose()
    }
  }, 20_000)
})

describe("RedisPing, what /readyz asks", () => {
  const pinged = async (redisUrl: string) => {
    const runtime = ManagedRuntime.make(RateLimitRedis.layerWithPing(redisUrl).pipe(Layer.provide(Logger.layer([]))))
    try {
      return await runtime.runPromise(Effect.result(RateLimitRedis.RedisPing.use(({ ping }) => ping)))
    } finally {
      await runtime.dispose()
    }
  }

  it("fails while the limiter has no Redis (it counts in-process then)", async () => {
    expect((await pinged("redis://127.0.0.1:1"))._tag).toBe("Failure")
  })

  it.skipIf(url === undefined)(`answers while the limiter counts in Redis${url === undefined ? " (skipped: REDIS_URL is not set)" : ""}`, async () => {
    expect((await pinged(url!))._tag).toBe("Success")
  })
})
