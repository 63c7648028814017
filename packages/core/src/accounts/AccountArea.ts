import { Clock, Context, Effect, Layer } from "effect"
import * as ApiKey from "../domain/ApiKey.ts"
import { type AccountNotFound, type InvalidRequest, type KeyLimitReached, KeyNotFound } from "../domain/errors.ts"
import { effectivePlan, type PlanLimits } from "../domain/Plan.ts"
import { remainingReveals } from "../domain/RevealLedger.ts"
import { DAY, type Instant, startOfNextMonth } from "../domain/Time.ts"
import { type KeyLifetime, Operators } from "../Operators.ts"
import type { AccountRecord } from "../ports/AccountStore.ts"
import type { KeyRecord } from "../ports/KeyStore.ts"

/*
 * What a signed-in person may see and do with their own account, scoped to it: the account
 * area's use cases. Each delegates to the operator's use case that holds the rule (the live-key
 * ceiling, revocation, the reveal count), so the website and the CLI cannot disagree.
 */

/** The account area's first page: the plan, what is used of it, and what it lacks. */
export interface AreaOverview {
  readonly account: AccountRecord
  /** The plan as it reads now (lapsed reads as free). */
  readonly plan: PlanLimits
  readonly reveals: {
    readonly used: number
    /** `null`: no monthly ceiling. */
    readonly limit: number | null
    readonly remaining: number | null
    readonly resetsAt: Instant
  }
  readonly runningHolds: number
  readonly watches: number
  /** The account's keys live now, against the plan's ceiling (`plan.liveKeys`). */
  readonly liveKeys: number
}

/** How long a rotated key keeps working beside its successor, as `dropshelf keys rotate` by default. */
export const ROTATION_GRACE_MS = DAY

export class AccountArea extends Context.Service<AccountArea, {
  readonly overview: (accountId: string) => Effect.Effect<AreaOverview, AccountNotFound>
  /** The account's keys, every state, oldest first. */
  readonly keys: (accountId: string) => Effect.Effect<ReadonlyArray<KeyRecord>, AccountNotFound>
  /** As `Operators.createKey`, with the name as a person typed it (ApiKey.decodeName). */
  readonly createKey: (
    accountId: string,
    name: string,
    lifetimeMs?: KeyLifetime
  ) => Effect.Effect<{ readonly secret: string; readonly key: KeyRecord }, AccountNotFound | KeyLimitReached | InvalidRequest>
  /** Revokes the account's key `keyId`; another account's key is `KeyNotFound`, as an unknown one. */
  readonly revokeKey: (accountId: string, keyId: string) => Effect.Effect<KeyRecord, KeyNotFound>
  /**
   * As `Operators.rotateKey` for the account's live key `keyId`: a successor with the same name
   * and lifetime, and the old key working ROTATION_GRACE_MS more. Another account's key is
   * `KeyNotFound`.
   */
  readonly rotateKey: (
    accountId: string,
    keyId: string
  ) => Effect.Effect<
    { readonly secret: string; readonly key: KeyRecord; readonly retired: KeyRecord },
    KeyNotFound | KeyLimitReached | InvalidRequest
  >
}>()("@dropshelf/core/AccountArea") {
  static readonly layer = Layer.effect(
    AccountArea,
    Effect.gen(function*() {
      const operators = yield* Operators

      const overview = Effect.fn("AccountArea.overview")(function*(accountId: string) {
        const shown = yield* operators.showAccount(accountId)
        const watches = yield* operators.listWatches(accountId)
        const now = yield* Clock.currentTimeMillis
        const plan = effectivePlan(shown.account.plan)
        return {
          account: shown.account,
          plan,
          reveals: {
            used: shown.revealsThisMonth,
            limit: plan.revealsPerMonth,
            remaining: remainingReveals(plan, shown.revealsThisMonth),
            resetsAt: startOfNextMonth(now)
          },
          runningHolds: shown.runningHolds.length,
          watches: watches.length,
          liveKeys: shown.keys.filter((key) => ApiKey.isLiveAt(key, now)).length
        } satisfies AreaOverview
      })

      const keys = Effect.fn("AccountArea.keys")(function*(accountId: string) {
        return (yield* operators.showAccount(accountId)).keys
      })

      const createKey = Effect.fn("AccountArea.createKey")(function*(accountId: string, name: string, lifetimeMs?: KeyLifetime) {
        return yield* operators.createKey(accountId, yield* Effect.fromResult(ApiKey.decodeName(name)), lifetimeMs)
      })

      /** The account's own key `keyId`, or `KeyNotFound` (for another account's key too). */
      const ownKey = Effect.fnUntraced(function*(accountId: string, keyId: string) {
        const own = yield* keys(accountId).pipe(Effect.orElseSucceed((): ReadonlyArray<KeyRecord> => []))
        const key = own.find((candidate) => candidate.id === keyId)
        if (key === undefined) return yield* new KeyNotFound({ prefix: keyId })
        return key
      })

      const revokeKey = Effect.fn("AccountArea.revokeKey")(function*(accountId: string, keyId: string) {
        return yield* operators.revokeKey((yield* ownKey(accountId, keyId)).prefix)
      })

      const rotateKey = Effect.fn("AccountArea.rotateKey")(function*(accountId: string, keyId: string) {
        const key = yield* ownKey(accountId, keyId)
        const lifetimeMs = key.expiresAt === null ? undefined : key.expiresAt - key.createdAt
        return yield* operators.rotateKey(key.prefix, ROTATION_GRACE_MS, lifetimeMs)
      })

      return AccountArea.of({ overview, keys, createKey, revokeKey, rotateKey })
    })
  )
}
