import {
  AccountArea,
  AccountStore,
  AuthorizationStore,
  AvailabilityCheck,
  Cursor,
  Directory,
  EmailSignIn,
  HoldStore,
  IdempotencyStore,
  type Listing,
  ListingStore,
  ListQuery,
  Operators,
  PasskeyStore,
  RateLimiter,
  RevealStore,
  KeyStore,
  SecurityLogStore,
  SessionStore,
  Sessions,
  WatchStore
} from "@dropshelf/core"
import { Context, Effect, Layer } from "effect"
import { Digest, Mac, SecureRandom } from "effect/crypto"
import { makeAccountsAndKeys } from "./AccountMemory.ts"
import { makeHoldStore } from "./HoldMemory.ts"
import { makeIdempotencyStore } from "./IdempotencyMemory.ts"
import { makeListingStore } from "./ListingMemory.ts"
import { makeRevealStore } from "./RevealMemory.ts"
import * as AuthorizationMemory from "./AuthorizationMemory.ts"
import * as PasskeyMemory from "./PasskeyMemory.ts"
import * as SecurityLogMemory from "./SecurityLogMemory.ts"
import * as SessionMemory from "./SessionMemory.ts"
import * as WatchMemory from "./WatchMemory.ts"

/*
 * The in-memory adapter. Each operation runs as one synchronous step, so on one JS thread
 * every check-then-write is atomic, the property the SQL adapter gets from transactions.
 * The listing store reads the hold and reveal stores' state directly, so a page answers for
 * its reader exactly as those stores would at the same step.
 */

type ListingRecord = Listing.ListingRecord

export { SYNC_LAG_MS } from "./ListingMemory.ts"

/** The store ports, in memory, fresh for each build of the layer. */
export const layerStores = Layer.effectContext(
  Effect.gen(function*() {
    const { accountStore, keyStore, planOf } = yield* makeAccountsAndKeys
    const reveals = yield* makeRevealStore
    const holds = yield* makeHoldStore
    const idempotency = yield* makeIdempotencyStore
    const findListing = (id: string) => listingRows.get(id)
    const watches = WatchMemory.make({ planOf, findListing, allListings: () => listingRows.values() })
    const listingRows = new Map<string, ListingRecord>()
    const listings = yield* makeListingStore(
      { runningOn: holds.runningOn, revealedAmong: reveals.revealedAmong, written: watches.written },
      listingRows
    )
    return Context.make(ListingStore.ListingStore, listings).pipe(
      Context.add(WatchStore.WatchStore, watches.store),
      Context.add(RevealStore.RevealStore, reveals.store),
      Context.add(HoldStore.HoldStore, holds.store),
      Context.add(IdempotencyStore.IdempotencyStore, idempotency),
      Context.add(AccountStore.AccountStore, accountStore),
      Context.add(KeyStore.KeyStore, keyStore),
      Context.add(SessionStore.SessionStore, SessionMemory.make((id) => planOf(id) !== undefined)),
      Context.add(SecurityLogStore.SecurityLogStore, SecurityLogMemory.make()),
      Context.add(PasskeyStore.PasskeyStore, PasskeyMemory.make()),
      Context.add(AuthorizationStore.AuthorizationStore, AuthorizationMemory.make())
    )
  })
)

/** Every port in memory: the stores, an in-process rate limiter and the stamp-only availability check. */
export const layer = Layer.mergeAll(
  layerStores,
  RateLimiter.layerInProcess,
  AvailabilityCheck.AvailabilityCheck.layerStampOnly
)

/** Web Crypto for digests, MACs and secure randomness: available on Node, Deno, Bun and browsers. */
export const layerCrypto = Layer.mergeAll(Digest.layerWebCrypto, Mac.layerWebCrypto).pipe(
  Layer.provideMerge(SecureRandom.layerWebCrypto)
)

/** A cursor secret that lives as long as the layer: fine for one process. */
export const layerEphemeralCursorSecret = Layer.effect(
  Cursor.CursorSecret,
  Effect.gen(function*() {
    const random = yield* SecureRandom.SecureRandom
    return yield* random.randomBytes(32)
  })
)

/**
 * The whole directory in memory — `Directory`, `Operators`, `Sessions` and `AccountArea` with every port they need — for
 * tests and for services that embed the core.
 */
export const layerDirectory = Layer.mergeAll(
  Directory.Directory.layer,
  AccountArea.AccountArea.layer.pipe(Layer.provideMerge(Operators.Operators.layer)),
  EmailSignIn.EmailSignIn.layer.pipe(Layer.provideMerge(Sessions.Sessions.layer))
).pipe(
  Layer.provide(Cursor.CursorCodec.layer.pipe(Layer.provide(layerEphemeralCursorSecret))),
  Layer.provideMerge(layer),
  Layer.provideMerge(layerCrypto)
)

/** A tiny end-to-end run, used by the plain-node smoke check. */
export const smoke = Effect.gen(function*() {
  const operators = yield* Operators.Operators
  const directory = yield* Directory.Directory
  const account = yield* operators.createAccount("smoke", "pro")
  const { secret } = yield* operators.createKey(account.id, "smoke")
  yield* operators.upsertListings([])
  const caller = yield* directory.authenticate(secret)
  return yield* directory.list(caller, yield* ListQuery.decode({}))
}).pipe(Effect.provide(layerDirectory))
