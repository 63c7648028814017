import { Clock, Context, Effect, Layer, Schedule } from "effect"
import { Digest, SecureRandom } from "effect/crypto"
import { AccountNotFound, SessionEnded, SignInLinkInvalid } from "../domain/errors.ts"
import { SIGNED_IN_BY_LINK, SIGNED_IN_BY_PASSKEY } from "../domain/SecurityEvent.ts"
import * as Session from "../domain/Session.ts"
import { HOUR, type Instant } from "../domain/Time.ts"
import { type AccountRecord, AccountStore } from "../ports/AccountStore.ts"
import { SecurityLogStore } from "../ports/SecurityLogStore.ts"
import { SessionStore } from "../ports/SessionStore.ts"

/*
 * Signing people in to the account area: a one-time link (issued by the operator, later mailed)
 * is redeemed for a session, which the account area's adapter carries in a cookie. Nothing here
 * knows HTTP: tokens in, tokens out.
 */

export interface SignInLink {
  /** The link's token, shown once; the adapter puts it in a URL. */
  readonly token: string
  readonly expiresAt: Instant
}

export interface SignedIn {
  /** The new session's token, shown once (the cookie's value). */
  readonly token: string
  readonly session: Session.SessionRecord
}

export interface SessionCaller {
  readonly session: Session.SessionRecord
  readonly account: AccountRecord
}

const sha256 = (digest: Digest.Digest["Service"], text: string) => digest.digestHex(Digest.sha256, new TextEncoder().encode(text))

/** Issues a sign-in link for an account; shared by `Sessions` and the operator's `Operators`. */
export const makeIssueSignInLink = Effect.gen(function*() {
  const accounts = yield* AccountStore
  const store = yield* SessionStore
  const digest = yield* Digest.Digest
  const random = yield* SecureRandom.SecureRandom
  return Effect.fn("Sessions.issueSignInLink")(function*(accountId: string) {
    const account = yield* accounts.find(accountId)
    if (account === undefined) return yield* new AccountNotFound({ accountId })
    const token = yield* Session.generateToken(Session.LINK_MARKER).pipe(Effect.provideService(SecureRandom.SecureRandom, random))
    const createdAt = yield* Clock.currentTimeMillis
    const expiresAt = createdAt + Session.LINK_LIFETIME_MS
    yield* store.issueLink({ accountId, digest: yield* sha256(digest, token), createdAt, expiresAt })
    return { token, expiresAt } satisfies SignInLink
  })
})

/** A new session's token and what a store keeps of it: how every sign-in makes its session. */
const makeMintSession = Effect.gen(function*() {
  const digest = yield* Digest.Digest
  const random = yield* SecureRandom.SecureRandom
  return Effect.fnUntraced(function*(at: Instant) {
    const token = yield* Session.generateToken(Session.SESSION_MARKER).pipe(Effect.provideService(SecureRandom.SecureRandom, random))
    return { token, stored: { digest: yield* sha256(digest, token), expiresAt: at + Session.ABSOLUTE_MS } }
  })
})

/**
 * Ends the session of a token, if there is one still open, and logs it: what signing out does,
 * and signing in does to the browser's previous session.
 */
const makeSignOut = Effect.gen(function*() {
  const store = yield* SessionStore
  const digest = yield* Digest.Digest
  const securityLog = yield* SecurityLogStore
  return Effect.fn("Sessions.signOut")(function*(sessionToken: string) {
    if (!Session.isSessionToken(sessionToken)) return
    const session = yield* store.findSession(yield* sha256(digest, sessionToken))
    if (session === undefined || session.endedAt !== null) return
    const at = yield* Clock.currentTimeMillis
    yield* store.endSession(session.id, at)
    yield* securityLog.record({ accountId: session.accountId, kind: "session.signed_out", at, detail: null })
  })
})

/**
 * Starts a session for an account whose sign-in another use case proved (a passkey), exactly
 * as redeeming a link does: a new token, and the browser's `previous` session ended.
 * `undefined` when the account no longer exists.
 */
export const makeStartSession = Effect.gen(function*() {
  const store = yield* SessionStore
  const mint = yield* makeMintSession
  const signOut = yield* makeSignOut
  const securityLog = yield* SecurityLogStore
  return Effect.fn("Sessions.start")(function*(accountId: string, previous?: string) {
    const at = yield* Clock.currentTimeMillis
    const { stored, token } = yield* mint(at)
    const session = yield* store.createSession({ accountId, session: stored, at })
    if (session === undefined) return undefined
    if (previous !== undefined) yield* signOut(previous)
    yield* securityLog.record({ accountId, kind: "session.signed_in", at, detail: SIGNED_IN_BY_PASSKEY })
    return { token, session } satisfies SignedIn
  })
})

export class Sessions extends Context.Service<Sessions, {
  /** A one-time link for the account, void after Session.LINK_LIFETIME_MS. */
  readonly issueSignInLink: (accountId: string) => Effect.Effect<SignInLink, AccountNotFound>
  /**
   * Spends the link for a new session. `previous`, the session the browser had, if any, is
   * ended: signing in never keeps a session token that existed before.
   */
  readonly redeem: (linkToken: string, previous?: string | undefined) => Effect.Effect<SignedIn, SignInLinkInvalid>
  /** The live session of this token and its account; its idle expiry moves at most once a Session.TOUCH_EVERY_MS. */
  readonly authenticate: (sessionToken: string) => Effect.Effect<SessionCaller, SessionEnded>
  /** Ends the session of this token (nothing when there is none). */
  readonly signOut: (sessionToken: string) => Effect.Effect<void>
  /** Ends every session of the account not ended yet; how many. */
  readonly signOutEverywhere: (accountId: string) => Effect.Effect<number>
  /** Deletes links and sessions over for Session.RETENTION_MS or more; how many of each. */
  readonly prune: Effect.Effect<{ readonly links: number; readonly sessions: number }>
}>()("@dropshelf/core/Sessions") {
  /** The pruning, at start and then every `interval`, as `Directory.layerPruning`; a failed round is logged. */
  static readonly layerPruning = (interval: number = HOUR): Layer.Layer<never, never, Sessions> =>
    Layer.effectDiscard(Effect.gen(function*() {
      const sessions = yield* Sessions
      yield* sessions.prune.pipe(
        Effect.asVoid,
        Effect.catchCause((cause) => Effect.logWarning("dropshelf: pruning sign-in links and sessions failed", cause)),
        Effect.repeat(Schedule.spaced(interval)),
        Effect.forkScoped
      )
    }))

  static readonly layer = Layer.effect(
    Sessions,
    Effect.gen(function*() {
      const accounts = yield* AccountStore
      const store = yield* SessionStore
      const digest = yield* Digest.Digest
      const issueSignInLink = yield* makeIssueSignInLink
      const mint = yield* makeMintSession
      const signOut = yield* makeSignOut
      const securityLog = yield* SecurityLogStore

      const sessionOf = Effect.fnUntraced(function*(token: string) {
        if (!Session.isSessionToken(token)) return undefined
        return yield* store.findSession(yield* sha256(digest, token))
      })

      const redeem = Effect.fn("Sessions.redeem")(function*(linkToken: string, previous?: string) {
        if (!Session.isLinkToken(linkToken)) return yield* new SignInLinkInvalid()
        const at = yield* Clock.currentTimeMillis
        const { stored, token } = yield* mint(at)
        const session = yield* store.redeemLink({ linkDigest: yield* sha256(digest, linkToken), session: stored, at })
        if (session === undefined) return yield* new SignInLinkInvalid()
        if (previous !== undefined) yield* signOut(previous)
        yield* securityLog.record({ accountId: session.accountId, kind: "session.signed_in", at, detail: SIGNED_IN_BY_LINK })
        return { token, session } satisfies SignedIn
      })

      const authenticate = Effect.fn("Sessions.authenticate")(function*(sessionToken: string) {
        const session = yield* sessionOf(sessionToken)
        const at = yield* Clock.currentTimeMillis
        if (session === undefined || !Session.isLiveAt(session, at)) return yield* new SessionEnded()
        const account = yield* accounts.find(session.accountId)
        if (account === undefined) return yield* new SessionEnded()
        if (!Session.needsTouch(session, at)) return { session, account } satisfies SessionCaller
        yield* store.touchSession(session.id, at)
        return { session: { ...session, lastSeenAt: at }, account } satisfies SessionCaller
      })

      const signOutEverywhere = Effect.fn("Sessions.signOutEverywhere")(function*(accountId: string) {
        const at = yield* Clock.currentTimeMillis
        const ended = yield* store.endAccountSessions(accountId, at)
        yield* securityLog.record({ accountId, kind: "session.signed_out_everywhere", at, detail: `${ended} sessions ended` })
        return ended
      })

      const prune = Effect.flatMap(Clock.currentTimeMillis, (now) => store.prune(now - Session.RETENTION_MS)).pipe(
        Effect.withSpan("Sessions.prune")
      )

      return Sessions.of({ issueSignInLink, redeem, authenticate, signOut, signOutEverywhere, prune })
    })
  )
}
