import { Effect } from "effect"
import { SecureRandom } from "effect/crypto"
import { Base64Url } from "effect/encoding"
import { DAY, HOUR, type Instant, MINUTE } from "./Time.ts"

/*
 * A person signs in to the account area with a one-time link and stays signed in by a
 * session. Both are bearer secrets of 256 random bits, shown once (in the link, in a cookie)
 * and stored only as their SHA-256 digest, like API keys. The lifetimes are the rules of
 * docs/decisions/0800-sessions-and-csrf.md.
 */

/** A sign-in link is spent at its first use, and is void this long after it was issued. */
export const LINK_LIFETIME_MS = 15 * MINUTE
/** A session unused this long has ended. */
export const IDLE_MS = HOUR
/** A session ends this long after sign-in, however busy. */
export const ABSOLUTE_MS = 7 * DAY
/** A session's last use is written at most this often: a page a second costs no write a second. */
export const TOUCH_EVERY_MS = MINUTE
/** Links and sessions over for this long are deleted by the hourly pruning. */
export const RETENTION_MS = 30 * DAY

export const LINK_MARKER = "dsl_"
export const SESSION_MARKER = "dss_"

const TOKEN_BYTES = 32
const tokenShape = (marker: string) => new RegExp(`^${marker}[A-Za-z0-9_-]{43}$`)
const linkShape = tokenShape(LINK_MARKER)
const sessionShape = tokenShape(SESSION_MARKER)

/** Whether `text` has the shape of a sign-in link's token: anything else is refused without a look-up. */
export const isLinkToken = (text: string): boolean => linkShape.test(text)
export const isSessionToken = (text: string): boolean => sessionShape.test(text)

/** A fresh token: the marker and 256 random bits in base64url. */
export const generateToken = Effect.fnUntraced(function*(marker: string) {
  const random = yield* SecureRandom.SecureRandom
  return marker + Base64Url.encode(yield* random.randomBytes(TOKEN_BYTES))
})

export interface SignInLinkRecord {
  readonly digest: string
  readonly accountId: string
  readonly createdAt: Instant
  readonly expiresAt: Instant
  readonly usedAt: Instant | null
}

export interface SessionRecord {
  readonly id: string
  readonly accountId: string
  /** SHA-256 of the session's token, lowercase hex. */
  readonly digest: string
  readonly createdAt: Instant
  /** The last use written (at most every TOUCH_EVERY_MS). */
  readonly lastSeenAt: Instant
  /** The absolute end: createdAt + ABSOLUTE_MS. */
  readonly expiresAt: Instant
  /** Signed out (this session, or every session of its account); `null`: not ended. */
  readonly endedAt: Instant | null
}

/** Whether a link may still be spent at `at`: unused, and before its expiry. */
export const isRedeemable = (link: Pick<SignInLinkRecord, "usedAt" | "expiresAt">, at: Instant): boolean =>
  link.usedAt === null && at < link.expiresAt

/** When a session ends if nothing more happens: idle after its last use, or its absolute end. */
export const endsAt = (session: Pick<SessionRecord, "lastSeenAt" | "expiresAt">): Instant =>
  Math.min(session.lastSeenAt + IDLE_MS, session.expiresAt)

/** Whether a session admits a request at `at`. */
export const isLiveAt = (session: Pick<SessionRecord, "lastSeenAt" | "expiresAt" | "endedAt">, at: Instant): boolean =>
  session.endedAt === null && at < endsAt(session)

/** Whether a use at `at` should be written, so the idle expiry moves. */
export const needsTouch = (session: Pick<SessionRecord, "lastSeenAt">, at: Instant): boolean =>
  at - session.lastSeenAt >= TOUCH_EVERY_MS

/** When a link stopped being redeemable: its use, or its expiry. */
export const linkOverAt = (link: Pick<SignInLinkRecord, "usedAt" | "expiresAt">): Instant =>
  link.usedAt === null ? link.expiresAt : Math.min(link.usedAt, link.expiresAt)

/** When a session stopped admitting requests: signed out, idle, or its absolute end; later for a live one. */
export const overAt = (session: Pick<SessionRecord, "lastSeenAt" | "expiresAt" | "endedAt">): Instant =>
  session.endedAt === null ? endsAt(session) : Math.min(session.endedAt, endsAt(session))
