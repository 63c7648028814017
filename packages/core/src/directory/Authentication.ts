import { Clock, Effect } from "effect"
import { Digest } from "effect/crypto"
import { digestOf, formatOf, hasValidChecksum, isLiveAt } from "../domain/ApiKey.ts"
import { Unauthorized } from "../domain/errors.ts"
import type { AccountId } from "../domain/Ids.ts"
import type { MeView } from "../domain/Me.ts"
import { effectivePlan, type PlanLimits } from "../domain/Plan.ts"
import { remainingReveals } from "../domain/RevealLedger.ts"
import { MINUTE, monthOf, startOfNextMonth, toIso } from "../domain/Time.ts"
import type { AccountRecord } from "../ports/AccountStore.ts"
import { KeyStore, type KeyRecord } from "../ports/KeyStore.ts"
import type { RateDecision } from "../ports/RateLimiter.ts"
import { RevealStore } from "../ports/RevealStore.ts"
import { span as useCase } from "../Spans.ts"

/*
 * Who calls: `Directory.authenticate` resolves a bearer secret to a caller, `Directory.me` tells
 * the caller what its plan allows and what it has used.
 */

/**
 * Whoever calls a use case: an account and its plan as resolved for this request. A person
 * signed in to the account area calls as `callerOf(account)`; an API or MCP call as a `KeyCaller`.
 */
export interface Caller {
  readonly accountId: AccountId
  readonly plan: PlanLimits
}

/** An authenticated API call: a caller and the key it came with. */
export interface KeyCaller extends Caller {
  readonly key: KeyRecord
}

/** The caller an account is, its plan resolved now (a lapsed plan reads as free). */
export const callerOf = (account: AccountRecord): Caller => ({ accountId: account.id, plan: effectivePlan(account.plan) })

/** `last_used_at` is written at most this often per key, so reads do not turn into writes. */
export const KEY_TOUCH_INTERVAL_MS = MINUTE

/** `authenticate` and `me`; `horizonDays` is the since feed's reach, which `me` reports. */
export const make = (horizonDays: number) => Effect.gen(function*() {
  const keys = yield* KeyStore
  const reveals = yield* RevealStore
  const digestService = yield* Digest.Digest
  const digest = (secret: string) => digestOf(secret).pipe(Effect.provideService(Digest.Digest, digestService))

  // One answer for unknown and revoked keys: a dead key should not tell whether it ever lived.
  const notKnown = () => new Unauthorized({ message: "The API key is not known or has been revoked" })

  const authenticate = Effect.fnUntraced(function*(secret: string | undefined) {
    if (secret === undefined || secret.length === 0) {
      return yield* new Unauthorized({ message: "An API key is required: send Authorization: Bearer <API_KEY>" })
    }
    const format = formatOf(secret)
    if (format === undefined) return yield* new Unauthorized({ message: "The API key is malformed" })
    if (format === "current" && !hasValidChecksum(secret)) {
      return yield* new Unauthorized({ message: "The API key is malformed: its checksum does not match; copy the whole key again" })
    }
    return yield* liveKey(yield* digest(secret), notKnown)
  }, useCase("Directory.authenticate"))

  const liveKey = Effect.fnUntraced(function*(keyDigest: string, refusal: () => Unauthorized) {
    const found = yield* keys.findByDigest(keyDigest)
    const now = yield* Clock.currentTimeMillis
    // An expired key reads as revoked, and stays so: an expiry is only ever brought forward.
    if (found === undefined || !isLiveAt(found.key, now)) return yield* refusal()
    const due = found.key.lastUsedAt === null || now - found.key.lastUsedAt >= KEY_TOUCH_INTERVAL_MS
    if (due) yield* keys.touch(found.key.id, now)
    return {
      accountId: found.account.id,
      plan: effectivePlan(found.account.plan),
      key: due ? { ...found.key, lastUsedAt: now } : found.key
    } satisfies KeyCaller
  })

  /** The caller a connected application's token speaks for: its grant's key, while live. */
  const authenticateGrant = Effect.fnUntraced(function*(grantId: string) {
    const disconnected = () =>
      new Unauthorized({ message: "This application's access has been revoked or has expired; connect it again" })
    return yield* liveKey(yield* digest(grantId), disconnected)
  }, useCase("Directory.authenticateGrant"))

  const me = Effect.fnUntraced(function*(caller: KeyCaller, rate: RateDecision) {
    const now = yield* Clock.currentTimeMillis
    const used = yield* reveals.usedIn(caller.accountId, monthOf(now))
    return {
      plan: caller.plan.name,
      reveals: {
        limit: caller.plan.revealsPerMonth,
        remaining: remainingReveals(caller.plan, used),
        used,
        resets_at: toIso(startOfNextMonth(now))
      },
      rate_limit: { limit: rate.limit, remaining: rate.remaining },
      sync_feed: caller.plan.sinceFeed,
      since_horizon_days: caller.plan.sinceFeed ? horizonDays : null,
      key: {
        name: caller.key.name,
        prefix: caller.key.prefix,
        created_at: toIso(caller.key.createdAt),
        last_used_at: caller.key.lastUsedAt === null ? null : toIso(caller.key.lastUsedAt)
      }
    } satisfies MeView
  }, useCase("Directory.me"))

  return { authenticate, authenticateGrant, me }
})
