import { Context, type Effect } from "effect"
import type { SessionRecord } from "../domain/Session.ts"
import type { Instant } from "../domain/Time.ts"

/**
 * Sign-in links and sessions of the account area, each stored as the digest of its token
 * (the token itself never reaches a store). The rules are Session.ts's; a store applies them
 * atomically where two requests may race.
 */
export class SessionStore extends Context.Service<SessionStore, {
  readonly issueLink: (link: {
    readonly accountId: string
    readonly digest: string
    readonly createdAt: Instant
    readonly expiresAt: Instant
  }) => Effect.Effect<void>
  /**
   * Atomically: the link with `linkDigest`, if redeemable at `at` (Session.isRedeemable) and its
   * account still exists, is marked used and a session for that account is created with
   * `session.digest`; of two concurrent redeems of one link, one gets the session and the other
   * `undefined`, as does an unknown, used or expired link.
   */
  readonly redeemLink: (request: {
    readonly linkDigest: string
    readonly session: { readonly digest: string; readonly expiresAt: Instant }
    readonly at: Instant
  }) => Effect.Effect<SessionRecord | undefined>
  /**
   * A session for `accountId` from `at`, for a sign-in proven without a link (a passkey); its
   * record, or `undefined` when the account no longer exists.
   */
  readonly createSession: (request: {
    readonly accountId: string
    readonly session: { readonly digest: string; readonly expiresAt: Instant }
    readonly at: Instant
  }) => Effect.Effect<SessionRecord | undefined>
  /** The session with this token digest, ended or not. */
  readonly findSession: (digest: string) => Effect.Effect<SessionRecord | undefined>
  /** Records a use at `at` (never moves `lastSeenAt` back). */
  readonly touchSession: (id: string, at: Instant) => Effect.Effect<void>
  /** Ends one session (no change when already ended). */
  readonly endSession: (id: string, at: Instant) => Effect.Effect<void>
  /** Ends every session of the account not ended yet; how many. */
  readonly endAccountSessions: (accountId: string, at: Instant) => Effect.Effect<number>
  /**
   * Deletes the links over (Session.linkOverAt) and the sessions over (Session.overAt) before
   * `before`; how many of each.
   */
  readonly prune: (before: Instant) => Effect.Effect<{ readonly links: number; readonly sessions: number }>
}>()("@dropshelf/core/SessionStore") {}
