import { Context, Effect, Function } from "effect"

/*
 * One key per logical write, in Stripe's model: the server runs a write once per key and answers
 * a repeat with the stored answer. The client puts the key on the request it builds for a call,
 * and its retries re-send that very request, so a retry after a dropped connection cannot
 * reveal or hold twice. A server that does not read the header ignores it.
 */

export const HEADER = "Idempotency-Key"

/** The key the writes of an effect run under; unset, each write makes its own. */
export const IdempotencyKey = Context.Reference<string | undefined>("@dropshelf/client/IdempotencyKey", {
  defaultValue: () => undefined
})

/** A fresh key: a random UUID (122 random bits), from the platform's Web Crypto. */
export const newKey = (): string => globalThis.crypto.randomUUID()

/** Runs `effect`'s writes under the caller's own `key` (to repeat a write across processes, say). */
export const withKey: {
  (key: string): <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(effect: Effect.Effect<A, E, R>, key: string): Effect.Effect<A, E, R>
} = Function.dual(
  2,
  <A, E, R>(effect: Effect.Effect<A, E, R>, key: string): Effect.Effect<A, E, R> =>
    Effect.provideService(effect, IdempotencyKey, key)
)

/** The methods that write: every POST and DELETE of the API. */
export const isWrite = (method: string): boolean => method === "POST" || method === "DELETE" || method === "PUT" || method === "PATCH"
