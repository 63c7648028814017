import { RateLimiter, Time } from "@dropshelf/core"
import { Clock, Context, Duration, Effect, Exit, Layer, Result, Schedule, Scope } from "effect"
import { Redis } from "effect/persistence"
import * as RedisConnection from "./RedisConnection.ts"

/** Both scripts' start: `now` from Redis's own clock, and the start of its window of ARGV[1] ms. */
const currentWindow = `
local time = redis.call("TIME")
local length = tonumber(ARGV[1])
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = now - (now % length)
`

/**
 * One atomic step per request: INCR on the key's counter for the current wall-clock window
 * (ARGV[1] ms, a minute for the per-key limit), with the time read from Redis's own clock so
 * that every instance agrees on the window. Returns the count after this request and the end of
 * the window (epoch ms).
 */
export const hitScript = Redis.script((counterPrefix: string, windowMs: number) => [counterPrefix, windowMs], {
  numberOfKeys: 1,
  lua: `${currentWindow}local key = KEYS[1] .. ":" .. window
local count = redis.call("INCR", key)
if count == 1 then
  redis.call("PEXPIRE", key, (window + length - now) + 5000)
end
return { count, window + length }
`
}).withReturnType<[number, number]>()

/** The count of the key's current window without counting, and the end of the window: `hitScript` without the INCR. */
export const peekScript = Redis.script((counterPrefix: string, windowMs: number) => [counterPrefix, windowMs], {
  numberOfKeys: 1,
  lua: `${currentWindow}local count = tonumber(redis.call("GET", KEYS[1] .. ":" .. window) or "0")
return { count, window + length }
`
}).withReturnType<[number, number]>()

/**
 * How long a request waits for Redis before counting in-process instead. A disconnected client
 * fails at once (no offline queue), so this only bounds a Redis that hangs; it is generous
 * because a busy but healthy Redis must not be mistaken for a dead one (at 250 ms, a loaded
 * two-core machine fell back mid-burst and let a few requests over the limit through).
 */
export const REDIS_TIMEOUT_MS = 2_000

/**
 * While Redis is unreachable, how often one request asks it again; the others count in-process
 * at once. Without it, a Redis that hangs (a connection that takes commands and never answers)
 * would make every keyed request wait `REDIS_TIMEOUT_MS` before falling back.
 */
export const PROBE_INTERVAL_MS = 1_000

/**
 * The `RateLimiter` port on Redis. When Redis cannot be reached the request is counted by the
 * in-process limiter instead, and the switch is logged once each way: limits stay per key but
 * become per instance until Redis answers again (decision 0110). Meanwhile one request a
 * `PROBE_INTERVAL_MS` tries Redis; the rest do not wait for it.
 */
export const make = Effect.gen(function*() {
  const redis = yield* Redis.Redis
  const hit = redis.eval(hitScript)
  const peek = redis.eval(peekScript)
  const fallback = yield* RateLimiter.makeInProcess
  let degraded = false
  let nextProbeAt = 0

  /** One step on Redis, or on the in-process counters when Redis does not answer in time. */
  const onRedis = (
    step: Effect.Effect<[number, number], unknown>,
    limit: number,
    peeked: boolean,
    instead: () => Effect.Effect<RateLimiter.RateDecision>
  ): Effect.Effect<RateLimiter.RateDecision> =>
    Effect.gen(function*() {
      if (degraded) {
        const now = yield* Clock.currentTimeMillis
        if (now < nextProbeAt) return yield* instead()
        // One probe at a time: none other until this one has answered or given up.
        nextProbeAt = now + REDIS_TIMEOUT_MS + PROBE_INTERVAL_MS
      }
      const answer = yield* Effect.result(Effect.timeout(step, REDIS_TIMEOUT_MS))
      if (Result.isSuccess(answer)) {
        if (degraded) {
          degraded = false
          yield* Effect.logInfo("Redis answers again: rate limits are shared across instances")
        }
        const [count, resetAt] = answer.success
        return RateLimiter.decisionOf(Number(count), limit, Number(resetAt), peeked)
      }
      // The next probe a whole interval after this one gave up, not after it started.
      nextProbeAt = (yield* Clock.currentTimeMillis) + PROBE_INTERVAL_MS
      if (!degraded) {
        degraded = true
        yield* Effect.logWarning("Redis unreachable: counting rate limits in this process", String(answer.failure))
      }
      return yield* instead()
    })

  return RateLimiter.RateLimiter.of({
    hit: (keyId, limit, windowMs = Time.MINUTE) =>
      onRedis(hit(`dropshelf:ratelimit:${keyId}`, windowMs), limit, false, () => fallback.hit(keyId, limit, windowMs)),
    peek: (keyId, limit, windowMs = Time.MINUTE) =>
      onRedis(peek(`dropshelf:ratelimit:${keyId}`, windowMs), limit, true, () => fallback.peek(keyId, limit, windowMs))
  })
})

/** How often a limiter that found Redis unreachable at start-up tries to connect again. */
export const RECONNECT_INTERVAL = Duration.seconds(2)

/**
 * How long closing the limiter waits for the commands still in flight before dropping the
 * connection. The client's own close waits for every reply, which a Redis that hangs never
 * sends: a shutdown would wait for ever.
 */
export const CLOSE_TIMEOUT_MS = 1_000

const client = (url: string) =>
  RedisConnection.layer({ url, connectTimeoutMs: 2_000, closeTimeoutMs: CLOSE_TIMEOUT_MS })

/**
 * Whether the limiter's Redis answers now: a PING on its connection, failing while it has none
 * (it is counting in-process then). What a readiness check asks.
 */
export class RedisPing extends Context.Service<RedisPing, {
  readonly ping: Effect.Effect<void, unknown>
}>()("@dropshelf/ratelimit-redis/RedisPing") {}

/**
 * The limiter on the Redis at `url`, and the ping of the client it uses; a connected client
 * reconnects by itself after an outage. If Redis is unreachable at start-up the limiter counts
 * in-process, says so once, and tries to connect again every `RECONNECT_INTERVAL` until it can,
 * then counts in Redis (decision 0110).
 */
export const layerWithPing = (url: string): Layer.Layer<RateLimiter.RateLimiter | RedisPing> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      let current: Redis.Redis["Service"] | undefined
      const ping = RedisPing.of({
        ping: Effect.suspend((): Effect.Effect<void, unknown> => current === undefined ? Effect.fail("not connected") : current.send("PING"))
      })
      const provide = (limiter: RateLimiter.RateLimiter["Service"]) =>
        Context.make(RateLimiter.RateLimiter, limiter).pipe(Context.add(RedisPing, ping))
      // Each attempt gets a scope of its own, closed when it fails, so a failed client is released.
      const connect = Effect.gen(function*() {
        const attempt = yield* Scope.fork(scope)
        const context = yield* Layer.buildWithScope(client(url), attempt).pipe(
          Effect.onError((cause) => Scope.close(attempt, Exit.failCause(cause)))
        )
        const limiter = yield* make.pipe(Effect.provideContext(context))
        current = Context.get(context, Redis.Redis)
        return limiter
      })
      const first = yield* Effect.result(connect)
      if (first._tag === "Success") return provide(first.success)
      yield* Effect.logWarning("Redis unreachable at start-up: counting rate limits in this process", String(first.failure))
      const fallback = yield* RateLimiter.makeInProcess
      let shared: RateLimiter.RateLimiter["Service"] | undefined
      yield* connect.pipe(
        Effect.retry(Schedule.spaced(RECONNECT_INTERVAL)),
        Effect.flatMap((limiter) =>
          Effect.andThen(
            Effect.sync(() => {
              shared = limiter
            }),
            Effect.logInfo("Redis answers again: rate limits are shared across instances")
          )
        ),
        Effect.forkIn(scope)
      )
      return provide(RateLimiter.RateLimiter.of({
        hit: (keyId, limit, windowMs) => shared === undefined ? fallback.hit(keyId, limit, windowMs) : shared.hit(keyId, limit, windowMs),
        peek: (keyId, limit, windowMs) => shared === undefined ? fallback.peek(keyId, limit, windowMs) : shared.peek(keyId, limit, windowMs)
      }))
    })
  )

/** The limiter alone (see `layerWithPing`). */
export const layer = (url: string): Layer.Layer<RateLimiter.RateLimiter> => layerWithPing(url)
