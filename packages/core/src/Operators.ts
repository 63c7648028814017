import { Clock, Context, Effect, Layer } from "effect"
import { Digest, SecureRandom } from "effect/crypto"
import { digestOf, generateSecret, prefixOf } from "./domain/ApiKey.ts"
import { AccountNotFound, type KeyLimitReached, type KeyNotFound } from "./domain/errors.ts"
import type { ListingId } from "./domain/Ids.ts"
import type { DelistReason } from "./domain/Listing.ts"
import { maskHint } from "./domain/Masking.ts"
import { effectivePlan, type StoredPlan } from "./domain/Plan.ts"
import { type AccountRecord, AccountStore } from "./ports/AccountStore.ts"
import { type KeyRecord, KeyStore } from "./ports/KeyStore.ts"
import { type ListingInput, ListingStore, type UpsertResult } from "./ports/ListingStore.ts"
import { WatchStore } from "./ports/WatchStore.ts"
import type { WatchView } from "./domain/WatchView.ts"
import { toWatchView } from "./Watches.ts"

/** The operator's use cases behind the `dropshelf` CLI, over the same ports as the API. */
export class Operators extends Context.Service<Operators, {
  readonly createAccount: (name: string, plan: StoredPlan) => Effect.Effect<AccountRecord>
  readonly setPlan: (accountId: string, plan: StoredPlan) => Effect.Effect<AccountRecord, AccountNotFound>
  /** A new key; the secret is in the result and nowhere else. The plan's live-key ceiling applies. */
  readonly createKey: (
    accountId: string,
    name: string
  ) => Effect.Effect<{ readonly secret: string; readonly key: KeyRecord }, AccountNotFound | KeyLimitReached>
  readonly revokeKey: (prefix: string) => Effect.Effect<KeyRecord, KeyNotFound>
  readonly upsertListings: (batch: ReadonlyArray<ListingInput>) => Effect.Effect<UpsertResult>
  readonly delist: (ids: ReadonlyArray<ListingId>, reason: DelistReason) => Effect.Effect<ReadonlyArray<ListingId>>
  readonly backfillMasks: Effect.Effect<number>
  /** An account's watches as their owner reads them (never a secret), oldest first. */
  readonly listWatches: (accountId: string) => Effect.Effect<ReadonlyArray<WatchView>, AccountNotFound>
}>()("@dropshelf/core/Operators") {
  static readonly layer = Layer.effect(
    Operators,
    Effect.gen(function*() {
      const accounts = yield* AccountStore
      const keys = yield* KeyStore
      const listings = yield* ListingStore
      const digest = yield* Digest.Digest
      const random = yield* SecureRandom.SecureRandom
      const watches = yield* WatchStore

      const createAccount = Effect.fn("Operators.createAccount")(function*(name: string, plan: StoredPlan) {
        return yield* accounts.create({ name, plan, at: yield* Clock.currentTimeMillis })
      })

      const createKey = Effect.fn("Operators.createKey")(function*(accountId: string, name: string) {
        const account = yield* accounts.find(accountId)
        if (account === undefined) return yield* new AccountNotFound({ accountId })
        const secret = yield* generateSecret.pipe(Effect.provideService(SecureRandom.SecureRandom, random))
        const key = yield* keys.create({
          accountId,
          name,
          prefix: prefixOf(secret),
          digest: yield* digestOf(secret).pipe(Effect.provideService(Digest.Digest, digest)),
          liveLimit: effectivePlan(account.plan).liveKeys,
          at: yield* Clock.currentTimeMillis
        })
        return { secret, key }
      })

      const revokeKey = Effect.fn("Operators.revokeKey")(function*(prefix: string) {
        return yield* keys.revoke(prefix, yield* Clock.currentTimeMillis)
      })

      const listWatches = Effect.fn("Operators.listWatches")(function*(accountId: string) {
        if ((yield* accounts.find(accountId)) === undefined) return yield* new AccountNotFound({ accountId })
        const now = yield* Clock.currentTimeMillis
        return (yield* watches.forAccount(accountId)).map((watch) => toWatchView(watch, now))
      })

      return Operators.of({
        createAccount,
        setPlan: accounts.setPlan,
        createKey,
        revokeKey,
        upsertListings: listings.upsert,
        delist: listings.delist,
        backfillMasks: listings.backfillMasks(maskHint),
        listWatches
      })
    })
  )
}
