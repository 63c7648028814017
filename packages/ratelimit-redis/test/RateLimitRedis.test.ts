import { describe, expect, it } from "@effect/vitest"
import { RateLimiter } from "@dropshelf/core"
import { RateLimitRedis } from "@dropshelf/ratelimit-redis"
import { Effect, Layer, Logger, ManagedRuntime } from "effect"
import { Redis } from "effect/persistence"
import * as RedisConnection from "../src/RedisConnection.ts"
import * as net from "node:net"

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

  it("a key's counters of one window length are never read under another, even where both windows start at once", async () => {
    // Both lengths exceed the epoch time, so both windows start at 0: only the key's name can tell them apart.
    const long = 10_000_000_000_000
    const runtime = limiterOn(url!)
    const redis = ManagedRuntime.make(RedisConnection.layer({ url: url!, connectTimeoutMs: 2_000, closeTimeoutMs: 1_000 }))
    const keyId = `test-${crypto.randomUUID()}`
    try {
      expect(await hit(runtime, keyId, 1, long)).toMatchObject({ allowed: true, remaining: 0 })
      expect((await hit(runtime, keyId, 1, long)).allowed).toBe(false)
      expect(await hit(runtime, keyId, 1, 2 * long)).toMatchObject({ allowed: true, remaining: 0 })
      const names = await redis.runPromise(Redis.Redis.use((client) => client.send<Array<string>>("KEYS", `dropshelf:ratelimit:${keyId}:*`)))
      expect(names.sort()).toEqual([`dropshelf:ratelimit:${keyId}:${long}:0`, `dropshelf:ratelimit:${keyId}:${2 * long}:0`])
    } finally {
      await redis.runPromise(Redis.Redis.use((client) =>
        Effect.flatMap(client.send<Array<string>>("KEYS", `dropshelf:ratelimit:${keyId}*`), (names) =>
          names.length === 0 ? Effect.void : client.send("DEL", ...names))))
      await Promise.all([runtime.dispose(), redis.dispose()])
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

  it.each([
    { batched: true, name: "concurrent requests share scripts: one round trip counts many, each exactly" },
    { batched: false, name: "unbatched (redis-batches off), each request is a script of its own, counted as exactly" }
  ])("$name", async ({ batched }) => {
    let scripts = 0
    // The limiter on the real connection, with its EVALSHA commands counted.
    const counted = Layer.effect(
      Redis.Redis,
      Effect.gen(function*() {
        const redis = yield* Redis.Redis
        return yield* Redis.make({
          send: <A>(command: string, ...args: ReadonlyArray<string>) => {
            if (command === "EVALSHA") scripts++
            return redis.send<A>(command, ...args)
          },
          connect: Effect.die("unused"),
          subscribe: () => Effect.die("unused")
        })
      })
    ).pipe(Layer.provide(RedisConnection.layer({ url: url!, connectTimeoutMs: 2_000, closeTimeoutMs: 1_000 })))
    const runtime = ManagedRuntime.make(Layer.effect(RateLimiter.RateLimiter, RateLimitRedis.make(batched)).pipe(Layer.provide(counted), Layer.orDie))
    try {
      await awayFromMinuteEdge()
      const keyId = `test-${crypto.randomUUID()}`
      const other = `test-${crypto.randomUUID()}`
      const decisions = await Promise.all(Array.from({ length: 100 }, (_, i) => hit(runtime, i % 2 === 0 ? keyId : other, 30)))
      if (batched) expect(scripts).toBeLessThanOrEqual(5)
      else expect(scripts).toBe(100)
      for (const key of [0, 1]) {
        const mine = decisions.filter((_, i) => i % 2 === key)
        expect(mine.filter((decision) => decision.allowed)).toHaveLength(30)
        expect(new Set(mine.map((decision) => decision.remaining))).toEqual(new Set(Array.from({ length: 30 }, (_, n) => n)))
      }
      expect(await peek(runtime, keyId, 30)).toMatchObject({ allowed: false, remaining: 0 })
    } finally {
      await runtime.dispose()
    }
  })

  it("counting starts no timer a command: the limiter's own timeout bounds it", async () => {
    const runtime = limiterOn(url!)
    const timeout = AbortSignal.timeout
    let timers = 0
    AbortSignal.timeout = (ms) => {
      timers++
      return timeout.call(AbortSignal, ms)
    }
    try {
      const keyId = `test-${crypto.randomUUID()}`
      await Promise.all(Array.from({ length: 50 }, () => hit(runtime, keyId, 1_000)))
      await peek(runtime, keyId, 1_000)
      expect(timers).toBe(0)
    } finally {
      AbortSignal.timeout = timeout
      await runtime.dispose()
    }
  })
})

/**
 * A TCP proxy to `target` that can hold everything it is given, both ways, while keeping its
 * connections open (what a Redis that hangs looks like to its clients), and pass it all on later.
 */
const freezableProxy = async (target: URL) => {
  let frozen = false
  const held: Array<() => void> = []
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname)
    sockets.add(client).add(upstream)
    const pass = (to: net.Socket) => (data: Buffer) => frozen ? held.push(() => to.write(data)) : to.write(data)
    client.on("data", pass(upstream))
    upstream.on("data", pass(client))
    for (const [one, other] of [[client, upstream], [upstream, client]] as const) {
      one.on("error", () => other.destroy())
      one.on("close", () => other.destroy())
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    freeze: () => void (frozen = true),
    thaw: () => {
      frozen = false
      for (const write of held.splice(0)) write()
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}

/**
 * Runs `test` on a limiter whose Redis answered one request and then hangs (a frozen proxy),
 * with `alongside` in its runtime, and lets everything held through before closing it: the
 * client closes once its commands are answered.
 */
const onceRedisHangs = async (
  test: (runtime: ManagedRuntime.ManagedRuntime<RateLimiter.RateLimiter, never>, keyId: string) => Promise<void>,
  alongside: Layer.Layer<never> = Layer.empty
) => {
  const proxy = await freezableProxy(new URL(url!))
  const runtime = ManagedRuntime.make(RateLimitRedis.layer(proxy.url).pipe(Layer.provideMerge(alongside)))
  try {
    const keyId = `test-${crypto.randomUUID()}`
    expect((await hit(runtime, keyId, 100)).allowed).toBe(true)
    proxy.freeze()
    await test(runtime, keyId)
  } finally {
    proxy.thaw()
    await runtime.dispose()
    await proxy.close()
  }
}

describe.skipIf(url === undefined)(`Redis rate limiter on a Redis that hangs${url === undefined ? " (skipped: REDIS_URL not set)" : ""}`, () => {
  it("waits for it once, then counts in this process at once, asking Redis again once a second", () => {
    const logs: Array<string> = []
    const capture = Logger.layer([Logger.make(({ message }) => {
      logs.push(String(message))
    })])
    // The logger in the runtime too: the limiter logs the switch while it counts a request.
    return onceRedisHangs(async (runtime, keyId) => {
      const timed = async () => {
        const started = performance.now()
        const decision = await hit(runtime, keyId, 100)
        return { decision, ms: performance.now() - started }
      }
      const first = await timed()
      expect(first.ms).toBeGreaterThanOrEqual(RateLimitRedis.REDIS_TIMEOUT_MS - 50)
      expect(first.decision.allowed).toBe(true)
      // The next ones within the probe interval do not wait for Redis.
      const next = await Promise.all(Array.from({ length: 20 }, timed))
      expect(Math.max(...next.map((one) => one.ms))).toBeLessThan(RateLimitRedis.REDIS_TIMEOUT_MS / 2)
      expect(logs.filter((line) => line.includes("Redis unreachable"))).toHaveLength(1)
      // Once the interval has passed one request asks Redis again (and waits for it); the others still do not.
      await new Promise((resolve) => setTimeout(resolve, RateLimitRedis.PROBE_INTERVAL_MS + 100))
      const later = await Promise.all(Array.from({ length: 5 }, timed))
      expect(later.filter((one) => one.ms >= RateLimitRedis.REDIS_TIMEOUT_MS - 50)).toHaveLength(1)
    }, capture)
  }, 30_000)

  it("requests queued behind a script Redis does not answer wait for that one only, then count in this process", () =>
    onceRedisHangs(async (runtime, keyId) => {
      const started = performance.now()
      const decisions = await Promise.all(Array.from({ length: 20 }, () => hit(runtime, keyId, 100)))
      const ms = performance.now() - started
      expect(decisions.every((decision) => decision.allowed)).toBe(true)
      expect(ms).toBeGreaterThanOrEqual(RateLimitRedis.REDIS_TIMEOUT_MS - 50)
      expect(ms).toBeLessThan(RateLimitRedis.REDIS_TIMEOUT_MS * 1.5)
    }), 30_000)

  it("closes within its close timeout while a command waits on the hung Redis, so a shutdown does not wait for it", () =>
    onceRedisHangs(async (runtime, keyId) => {
      // Counted in-process after the Redis time-out; the command itself is still waiting on the socket.
      expect((await hit(runtime, keyId, 100)).allowed).toBe(true)
      const started = performance.now()
      const closed = await Promise.race([
        runtime.dispose().then(() => "closed"),
        new Promise((resolve) => setTimeout(resolve, RateLimitRedis.CLOSE_TIMEOUT_MS + 3_000, "still waiting"))
      ])
      expect(closed).toBe("closed")
      expect(performance.now() - started).toBeLessThan(RateLimitRedis.CLOSE_TIMEOUT_MS + 1_000)
    }), 30_000)
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
