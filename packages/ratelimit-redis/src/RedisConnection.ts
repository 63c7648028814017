import { RedisClient } from "@redis/client"
import { Effect, Layer } from "effect"
import { Redis } from "effect/persistence"

/*
 * The limiter's connection: effect's `Redis` service on node-redis's `RedisClient` class itself.
 * Not `createClient` (nor `@effect/platform-node/NodeRedis`, which calls it): that derives a class
 * with every typed command method, and another for MULTI, when it makes a client, start-up
 * garbage that kept an idle server markedly larger (decision 0506). The limiter sends its
 * commands by name, which the class alone does.
 */

/** Where the limiter's Redis is, and how long connecting and closing may take. */
export interface Options {
  readonly url: string
  /** How long connecting may take before the attempt fails. */
  readonly connectTimeoutMs: number
  /**
   * How long closing waits for the replies still due before dropping the connection: the
   * client's own close waits for every one, which a Redis that hangs never sends.
   */
  readonly closeTimeoutMs: number
}

type ClientOptions = NonNullable<ConstructorParameters<typeof RedisClient>[0]>

const failed = (cause: unknown) => new Redis.RedisError({ cause })

/** Connected when built, closed with its scope; fails to build when Redis does not answer. */
export const layer = (options: Options): Layer.Layer<Redis.Redis, Redis.RedisError> =>
  Layer.effect(
    Redis.Redis,
    Effect.gen(function*() {
      let ready = false
      const client = yield* Effect.acquireRelease(
        Effect.sync(() =>
          new RedisClient({
            url: options.url,
            // Commands fail at once while disconnected instead of queueing behind a reconnect.
            disableOfflineQueue: true,
            // The limiter bounds each command itself (REDIS_TIMEOUT_MS). node-redis's own 5 s
            // timeout is an AbortSignal.timeout a command, which outlives the reply: at thousands
            // of requests a second they filled the old generation (decision 0506). `undefined` is
            // node-redis's documented opt-out, which its type does not spell.
            commandOptions: { timeout: undefined } as unknown as NonNullable<ClientOptions["commandOptions"]>,
            socket: {
              connectTimeout: options.connectTimeoutMs,
              // The first connection fails the layer (the limiter retries it); one that was up reconnects.
              reconnectStrategy: (retries: number, cause: Error) =>
                ready ? Math.min(2 ** retries * 50, 2_000) + Math.floor(Math.random() * 200) : cause
            }
          })
        ),
        (client) =>
          Effect.promise(() => client.close().catch(() => undefined)).pipe(
            Effect.timeoutOption(options.closeTimeoutMs),
            // Still waiting on a reply: drop the socket, which fails the commands left.
            Effect.andThen(Effect.sync(() => {
              if (client.isReady) client.destroy()
            }))
          )
      )
      client.once("ready", () => {
        ready = true
      })
      // node-redis throws an `error` event nobody listens to, and emits one at every reconnect
      // attempt; a command reports its own failure, and the limiter logs an outage once.
      client.on("error", () => undefined)
      yield* Effect.tryPromise({ try: () => client.connect(), catch: failed })
      return yield* Redis.make({
        send: <A>(command: string, ...args: ReadonlyArray<string>) =>
          Effect.tryPromise({ try: () => client.sendCommand([command, ...args]) as Promise<A>, catch: failed }),
        // The limiter neither reserves connections nor subscribes.
        connect: Effect.fail(failed("the rate limiter's Redis connection reserves no connections")),
        subscribe: () => Effect.fail(failed("the rate limiter's Redis connection does not subscribe"))
      })
    })
  )
