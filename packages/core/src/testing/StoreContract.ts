import { Effect, type Layer } from "effect"
import * as AccountsAndKeys from "./store/AccountsAndKeys.ts"
import * as Holds from "./store/Holds.ts"
import * as IdempotencyKeys from "./store/IdempotencyKeys.ts"
import * as Listings from "./store/Listings.ts"
import * as OperatorReads from "./store/OperatorReads.ts"
import * as Reveals from "./store/Reveals.ts"
import type { Stores } from "./store/Stores.ts"

export type { Stores } from "./store/Stores.ts"

/**
 * The contract every storage adapter honours, written once and run by each adapter's tests
 * with its own layer. The layer is built afresh for every test.
 */
export const suite = (name: string, layer: Layer.Layer<Stores>) => {
  const run = <A, E>(effect: Effect.Effect<A, E, Stores>) => Effect.provide(effect, layer)

  Listings.suite(name, run)
  Reveals.suite(name, run)
  Holds.suite(name, run)
  IdempotencyKeys.suite(name, run)
  AccountsAndKeys.suite(name, run)
  OperatorReads.suite(name, run)
}
