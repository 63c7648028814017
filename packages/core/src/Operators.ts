import { Clock, Context, Effect, Layer } from "effect"
import { Digest, SecureRandom } from "effect/crypto"
import { APPLICATION_PREFIX, applicationName, digestOf, generateSecret, KEY_MARKER, prefixOf } from "./domain/ApiKey.ts"
import { makeIssueSignInLink, type SignInLink } from "./accounts/Sessions.ts"
import * as Email from "./domain/Email.ts"
import {
  AccountNotFound,
  type EmailTaken,
  InvalidRequest,
  type KeyLimitReached,
  KeyNotFound,
  ListingNotFound
} from "./domain/errors.ts"
import type { HoldRecord } from "./domain/Hold.ts"
import type { ListingId } from "./domain/Ids.ts"
import { type KeysetPage, type KeysetRequest, pageOf } from "./domain/Keyset.ts"
import { type DelistReason, isTombstone, type ListingRecord, type PublicView, toPublicView } from "./domain/Listing.ts"
import { maskHint } from "./domain/Masking.ts"
import { effectivePlan, type PlanName, Plans, type StoredPlan } from "./domain/Plan.ts"
import { isCharged, type RevealEntry } from "./domain/RevealLedger.ts"
import { keyDetail } from "./domain/SecurityEvent.ts"
import { type Instant, monthOf } from "./domain/Time.ts"
import { type AccountRecord, AccountStore } from "./ports/AccountStore.ts"
import { HoldStore } from "./ports/HoldStore.ts"
import { AuthorizationStore } from "./ports/AuthorizationStore.ts"
import { type Application, type KeyRecord, KeyStore } from "./ports/KeyStore.ts"
import { type ListingInput, ListingStore, type UpsertResult } from "./ports/ListingStore.ts"
import { RevealStore } from "./ports/RevealStore.ts"
import { SecurityLogStore } from "./ports/SecurityLogStore.ts"
import { WatchStore } from "./ports/WatchStore.ts"
import type { WatchView } from "./domain/WatchView.ts"
import { toWatchView } from "./Watches.ts"

/** An account as `dropshelf accounts show` reads it. */
export interface AccountOverview {
  readonly account: AccountRecord
  /** Every key of the account, every state, oldest first (at most `Keyset.MAX_LIMIT`). */
  readonly keys: ReadonlyArray<KeyRecord>
  readonly month: string
  readonly revealsThisMonth: number
  readonly runningHolds: ReadonlyArray<HoldRecord>
}

/** What one plan reads of a listing, beside the exact figures an operator imported. */
export interface PlanReading {
  /** Whether the listing is in this plan's directory now (active, past the plan's access delay). */
  readonly listed: boolean
  /** When it enters this plan's directory (discovery plus the access delay). */
  readonly visibleFrom: Instant
  /** Whether the plan may reveal its name at all (featured names need pro or business). */
  readonly canReveal: boolean
  /** Whether a first reveal spends one of the month's allowance. */
  readonly revealCharged: boolean
}

export interface ListingOverview {
  /** As stored: the exact figures. */
  readonly listing: ListingRecord
  /** The published row every plan reads (bands and ranges); `null` for a tombstone or a draft. */
  readonly published: PublicView | null
  readonly plans: { readonly [P in PlanName]: PlanReading }
}

/** A key's lifetime at creation: `undefined` never expires. */
export type KeyLifetime = number | undefined

/** The operator's use cases behind the `dropshelf` CLI, over the same ports as the API. */
export class Operators extends Context.Service<Operators, {
  /** A new account; with `email`, its owner's address (Email.decode), unique among accounts. */
  readonly createAccount: (
    name: string,
    plan: StoredPlan,
    email?: string | undefined
  ) => Effect.Effect<AccountRecord, EmailTaken | InvalidRequest>
  readonly setPlan: (accountId: string, plan: StoredPlan) => Effect.Effect<AccountRecord, AccountNotFound>
  /** Sets the owner's address (Email.decode), or clears it with `null`. */
  readonly setEmail: (
    accountId: string,
    email: string | null
  ) => Effect.Effect<AccountRecord, AccountNotFound | EmailTaken | InvalidRequest>
  /** A one-time sign-in link's token for the account area, void after Session.LINK_LIFETIME_MS. */
  readonly issueSignInLink: (accountId: string) => Effect.Effect<SignInLink, AccountNotFound>
  /**
   * A new key; the secret is in the result and nowhere else. The plan's live-key ceiling applies.
   * With `lifetimeMs` the key expires that long after now, and then reads as revoked.
   */
  readonly createKey: (
    accountId: string,
    name: string,
    lifetimeMs?: KeyLifetime
  ) => Effect.Effect<{ readonly secret: string; readonly key: KeyRecord }, AccountNotFound | KeyLimitReached>
  /** Revokes the key; a connected application's key takes its grant's tokens with it. */
  readonly revokeKey: (prefix: string) => Effect.Effect<KeyRecord, KeyNotFound>
  /**
   * Revokes the connected application whose grant this is, once the authorization server has
   * revoked the grant itself (a code or refresh token used twice, the client's own revocation);
   * nothing when no live key is that grant's.
   */
  readonly revokeGrantKey: (grantId: string) => Effect.Effect<void>
  /**
   * A key for an application the account's person connected by signing in (an OAuth grant),
   * under the same live-key ceiling as API keys; revoked like any key.
   */
  readonly connectApplication: (
    accountId: string,
    application: Application,
    expiresAt: Instant | null
  ) => Effect.Effect<KeyRecord, AccountNotFound | KeyLimitReached>
  /**
   * A successor for the live key `prefix` (same account and name, `lifetimeMs` as at creation),
   * and the old key expiring `graceMs` from now (or sooner, if it already did).
   */
  readonly rotateKey: (
    prefix: string,
    graceMs: number,
    lifetimeMs?: KeyLifetime
  ) => Effect.Effect<
    { readonly secret: string; readonly key: KeyRecord; readonly retired: KeyRecord },
    KeyNotFound | KeyLimitReached | InvalidRequest
  >
  readonly upsertListings: (batch: ReadonlyArray<ListingInput>) => Effect.Effect<UpsertResult>
  readonly delist: (ids: ReadonlyArray<ListingId>, reason: DelistReason) => Effect.Effect<ReadonlyArray<ListingId>>
  readonly backfillMasks: Effect.Effect<number>
  readonly listAccounts: (page: KeysetRequest) => Effect.Effect<KeysetPage<AccountRecord>>
  readonly showAccount: (accountId: string) => Effect.Effect<AccountOverview, AccountNotFound>
  readonly listKeys: (accountId: string, page: KeysetRequest) => Effect.Effect<KeysetPage<KeyRecord>, AccountNotFound>
  readonly listHolds: (
    filter: { readonly accountId: string | undefined; readonly running: boolean },
    page: KeysetRequest
  ) => Effect.Effect<KeysetPage<HoldRecord>>
  readonly showListing: (id: string) => Effect.Effect<ListingOverview, ListingNotFound>
  /** `month` is `YYYY-MM` (UTC), or every month when undefined. */
  readonly listReveals: (
    accountId: string,
    month: string | undefined,
    page: KeysetRequest
  ) => Effect.Effect<KeysetPage<RevealEntry>, AccountNotFound>
  /** An account's watches as their owner reads them (never a secret), oldest first. */
  readonly listWatches: (accountId: string) => Effect.Effect<ReadonlyArray<WatchView>, AccountNotFound>
}>()("@dropshelf/core/Operators") {
  static readonly layer = Layer.effect(
    Operators,
    Effect.gen(function*() {
      const accounts = yield* AccountStore
      const keys = yield* KeyStore
      const listings = yield* ListingStore
      const holds = yield* HoldStore
      const reveals = yield* RevealStore
      const digest = yield* Digest.Digest
      const random = yield* SecureRandom.SecureRandom
      const watches = yield* WatchStore
      const securityLog = yield* SecurityLogStore
      const authorizations = yield* AuthorizationStore
      const issueSignInLink = yield* makeIssueSignInLink

      const createAccount = Effect.fn("Operators.createAccount")(function*(name: string, plan: StoredPlan, email?: string) {
        const address = email === undefined ? null : yield* Effect.fromResult(Email.decode("email", email))
        return yield* accounts.create({ name, plan, email: address, at: yield* Clock.currentTimeMillis })
      })

      const setEmail = Effect.fn("Operators.setEmail")(function*(accountId: string, email: string | null) {
        return yield* accounts.setEmail(accountId, email === null ? null : yield* Effect.fromResult(Email.decode("email", email)))
      })

      const newKey = Effect.fnUntraced(function*(name: string, expiresAt: Instant | null) {
        const secret = yield* generateSecret.pipe(Effect.provideService(SecureRandom.SecureRandom, random))
        const fields = {
          name,
          prefix: prefixOf(secret),
          digest: yield* digestOf(secret).pipe(Effect.provideService(Digest.Digest, digest)),
          expiresAt
        }
        return { secret, fields }
      })

      const createKey = Effect.fn("Operators.createKey")(function*(accountId: string, name: string, lifetimeMs?: KeyLifetime) {
        const account = yield* accounts.find(accountId)
        if (account === undefined) return yield* new AccountNotFound({ accountId })
        const at = yield* Clock.currentTimeMillis
        const { fields, secret } = yield* newKey(name, lifetimeMs === undefined ? null : at + lifetimeMs)
        const key = yield* keys.create({ ...fields, accountId, liveLimit: effectivePlan(account.plan).liveKeys, at })
        yield* securityLog.record({ accountId, kind: "key.created", at, detail: keyDetail(key) })
        return { secret, key }
      })

      const revokeKey = Effect.fn("Operators.revokeKey")(function*(prefix: string) {
        const at = yield* Clock.currentTimeMillis
        const key = yield* keys.revoke(prefix, at)
        if (key.application) yield* authorizations.revokeGrant(key.application.grantId)
        yield* securityLog.record({ accountId: key.accountId, kind: "key.revoked", at, detail: keyDetail(key) })
        return key
      })

      const revokeGrantKey = Effect.fn("Operators.revokeGrantKey")(function*(grantId: string) {
        const found = yield* keys.findByDigest(yield* digestOf(grantId).pipe(Effect.provideService(Digest.Digest, digest)))
        if (found?.key.application?.grantId !== grantId || found.key.revokedAt !== null) return
        yield* Effect.ignore(revokeKey(found.key.prefix))
      })

      const connectApplication = Effect.fn("Operators.connectApplication")(function*(accountId: string, application: Application, expiresAt: Instant | null) {
        const account = yield* accounts.find(accountId)
        if (account === undefined) return yield* new AccountNotFound({ accountId })
        const at = yield* Clock.currentTimeMillis
        const secret = yield* generateSecret.pipe(Effect.provideService(SecureRandom.SecureRandom, random))
        const name = applicationName(application.clientName, application.clientId)
        const key = yield* keys.create({
          name,
          // Told apart from API keys at a glance; the random part is the same length.
          prefix: APPLICATION_PREFIX + prefixOf(secret).slice(KEY_MARKER.length),
          digest: yield* digestOf(application.grantId).pipe(Effect.provideService(Digest.Digest, digest)),
          application: { ...application, clientName: name },
          expiresAt,
          accountId,
          liveLimit: effectivePlan(account.plan).liveKeys,
          at
        })
        yield* securityLog.record({ accountId, kind: "key.created", at, detail: keyDetail(key) })
        return key
      })

      const rotateKey = Effect.fn("Operators.rotateKey")(function*(prefix: string, graceMs: number, lifetimeMs?: KeyLifetime) {
        const found = yield* keys.findByPrefix(prefix)
        if (found === undefined) return yield* new KeyNotFound({ prefix })
        if (found.key.application) {
          return yield* new InvalidRequest({
            parameter: "prefix",
            message: `${prefix} is a connected application's access, which has no secret to rotate; revoke it and connect the application again`
          })
        }
        const at = yield* Clock.currentTimeMillis
        const { fields, secret } = yield* newKey(found.key.name, lifetimeMs === undefined ? null : at + lifetimeMs)
        const rotated = yield* keys.rotate({
          prefix,
          successor: fields,
          liveLimit: effectivePlan(found.account.plan).liveKeys,
          retireAt: at + graceMs,
          at
        })
        yield* securityLog.record({
          accountId: rotated.successor.accountId,
          kind: "key.rotated",
          at,
          detail: `${keyDetail(rotated.retired)} → ${rotated.successor.prefix}`
        })
        return { secret, key: rotated.successor, retired: rotated.retired }
      })

      const existingAccount = Effect.fnUntraced(function*(accountId: string) {
        const account = yield* accounts.find(accountId)
        if (account === undefined) return yield* new AccountNotFound({ accountId })
        return account
      })

      const listAccounts = Effect.fn("Operators.listAccounts")(function*(page: KeysetRequest) {
        const rows = yield* accounts.list({ after: page.after, limit: page.limit + 1 })
        return pageOf(rows, page.limit, (account) => account.id)
      })

      const showAccount = Effect.fn("Operators.showAccount")(function*(accountId: string) {
        const account = yield* existingAccount(accountId)
        const now = yield* Clock.currentTimeMillis
        const month = monthOf(now)
        return {
          account,
          keys: yield* keys.forAccount(accountId, { after: undefined, limit: 1000 }),
          month,
          revealsThisMonth: yield* reveals.usedIn(accountId, month),
          runningHolds: yield* holds.list({ accountId, runningAt: now }, { after: undefined, limit: 1000 })
        }
      })

      const listKeys = Effect.fn("Operators.listKeys")(function*(accountId: string, page: KeysetRequest) {
        yield* existingAccount(accountId)
        const rows = yield* keys.forAccount(accountId, { after: page.after, limit: page.limit + 1 })
        return pageOf(rows, page.limit, (key) => key.id)
      })

      const listHolds = Effect.fn("Operators.listHolds")(function*(
        filter: { readonly accountId: string | undefined; readonly running: boolean },
        page: KeysetRequest
      ) {
        const runningAt = filter.running ? yield* Clock.currentTimeMillis : undefined
        const rows = yield* holds.list({ accountId: filter.accountId, runningAt }, { after: page.after, limit: page.limit + 1 })
        return pageOf(rows, page.limit, (hold) => hold.id)
      })

      const showListing = Effect.fn("Operators.showListing")(function*(id: string) {
        const listing = yield* listings.find(id as ListingId)
        if (listing === undefined) return yield* new ListingNotFound({ listingId: id })
        const now = yield* Clock.currentTimeMillis
        const active = listing.status === "active"
        const reading = (name: PlanName): PlanReading => {
          const plan = Plans[name]
          const visibleFrom = listing.discoveredAt + plan.accessDelayMs
          return {
            listed: active && visibleFrom <= now,
            visibleFrom,
            canReveal: listing.tier !== "featured" || plan.revealFeatured,
            revealCharged: isCharged(plan, listing.tier)
          }
        }
        return {
          listing,
          published: active && !isTombstone(listing.status) ? toPublicView(listing) : null,
          plans: { free: reading("free"), pro: reading("pro"), business: reading("business") }
        }
      })

      const listReveals = Effect.fn("Operators.listReveals")(function*(
        accountId: string,
        month: string | undefined,
        page: KeysetRequest
      ) {
        yield* existingAccount(accountId)
        const range = month === undefined ? { from: undefined, to: undefined } : monthRange(month)
        const rows = yield* reveals.forAccount(accountId, range, { after: page.after, limit: page.limit + 1 })
        return pageOf(rows, page.limit, (entry) => entry.listingId)
      })

      const listWatches = Effect.fn("Operators.listWatches")(function*(accountId: string) {
        yield* existingAccount(accountId)
        const now = yield* Clock.currentTimeMillis
        return (yield* watches.forAccount(accountId)).map((watch) => toWatchView(watch, now))
      })

      return Operators.of({
        createAccount,
        setPlan: accounts.setPlan,
        setEmail,
        issueSignInLink,
        createKey,
        revokeKey,
        revokeGrantKey,
        connectApplication,
        rotateKey,
        upsertListings: listings.upsert,
        delist: listings.delist,
        backfillMasks: listings.backfillMasks(maskHint),
        listAccounts,
        showAccount,
        listKeys,
        listHolds,
        showListing,
        listReveals,
        listWatches
      })
    })
  )
}

/** `YYYY-MM` as the instants `[first of the month, first of the next)` in UTC. */
export const monthRange = (month: string): { readonly from: Instant; readonly to: Instant } => {
  const [year, index] = month.split("-").map(Number) as [number, number]
  return { from: Date.UTC(year, index - 1, 1), to: Date.UTC(year, index, 1) }
}
