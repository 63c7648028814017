import { Clock, Context, Effect, Layer, Result } from "effect"
import { SecureRandom } from "effect/crypto"
import { Base64Url } from "effect/encoding"
import { type InvalidRequest, PasskeyNotFound, PasskeyRefused } from "../domain/errors.ts"
import * as Passkey from "../domain/Passkey.ts"
import { PasskeyStore } from "../ports/PasskeyStore.ts"
import { SecurityLogStore } from "../ports/SecurityLogStore.ts"
import { type RelyingParty, WebAuthn } from "../ports/WebAuthn.ts"
import { RateLimiter } from "../ports/RateLimiter.ts"
import { SignInAttemptLimits, TooManyAttempts } from "./EmailSignIn.ts"
import { makeStartSession, type SessionCaller, type SignedIn } from "./Sessions.ts"

/*
 * Passkeys of the account area: a signed-in person registers one, and later signs in with it
 * (usernameless: the authenticator offers its discoverable credentials for this site). What
 * makes a valid passkey sign-in is written here once: a challenge this server issued for that
 * ceremony, unspent and unexpired (and, for a registration, issued to the same session), and
 * an authenticator answer that the WebAuthn port verifies against it. A sign-in then starts a
 * session exactly as a sign-in link does (Sessions.makeStartSession). Nothing here knows HTTP:
 * the adapter says which relying party and origins a request is for.
 */

/** A ceremony begun: the challenge's id (sent back with the answer) and the options for the browser. */
export interface Ceremony {
  readonly challengeId: string
  readonly options: unknown
}

const CHALLENGE_BYTES = 32

export class Passkeys extends Context.Service<Passkeys, {
  /** Options to register a new passkey for the signed-in `caller`, their challenge tied to its session. */
  readonly beginRegistration: (caller: SessionCaller, rp: RelyingParty) => Effect.Effect<Ceremony>
  /** Verifies the authenticator's answer to `challengeId` and keeps the passkey under `name`. */
  readonly finishRegistration: (
    caller: SessionCaller,
    rp: RelyingParty,
    answer: { readonly challengeId: string; readonly name: string; readonly response: unknown }
  ) => Effect.Effect<Passkey.PasskeyRecord, PasskeyRefused | InvalidRequest>
  /**
   * Options to sign in with any passkey of this relying party. Anyone may ask, and each ceremony
   * stores a challenge: `client` (its address) may begin `passkeySignInsPerAddress` a window.
   */
  readonly beginAuthentication: (rp: RelyingParty, client: string) => Effect.Effect<Ceremony, TooManyAttempts>
  /**
   * Verifies the authenticator's answer to `challengeId` and starts a session for the passkey's
   * account, ending the browser's `previous` session as a sign-in link does.
   */
  readonly finishAuthentication: (
    rp: RelyingParty,
    answer: { readonly challengeId: string; readonly response: unknown },
    previous?: string | undefined
  ) => Effect.Effect<SignedIn, PasskeyRefused>
  /** The account's passkeys, oldest first. */
  readonly list: (accountId: string) => Effect.Effect<ReadonlyArray<Passkey.PasskeyRecord>>
  /** Deletes the account's passkey `passkeyId`; another account's is `PasskeyNotFound`, as an unknown one. */
  readonly remove: (accountId: string, passkeyId: string) => Effect.Effect<Passkey.PasskeyRecord, PasskeyNotFound>
}>()("@dropshelf/core/Passkeys") {
  static readonly layer = Layer.effect(
    Passkeys,
    Effect.gen(function*() {
      const store = yield* PasskeyStore
      const securityLog = yield* SecurityLogStore
      const webAuthn = yield* WebAuthn
      const random = yield* SecureRandom.SecureRandom
      const startSession = yield* makeStartSession
      const limiter = yield* RateLimiter
      const limits = yield* SignInAttemptLimits

      const issue = Effect.fnUntraced(function*(purpose: Passkey.ChallengeRecord["purpose"], sessionId: string | null) {
        const createdAt = yield* Clock.currentTimeMillis
        const record: Passkey.ChallengeRecord = {
          id: `pkc_${Base64Url.encode(yield* random.randomBytes(16))}`,
          purpose,
          challenge: Base64Url.encode(yield* random.randomBytes(CHALLENGE_BYTES)),
          sessionId,
          createdAt,
          expiresAt: createdAt + Passkey.CHALLENGE_LIFETIME_MS
        }
        yield* store.addChallenge(record)
        return record
      })

      /** The challenge `id`, spent now whatever follows: a failed answer cannot be tried again. */
      const take = Effect.fnUntraced(function*(id: string, purpose: Passkey.ChallengeRecord["purpose"], sessionId: string | null) {
        const challenge = yield* store.takeChallenge(id)
        const at = yield* Clock.currentTimeMillis
        if (
          challenge === undefined || challenge.purpose !== purpose || challenge.sessionId !== sessionId ||
          !Passkey.isChallengeLive(challenge, at)
        ) return yield* new PasskeyRefused()
        return challenge
      })

      const beginRegistration = Effect.fn("Passkeys.beginRegistration")(function*(caller: SessionCaller, rp: RelyingParty) {
        const challenge = yield* issue("register", caller.session.id)
        const existing = yield* store.listPasskeys(caller.account.id)
        const options = yield* webAuthn.registrationOptions({
          rp,
          challenge: challenge.challenge,
          userId: caller.account.id,
          userName: caller.account.email ?? caller.account.name,
          exclude: existing.map((passkey) => ({ id: passkey.id, transports: passkey.transports }))
        })
        return { challengeId: challenge.id, options } satisfies Ceremony
      })

      const finishRegistration = Effect.fn("Passkeys.finishRegistration")(function*(
        caller: SessionCaller,
        rp: RelyingParty,
        answer: { readonly challengeId: string; readonly name: string; readonly response: unknown }
      ) {
        const name = Passkey.decodeName(answer.name)
        if (Result.isFailure(name)) return yield* name.failure
        const challenge = yield* take(answer.challengeId, "register", caller.session.id)
        const credential = yield* webAuthn.verifyRegistration({ rp, challenge: challenge.challenge, response: answer.response })
        const record: Passkey.PasskeyRecord = {
          id: credential.id,
          accountId: caller.account.id,
          name: name.success,
          publicKey: credential.publicKey,
          counter: credential.counter,
          transports: credential.transports,
          createdAt: yield* Clock.currentTimeMillis,
          lastUsedAt: null
        }
        if (!(yield* store.addPasskey(record))) return yield* new PasskeyRefused()
        yield* securityLog.record({ accountId: record.accountId, kind: "passkey.added", at: record.createdAt, detail: record.name })
        return record
      })

      const beginAuthentication = Effect.fn("Passkeys.beginAuthentication")(function*(rp: RelyingParty, client: string) {
        const counted = yield* limiter.hit(`passkey-signin-address:${client}`, limits.passkeySignInsPerAddress, limits.windowMs)
        if (!counted.allowed) return yield* new TooManyAttempts({ retryAt: counted.resetAt })
        const challenge = yield* issue("authenticate", null)
        const options = yield* webAuthn.authenticationOptions({ rp, challenge: challenge.challenge })
        return { challengeId: challenge.id, options } satisfies Ceremony
      })

      const finishAuthentication = Effect.fn("Passkeys.finishAuthentication")(function*(
        rp: RelyingParty,
        answer: { readonly challengeId: string; readonly response: unknown },
        previous?: string
      ) {
        const challenge = yield* take(answer.challengeId, "authenticate", null)
        const credentialId = webAuthn.credentialIdOf(answer.response)
        const passkey = credentialId === undefined ? undefined : yield* store.findPasskey(credentialId)
        if (passkey === undefined) return yield* new PasskeyRefused()
        const { counter } = yield* webAuthn.verifyAuthentication({ rp, challenge: challenge.challenge, response: answer.response, credential: passkey })
        yield* store.usePasskey(passkey.id, counter, yield* Clock.currentTimeMillis)
        const signedIn = yield* startSession(passkey.accountId, previous)
        if (signedIn === undefined) return yield* new PasskeyRefused()
        return signedIn
      })

      const list = Effect.fn("Passkeys.list")(function*(accountId: string) {
        return yield* store.listPasskeys(accountId)
      })

      const remove = Effect.fn("Passkeys.remove")(function*(accountId: string, passkeyId: string) {
        const removed = yield* store.deletePasskey(accountId, passkeyId)
        if (removed === undefined) return yield* new PasskeyNotFound({ passkeyId })
        yield* securityLog.record({ accountId, kind: "passkey.deleted", at: yield* Clock.currentTimeMillis, detail: removed.name })
        return removed
      })

      return Passkeys.of({ beginRegistration, finishRegistration, beginAuthentication, finishAuthentication, list, remove })
    })
  )
}
