import { assert, describe, it } from "@effect/vitest"
import { EmailSignIn, Errors, Operators, Passkey, Passkeys, SecurityLogStore, Sessions, WebAuthn } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"

/*
 * The passkey use cases over a stand-in for the WebAuthn port: an "authenticator answer" here
 * is plain JSON naming the challenge and origin it was made for, which the stand-in checks as
 * the real port checks a signed answer. What is tested is the core's rule: which challenge an
 * answer must match, that it is spent once, and that a sign-in makes a session as a link does.
 */

const T0 = Date.UTC(2026, 5, 15, 12)
const RP: WebAuthn.RelyingParty = { id: "127.0.0.1", name: "dropshelf", origins: ["http://127.0.0.1:8080"] }
const CLIENT = "198.51.100.7"

interface Answer {
  readonly id: string
  readonly challenge: string
  readonly origin: string
  readonly counter: number
}

const answerOf = (response: unknown) => response as Answer
const verified = (rp: WebAuthn.RelyingParty, challenge: string, response: unknown) => {
  const answer = answerOf(response)
  return answer.challenge === challenge && rp.origins.includes(answer.origin) ? Effect.succeed(answer) : Effect.fail(new Errors.PasskeyRefused())
}

const standInWebAuthn = Layer.succeed(WebAuthn.WebAuthn, {
  registrationOptions: ({ challenge, exclude }) => Effect.succeed({ challenge, exclude: exclude.map((passkey) => passkey.id) }),
  verifyRegistration: ({ challenge, response, rp }) =>
    Effect.map(verified(rp, challenge, response), (answer) => ({ id: answer.id, publicKey: `key-of-${answer.id}`, counter: answer.counter, transports: ["internal"] })),
  authenticationOptions: ({ challenge }) => Effect.succeed({ challenge }),
  credentialIdOf: (response) => {
    const id = (response as { id?: unknown } | null)?.id
    return typeof id === "string" ? id : undefined
  },
  verifyAuthentication: ({ challenge, credential, response, rp }) =>
    Effect.flatMap(verified(rp, challenge, response), (answer) =>
      answer.counter > credential.counter ? Effect.succeed({ counter: answer.counter }) : Effect.fail(new Errors.PasskeyRefused()))
})

const layer = Passkeys.Passkeys.layer.pipe(Layer.provide(standInWebAuthn), Layer.provideMerge(StoreMemory.layerDirectory))

const challengeOf = (ceremony: Passkeys.Ceremony) => (ceremony.options as { challenge: string }).challenge

/** An account, signed in by a link: what the account area's pages have of a person. */
const signedIn = (name: string) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions.Sessions
    const account = yield* (yield* Operators.Operators).createAccount(name, "free")
    const link = yield* sessions.issueSignInLink(account.id)
    const { token } = yield* sessions.redeem(link.token)
    return { token, caller: yield* sessions.authenticate(token) }
  })

/** Registers a passkey `id` for the signed-in caller. */
const register = (caller: Sessions.SessionCaller, id: string, name = "laptop") =>
  Effect.gen(function*() {
    const passkeys = yield* Passkeys.Passkeys
    const ceremony = yield* passkeys.beginRegistration(caller, RP)
    const response: Answer = { id, challenge: challengeOf(ceremony), origin: RP.origins[0]!, counter: 0 }
    return yield* passkeys.finishRegistration(caller, RP, { challengeId: ceremony.challengeId, name, response })
  })

describe("Passkeys", () => {
  it.effect("a signed-in person registers a passkey under a name; its challenge answers once", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const passkeys = yield* Passkeys.Passkeys
      const { caller } = yield* signedIn("owner")
      const ceremony = yield* passkeys.beginRegistration(caller, RP)
      const answer = { challengeId: ceremony.challengeId, name: "  laptop  ", response: { id: "cred-1", challenge: challengeOf(ceremony), origin: RP.origins[0]!, counter: 0 } }
      const added = yield* passkeys.finishRegistration(caller, RP, answer)
      assert.deepStrictEqual(added, {
        id: "cred-1",
        accountId: caller.account.id,
        name: "laptop",
        publicKey: "key-of-cred-1",
        counter: 0,
        transports: ["internal"],
        createdAt: T0,
        lastUsedAt: null
      })
      assert.deepStrictEqual(yield* passkeys.list(caller.account.id), [added])
      assert.deepStrictEqual(yield* Effect.flip(passkeys.finishRegistration(caller, RP, { ...answer, response: { ...answer.response, id: "cred-2" } })), new Errors.PasskeyRefused())
      const again = yield* passkeys.beginRegistration(caller, RP)
      assert.deepStrictEqual((again.options as { exclude: Array<string> }).exclude, ["cred-1"])
    }).pipe(Effect.provide(layer)))

  it.effect("a registration is refused with a bad name, another session's challenge, an expired one or another origin's answer", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const passkeys = yield* Passkeys.Passkeys
      const { caller } = yield* signedIn("owner")
      const { caller: other } = yield* signedIn("other")
      const answerTo = (ceremony: Passkeys.Ceremony, origin = RP.origins[0]!) => ({
        challengeId: ceremony.challengeId,
        name: "phone",
        response: { id: "cred-x", challenge: challengeOf(ceremony), origin, counter: 0 }
      })

      const named = yield* passkeys.beginRegistration(caller, RP)
      for (const name of ["", "   ", "x".repeat(Passkey.MAX_NAME_LENGTH + 1), "nul\u0000"]) {
        assert.strictEqual((yield* Effect.flip(passkeys.finishRegistration(caller, RP, { ...answerTo(named), name })))._tag, "InvalidRequest")
      }

      const othersChallenge = yield* passkeys.beginRegistration(other, RP)
      assert.deepStrictEqual(yield* Effect.flip(passkeys.finishRegistration(caller, RP, answerTo(othersChallenge))), new Errors.PasskeyRefused())

      const late = yield* passkeys.beginRegistration(caller, RP)
      yield* TestClock.adjust(Passkey.CHALLENGE_LIFETIME_MS)
      assert.deepStrictEqual(yield* Effect.flip(passkeys.finishRegistration(caller, RP, answerTo(late))), new Errors.PasskeyRefused())

      const foreign = yield* passkeys.beginRegistration(caller, RP)
      assert.deepStrictEqual(yield* Effect.flip(passkeys.finishRegistration(caller, RP, answerTo(foreign, "https://evil.example"))), new Errors.PasskeyRefused())
      // A refused answer spent its challenge: the right answer after it is refused too.
      assert.deepStrictEqual(yield* Effect.flip(passkeys.finishRegistration(caller, RP, answerTo(foreign))), new Errors.PasskeyRefused())

      const sign = yield* passkeys.beginAuthentication(RP, CLIENT)
      assert.deepStrictEqual(yield* Effect.flip(passkeys.finishRegistration(caller, RP, answerTo(sign))), new Errors.PasskeyRefused())
      assert.deepStrictEqual(yield* passkeys.list(caller.account.id), [])
    }).pipe(Effect.provide(layer)))

  it.effect("signing in with a passkey starts a session as a link does; its challenge answers once", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const passkeys = yield* Passkeys.Passkeys
      const sessions = yield* Sessions.Sessions
      const { caller, token: before } = yield* signedIn("owner")
      yield* register(caller, "cred-1")

      yield* TestClock.adjust(60_000)
      const ceremony = yield* passkeys.beginAuthentication(RP, CLIENT)
      const answer = { challengeId: ceremony.challengeId, response: { id: "cred-1", challenge: challengeOf(ceremony), origin: RP.origins[0]!, counter: 5 } }
      const signed = yield* passkeys.finishAuthentication(RP, answer, before)
      assert.notStrictEqual(signed.token, before)
      assert.strictEqual((yield* sessions.authenticate(signed.token)).account.id, caller.account.id)
      assert.strictEqual((yield* Effect.flip(sessions.authenticate(before)))._tag, "SessionEnded")
      assert.deepStrictEqual((yield* passkeys.list(caller.account.id)).map(({ counter, lastUsedAt }) => ({ counter, lastUsedAt })), [
        { counter: 5, lastUsedAt: T0 + 60_000 }
      ])

      // Even with a counter the authenticator moved on, the spent challenge does not answer again.
      const replayed = { ...answer, response: { ...answer.response, counter: 6 } }
      assert.deepStrictEqual(yield* Effect.flip(passkeys.finishAuthentication(RP, replayed)), new Errors.PasskeyRefused())
    }).pipe(Effect.provide(layer)))

  it.effect("a sign-in is refused for an unknown credential, a registration's challenge, an expired one or another origin's answer", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const passkeys = yield* Passkeys.Passkeys
      const { caller } = yield* signedIn("owner")
      yield* register(caller, "cred-1")
      const answerTo = (ceremony: Passkeys.Ceremony, id = "cred-1", origin = RP.origins[0]!) => ({
        challengeId: ceremony.challengeId,
        response: { id, challenge: challengeOf(ceremony), origin, counter: 1 }
      })
      const refused = new Errors.PasskeyRefused()
      assert.deepStrictEqual(yield* Effect.flip(passkeys.finishAuthentication(RP, answerTo(yield* passkeys.beginAuthentication(RP, CLIENT), "cred-unknown"))), refused)
      assert.deepStrictEqual(yield* Effect.flip(passkeys.finishAuthentication(RP, answerTo(yield* passkeys.beginRegistration(caller, RP)))), refused)
      assert.deepStrictEqual(
        yield* Effect.flip(passkeys.finishAuthentication(RP, answerTo(yield* passkeys.beginAuthentication(RP, CLIENT), "cred-1", "https://evil.example"))),
        refused
      )
      assert.deepStrictEqual(yield* Effect.flip(passkeys.finishAuthentication(RP, { challengeId: "pkc_forged", response: { id: "cred-1" } })), refused)
      const late = yield* passkeys.beginAuthentication(RP, CLIENT)
      yield* TestClock.adjust(Passkey.CHALLENGE_LIFETIME_MS)
      assert.deepStrictEqual(yield* Effect.flip(passkeys.finishAuthentication(RP, answerTo(late))), refused)
      assert.isDefined(yield* passkeys.finishAuthentication(RP, answerTo(yield* passkeys.beginAuthentication(RP, CLIENT))))
    }).pipe(Effect.provide(layer)))

  it.effect("a passkey is deleted by its own account only", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const passkeys = yield* Passkeys.Passkeys
      const { caller } = yield* signedIn("owner")
      const { caller: other } = yield* signedIn("other")
      yield* register(caller, "cred-1")
      assert.deepStrictEqual(yield* Effect.flip(passkeys.remove(other.account.id, "cred-1")), new Errors.PasskeyNotFound({ passkeyId: "cred-1" }))
      assert.strictEqual((yield* passkeys.remove(caller.account.id, "cred-1")).id, "cred-1")
      assert.deepStrictEqual(yield* passkeys.list(caller.account.id), [])
      // The account's security log tells both, named; the other account's tells neither.
      const log = yield* SecurityLogStore.SecurityLogStore
      const kinds = (accountId: string) =>
        Effect.map(log.forAccount(accountId, { after: undefined, limit: 50 }), (events) =>
          events.filter((event) => event.kind.startsWith("passkey.")).map((event) => [event.kind, event.detail]))
      assert.deepStrictEqual(yield* kinds(caller.account.id), [["passkey.deleted", "laptop"], ["passkey.added", "laptop"]])
      assert.deepStrictEqual(yield* kinds(other.account.id), [])
      const ceremony = yield* passkeys.beginAuthentication(RP, CLIENT)
      assert.deepStrictEqual(
        yield* Effect.flip(passkeys.finishAuthentication(RP, { challengeId: ceremony.challengeId, response: { id: "cred-1", challenge: challengeOf(ceremony), origin: RP.origins[0]!, counter: 9 } })),
        new Errors.PasskeyRefused()
      )
    }).pipe(Effect.provide(layer)))
  it.effect("a client address begins so many passkey sign-ins a window: past it, no challenge is stored", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const passkeys = yield* Passkeys.Passkeys
      const { passkeySignInsPerAddress, windowMs } = EmailSignIn.DEFAULT_ATTEMPT_LIMITS
      for (let n = 0; n < passkeySignInsPerAddress; n++) yield* passkeys.beginAuthentication(RP, CLIENT)
      const refused = yield* Effect.flip(passkeys.beginAuthentication(RP, CLIENT))
      assert.strictEqual(refused._tag, "TooManyAttempts")
      assert.isAbove(refused.retryAt, T0)
      // Another address is counted apart; the window's end frees the first.
      yield* passkeys.beginAuthentication(RP, "198.51.100.8")
      yield* TestClock.adjust(windowMs)
      yield* passkeys.beginAuthentication(RP, CLIENT)
    }).pipe(Effect.provide(layer)))
})
