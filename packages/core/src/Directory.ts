import { Context, Effect, Layer, Schedule, type Stream } from "effect"
import * as Authentication from "./directory/Authentication.ts"
import type { Caller, KeyCaller } from "./directory/Authentication.ts"
import * as Holds from "./directory/Holds.ts"
import * as IdempotentWrites from "./directory/IdempotentWrites.ts"
import * as Listings from "./directory/Listings.ts"
import type { SnapshotItem } from "./directory/Listings.ts"
import * as Reveals from "./directory/Reveals.ts"
import type {
  EndError,
  ExtendError,
  HoldError,
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  ListError,
  ListingNotFound,
  RevealError,
  Unauthorized,
  UpgradeRequired
} from "./domain/errors.ts"
import type { HoldList, HoldOutcome, HoldResponse } from "./domain/Hold.ts"
import { type Answer, DEFAULT_WAIT_MS, type IdempotencyKey, type Write } from "./domain/Idempotency.ts"
import type { ReaderListing, ReaderPage, RevealedListingView } from "./domain/Listing.ts"
import type { ListQuery } from "./domain/ListQuery.ts"
import type { MeView } from "./domain/Me.ts"
import { DEFAULT_HORIZON_DAYS } from "./domain/SinceHorizon.ts"
import { HOUR } from "./domain/Time.ts"
import type { RateDecision } from "./ports/RateLimiter.ts"

/*
 * The directory's one service. Its use cases live by concern under directory/: who calls
 * (Authentication), the reads (Listings), Reveals, Holds, and IdempotentWrites; each use case
 * runs in a span of its name (`Directory.list`…) while tracing is on.
 */

export { type Caller, callerOf, KEY_TOUCH_INTERVAL_MS, type KeyCaller } from "./directory/Authentication.ts"
export { IDEMPOTENCY_POLL_MS } from "./directory/IdempotentWrites.ts"
export { CODES_SHOWN, SNAPSHOT_CHUNK, type SnapshotItem, SNAPSHOTS_AT_ONCE } from "./directory/Listings.ts"

/**
 * How long a repeat of a write waits for the first request with its idempotency key to end,
 * in milliseconds; past it the repeat is refused `IdempotencyKeyInUse`.
 */
export const IdempotencyWait = Context.Reference<number>("@dropshelf/core/IdempotencyWait", {
  defaultValue: () => DEFAULT_WAIT_MS
})

/**
 * How many days back the since feed reaches: an older `since` is refused `SinceTooOld`, and
 * tombstones are pruned a little after it (domain/SinceHorizon.ts).
 */
export const SinceHorizonDays = Context.Reference<number>("@dropshelf/core/SinceHorizonDays", {
  defaultValue: () => DEFAULT_HORIZON_DAYS
})

/**
 * The directory's use cases, for the REST server, the MCP tools and any service that embeds
 * the core. Every method takes an authenticated caller and returns domain values or tagged
 * domain errors; none of them knows HTTP.
 */
export class Directory extends Context.Service<Directory, {
  /** Resolves a bearer secret to a caller; the plan is read afresh on every call. */
  readonly authenticate: (secret: string | undefined) => Effect.Effect<KeyCaller, Unauthorized>
  /** Resolves a connected application's grant (its token's `grantId`) to the caller its key is, while live. */
  readonly authenticateGrant: (grantId: string) => Effect.Effect<KeyCaller, Unauthorized>
  readonly me: (caller: KeyCaller, rate: RateDecision) => Effect.Effect<MeView>
  /**
   * A page of listings as this caller reads them: each record with what this caller is told of
   * it (`ListingJson.pageJson` renders it as REST and MCP send it, `Listing.toPageView` makes its
   * view). The query is decoded by `ListQuery.ListQuerySchema`.
   */
  readonly list: (caller: Caller, query: ListQuery) => Effect.Effect<ReaderPage, ListError>
  /**
   * One listing as this caller reads it: its record with what this caller is told of it
   * (`ListingJson.rowJson` renders it, `Listing.toListingView` makes its view).
   */
  readonly get: (caller: Caller, id: string) => Effect.Effect<ReaderListing, ListingNotFound>
  readonly reveal: (caller: Caller, id: string) => Effect.Effect<RevealedListingView, RevealError>
  readonly hold: (caller: Caller, id: string) => Effect.Effect<HoldResponse, HoldError>
  readonly extend: (caller: Caller, holdId: string) => Effect.Effect<HoldResponse, ExtendError>
  readonly end: (caller: Caller, holdId: string, outcome: HoldOutcome) => Effect.Effect<HoldResponse, EndError>
  readonly holds: (caller: Caller) => Effect.Effect<HoldList>
  /**
   * Every listing the caller can read, as `list` shows it, from one consistent state of the
   * directory, in chunks and in no promised order, then its `synced_at`: a since run from it
   * misses no change the snapshot did not show. Plans with the since feed only. The stream reads
   * a chunk ahead of its consumer at most (a slow consumer slows the read).
   */
  readonly snapshot: (caller: Caller) => Effect.Effect<Stream.Stream<SnapshotItem>, UpgradeRequired>
  /**
   * Runs a write at most once per idempotency key of the caller's account (Stripe's model): the
   * first request with the key runs it; a repeat of the same request within 24 hours gets that
   * answer back, refusals included, with `replayed` set, and changes nothing; a repeat that
   * arrives while the first runs waits for its answer (`IdempotencyWait`, then
   * `IdempotencyKeyInUse`); the key sent with a different request is `IdempotencyKeyReused`.
   * A write that ends in a fault keeps no answer, so its repeat runs it again. A write, once
   * begun, runs to its end even if the caller stops waiting.
   */
  readonly idempotent: <W extends Write>(
    caller: Caller,
    key: IdempotencyKey,
    write: W
  ) => Effect.Effect<Answer<W>, IdempotencyKeyReused | IdempotencyKeyInUse>
  /** Deletes the records of idempotency keys past their 24 hours; returns how many. */
  readonly pruneIdempotencyKeys: Effect.Effect<number>
  /** Deletes tombstones past the since feed's horizon (and its grace and margin); returns how many. */
  readonly pruneTombstones: Effect.Effect<number>
}>()("@dropshelf/core/Directory") {
  /**
   * Prunes the records of idempotency keys and the tombstones past the since horizon once at
   * start, then every `interval` (default one hour), for as long as the layer lives. A failed
   * round is logged and the next one runs.
   */
  static readonly layerPruning = (interval: number = HOUR): Layer.Layer<never, never, Directory> =>
    Layer.effectDiscard(Effect.gen(function*() {
      const directory = yield* Directory
      const round = (what: string, prune: Effect.Effect<number>) =>
        prune.pipe(
          Effect.asVoid,
          Effect.catchCause((cause) => Effect.logWarning(`dropshelf: pruning ${what} failed`, cause))
        )
      yield* Effect.andThen(
        round("idempotency keys", directory.pruneIdempotencyKeys),
        round("tombstones", directory.pruneTombstones)
      ).pipe(
        Effect.repeat(Schedule.spaced(interval)),
        Effect.forkScoped
      )
    }))

  /** Needs every storage port, the availability check, the cursor codec and `Digest`. */
  static readonly layer = Layer.effect(
    Directory,
    Effect.gen(function*() {
      const horizonDays = yield* SinceHorizonDays
      const account = yield* Authentication.make(horizonDays)
      const listings = yield* Listings.make(horizonDays)
      const { reveal } = yield* Reveals.make(listings.findReadable)
      const { end, extend, hold, holds } = yield* Holds.make(listings.findReadable)
      const writes = yield* IdempotentWrites.make(yield* IdempotencyWait, { end, extend, hold, reveal })
      return Directory.of({
        authenticate: account.authenticate,
        authenticateGrant: account.authenticateGrant,
        me: account.me,
        list: listings.list,
        get: listings.get,
        reveal,
        hold,
        extend,
        end,
        holds,
        snapshot: listings.snapshot,
        idempotent: writes.idempotent,
        pruneIdempotencyKeys: writes.pruneIdempotencyKeys,
        pruneTombstones: listings.pruneTombstones
      })
    })
  )
}
