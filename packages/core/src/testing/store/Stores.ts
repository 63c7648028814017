import type { Effect } from "effect"
import { Plans } from "../../domain/Plan.ts"
import type { AccountStore } from "../../ports/AccountStore.ts"
import type { HoldStore } from "../../ports/HoldStore.ts"
import type { IdempotencyStore } from "../../ports/IdempotencyStore.ts"
import type { KeyStore } from "../../ports/KeyStore.ts"
import type { ListingStore } from "../../ports/ListingStore.ts"
import type { RevealStore } from "../../ports/RevealStore.ts"

/** The ports the store contract runs against, and what its modules share. */
export type Stores = ListingStore | RevealStore | HoldStore | AccountStore | KeyStore | IdempotencyStore

/** Runs a test's effect against a fresh build of the adapter's layer. */
export type Run = <A, E>(effect: Effect.Effect<A, E, Stores>) => Effect.Effect<A, E>

export const T0 = Date.UTC(2026, 5, 1, 12)
export const pro = Plans.pro
