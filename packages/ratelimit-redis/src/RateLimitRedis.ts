import { RateLimiter, Time } from "@dropshelf/core"
import { Clock, Context, Deferred, Duration, Effect, Exit, Layer, Result, Schedule, Scope } from "effect"
import { Redis } from "effect/persistence"
import * as RedisConnection from "./RedisConnection.ts"

/** One request's step on a key's counter: count it (`hit`) or only read it (`peek`). */
export interface Step {
  readonly prefix: string
  readonly windowMs: number
  readonly counts: boolean
}

/**
 * The counting steps of one batch, in order, in one atomic script: for each key (KEYS[i], a
 * counter's prefix, `dropshelf:ratelimit:<key id>:<window ms>`) ARGV holds its window in ms
 * and whether to count ("1", an INCR on the counter of the current wall-clock window, named
 * `<prefix>:<window start>`) or only to read it. The time is Redis's own, so
 * every instance agrees on the window. Returns, for each step, the count after it and the end
 * of its window (epoch ms), flattened.
 */
export const stepsScript = Redis.script(
  (steps: ReadonlyArray<Step>) => [
    ...steps.map((step) => step.prefix),
    ...steps.flatMap((step) => [step.windowMs, step.counts ? "1" : "0"])
  ],
  {
    numberOfKeys: (steps) => steps.length,
    lua: `local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local answers = {}
for i = 1, #KEYS do
  local length = tonumber(ARGV[2 * i - 1])
  local window = now - (now % length)
  local key = KEYS[i] .. ":" .. window
  local count
  if ARGV[2 * i] == "1" then
    count = redis.call("INCR", key)
    if count == 1 then
      redis.call("PEXPIRE", key, (window + length - now) + 5000)
    end
  else
    count = tonumber(redis.call("GET", key) or "0")
  end
  answers[2 * i - 1] = count
  answers[2 * i] = window + length
end
return answers
`
  }
).withReturnType<ReadonlyArray<number>>()

/**
 * How long a batch waits for Redis before its requests are counted in-process instead. A
 * disconnected client fails at once (no offline queue), so this only bounds a Redis that hangs;
 * it is generous because a busy but healthy Redis must not be mistaken for a dead one (at
 * 250 ms, a loaded two-core machine fell back mid-burst and let a few requests over the limit
 * through).
 */
export const REDIS_TIMEOUT_MS = 2_000

/**
 * While Redis is unreachable, how often one request asks it again; the others count in-process
 * at once. Without it, a Redis that hangs (a connection that takes commands and never answers)
 * would make every keyed request wait `REDIS_TIMEOUT_MS` before falling back.
 */
export const PROBE_INTERVAL_MS = 1_000

interface Waiting {
  readonly step: Step
  readonly done: Deferred.Deferred<readonly [number, number], unknown>
}

/**
 * The `RateLimiter` port on Redis. Steps that arrive while a script runs go together in the
 * next one, which starts as soon as it ends: under load one round trip counts the requests of
 * many connections, each still exactly (the script takes them one after another). A step never
 * joins a script already sent, so its window is read after the request began.
 * `batched` false (`DROPSHELF_CACHES_OFF=redis-batches`) sends each step as a script of its own.
 *
 * When Redis cannot be reached the request is counted by the in-process limiter instead, and
 * the switch is logged once each way: limits stay per key but become per instance until Redis
 * answers again (decision 0110). Meanwhile one request a `PROBE_INTERVAL_MS` tries Redis; the
 * rest do not wait for it.
 */
export const make = (batched = true) => Effect.gen(function*() {
  const redis = yield* Redis.Redis
  const scope = yield* Effect.scope
  const send = redis.eval(stepsScript)
  const fallback = yield* RateLimiter.makeInProcess
  let degraded = false
  let nextProbeAt = 0
  // Present while a script runs: the steps for the next one.
  let next: Array<Waiting> | undefined

  const settle = (batch: ReadonlyArray<Waiting>, exit: Exit.Exit<ReadonlyArray<number>, unknown>) =>
    batch.forEach(({ done }, index) =>
      Deferred.doneUnsafe(
        done,
        Exit.isSuccess(exit)
          ? Effect.succeed([Number(exit.value[2 * index]), Number(exit.value[2 * index + 1])] as const)
          : Effect.failCause(exit.cause)
      )
    )

  const runFrom = (batch: ReadonlyArray<Waiting>): Effect.Effect<void> =>
    send(batch.map(({ step }) => step)).pipe(
      Effect.timeout(REDIS_TIMEOUT_MS),
      Effect.exit,
      Effect.flatMap((exit) =>
        Effect.suspend(() => {
          settle(batch, exit)
          const waiting = next!
          if (waiting.length === 0) {
            next = undefined
            return Effect.void
          }
          // A Redis that did not answer is not asked again for the steps queued behind it:
          // they count in-process now, as the requests after them will until the next probe.
          if (Exit.isFailure(exit)) {
            next = undefined
            settle(waiting, exit)
            return Effect.void
          }
          next = []
          return runFrom(waiting)
        })
      )
    )

  const onRedis = (step: Step): Effect.Effect<readonly [number, number], unknown> =>
    Effect.suspend(() => {
      if (!batched) {
        return send([step]).pipe(
          Effect.timeout(REDIS_TIMEOUT_MS),
          Effect.map((reply) => [Number(reply[0]), Number(reply[1])] as const)
        )
      }
      const done = Deferred.makeUnsafe<readonly [number, number], unknown>()
      if (next !== undefined) {
        next.push({ step, done })
        return Deferred.await(done)
      }
      next = []
      return runFrom([{ step, done }]).pipe(
        Effect.uninterruptible,
        Effect.forkIn(scope),
        Effect.andThen(Deferred.await(done))
      )
    })

  /** One step on Redis, or on the in-process counters when Redis does not answer in time. */
  const decide = (
    step: Step,
    limit: number,
    instead: () => Effect.Effect<RateLimiter.RateDecision>
  ): Effect.Effect<RateLimiter.RateDecision> =>
    Effect.gen(function*() {
      if (degraded) {
        const now = yield* Clock.currentTimeMillis
        if (now < nextProbeAt) return yield* instead()
        // One probe at a time: none other until this one has answered or given up.
        nextProbeAt = now + REDIS_TIMEOUT_MS + PROBE_INTERVAL_MS
      }
      const answer = yield* Effect.result(onRedis(step))
      if (Result.isSuccess(answer)) {
        if (degraded) {
          degraded = false
          yield* Effect.logInfo("Redis answers again: rate limits are shared across instances")
        }
        const [count, resetAt] = answer.success
        return RateLimiter.decisionOf(count, limit, resetAt, !step.counts)
      }
      // The next probe a whole interval after this one gave up, not after it started.
      nextProbeAt = (yield* Clock.currentTimeMillis) + PROBE_INTERVAL_MS
      if (!degraded) {
        degraded = true
        yield* Effect.logWarning("Redis unreachable: counting rate limits in this process", String(answer.failure))
      }
      return yield* instead()
    })

  // The window's length is part of the name: windows of two lengths can start at the same
  // instant, and a changed window must start from its own counters, not another length's.
  const prefixOf = (keyId: string, windowMs: number) => `dropshelf:ratelimit:${keyId}:${windowMs}`
  return RateLimiter.RateLimiter.of({
    hit: (keyId, limit, windowMs = Time.MINUTE) =>
      decide({ prefix: prefixOf(keyId, windowMs), windowMs, counts: true }, limit, () => fallback.hit(keyId, limit, windowMs)),
    peek: (keyId, limit, windowMs = Time.MINUTE) =>
      decide({ prefix: prefixOf(keyId, windowMs), windowMs, counts: false }, limit, () => fallback.peek(keyId, limit, windowMs))
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
export const layerWithPing = (url: string, batched = true): Layer.Layer<RateLimiter.RateLimiter | RedisPing> =>
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
        const limiter = yield* make(batched).pipe(Effect.provideContext(context), Scope.provide(attempt))
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
