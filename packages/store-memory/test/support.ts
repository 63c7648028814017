import { Directory, type Ids, type ListingStore, Operators, type Plan } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { Effect } from "effect"

export const T0 = Date.UTC(2026, 5, 15, 12)
export const DAY = 86_400_000
export const HOUR = 3_600_000

/** A signed-in caller on a plan, made through the operator use cases like a real account. */
export const callerOn = Effect.fnUntraced(function*(plan: Plan.StoredPlan, name: string = plan) {
  const operators = yield* Operators.Operators
  const directory = yield* Directory.Directory
  const account = yield* operators.createAccount(name, plan)
  const { secret } = yield* operators.createKey(account.id, `${name}-key`)
  const caller = yield* directory.authenticate(secret)
  return { caller, secret, account }
})

export const listing = (id: string, overrides: Partial<ListingStore.ListingInput> = {}) =>
  Fixtures.listingInput(id, { discoveredAt: T0 - 30 * DAY, ...overrides })

export const load = Effect.fnUntraced(function*(...inputs: ReadonlyArray<ListingStore.ListingInput>) {
  const operators = yield* Operators.Operators
  return yield* operators.upsertListings(inputs)
})

export const id = (text: string) => text as Ids.ListingId
