import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import * as Passkey from "../domain/Passkey.ts"
import * as Session from "../domain/Session.ts"
import { MINUTE } from "../domain/Time.ts"
import { AccountStore } from "../ports/AccountStore.ts"
import { PasskeyStore } from "../ports/PasskeyStore.ts"
import { SessionStore } from "../ports/SessionStore.ts"

/**
 * The contract of `PasskeyStore`, run by each adapter with its own layer (built afresh for every
 * test): a challenge is taken once; passkeys are kept by credential id, listed, used and deleted
 * per account.
 */
export const suite = (name: string, layer: Layer.Layer<AccountStore | SessionStore | PasskeyStore>) => {
  const run = <A, E>(effect: Effect.Effect<A, E, AccountStore | SessionStore | PasskeyStore>) => Effect.provide(effect, layer)
  const T0 = Date.UTC(2026, 5, 1, 12)
  const account = (label: string) => AccountStore.use((accounts) => accounts.create({ name: label, plan: "pro", at: T0 }))
  const challenge = (id: string, at = T0, sessionId: string | null = null): Passkey.ChallengeRecord => ({
    id,
    purpose: sessionId === null ? "authenticate" : "register",
    challenge: `challenge-of-${id}`,
    sessionId,
    createdAt: at,
    expiresAt: at + Passkey.CHALLENGE_LIFETIME_MS
  })
  const passkey = (id: string, accountId: string, at: number): Passkey.PasskeyRecord => ({
    id,
    accountId,
    name: `key ${id}`,
    publicKey: "pQECAyYgASFYIA",
    counter: 0,
    transports: ["internal", "hybrid"],
    createdAt: at,
    lastUsedAt: null
  })

  describe(`${name}: passkeys and their challenges`, () => {
    it.live("a challenge is taken once, with its session; expired ones go when a later one is added", () =>
      run(Effect.gen(function*() {
        const store = yield* PasskeyStore
        const owner = yield* account("challenges")
        const session = (yield* SessionStore.use((sessions) =>
          sessions.createSession({ accountId: owner.id, session: { digest: "pk-session", expiresAt: T0 + Session.ABSOLUTE_MS }, at: T0 })
        ))!
        yield* store.addChallenge(challenge("reg", T0, session.id))
        yield* store.addChallenge(challenge("auth"))
        assert.deepStrictEqual(yield* store.takeChallenge("reg"), challenge("reg", T0, session.id))
        assert.strictEqual(yield* store.takeChallenge("reg"), undefined)
        assert.strictEqual(yield* store.takeChallenge("unknown"), undefined)

        yield* store.addChallenge(challenge("late", T0 + Passkey.CHALLENGE_LIFETIME_MS))
        assert.strictEqual(yield* store.takeChallenge("auth"), undefined)
        assert.deepStrictEqual(yield* store.takeChallenge("late"), challenge("late", T0 + Passkey.CHALLENGE_LIFETIME_MS))
      })))

    it.live("of concurrent takes of one challenge, exactly one gets it", () =>
      run(Effect.gen(function*() {
        const store = yield* PasskeyStore
        yield* store.addChallenge(challenge("raced"))
        const taken = yield* Effect.all(Array.from({ length: 8 }, () => store.takeChallenge("raced")), { concurrency: "unbounded" })
        assert.strictEqual(taken.filter((found) => found !== undefined).length, 1)
      })))

    it.live("passkeys are kept by credential id, listed oldest first, used, and deleted by their account only", () =>
      run(Effect.gen(function*() {
        const store = yield* PasskeyStore
        const owner = yield* account("owner")
        const other = yield* account("other")
        assert.isTrue(yield* store.addPasskey(passkey("cred-b", owner.id, T0 + MINUTE)))
        assert.isTrue(yield* store.addPasskey(passkey("cred-a", owner.id, T0)))
        assert.isTrue(yield* store.addPasskey(passkey("cred-c", other.id, T0)))
        assert.isFalse(yield* store.addPasskey({ ...passkey("cred-a", other.id, T0), name: "taken" }))

        assert.deepStrictEqual(yield* store.findPasskey("cred-a"), passkey("cred-a", owner.id, T0))
        assert.deepStrictEqual((yield* store.listPasskeys(owner.id)).map((found) => found.id), ["cred-a", "cred-b"])

        yield* store.usePasskey("cred-b", 7, T0 + 2 * MINUTE)
        assert.deepStrictEqual(yield* store.findPasskey("cred-b"), { ...passkey("cred-b", owner.id, T0 + MINUTE), counter: 7, lastUsedAt: T0 + 2 * MINUTE })

        assert.strictEqual(yield* store.deletePasskey(other.id, "cred-a"), undefined)
        assert.deepStrictEqual(yield* store.deletePasskey(owner.id, "cred-a"), passkey("cred-a", owner.id, T0))
        assert.strictEqual(yield* store.findPasskey("cred-a"), undefined)
        assert.deepStrictEqual((yield* store.listPasskeys(owner.id)).map((found) => found.id), ["cred-b"])
        assert.deepStrictEqual((yield* store.listPasskeys(other.id)).map((found) => found.id), ["cred-c"])
      })))
  })
}
