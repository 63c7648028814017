import { Directory, type Ids, Listing, type ListingStore, type ListQuery, Operators, type Plan } from "@dropshelf/core"
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

/** A page as the caller reads it, as its published view (`Listing.toPageView`). */
export const listView = (caller: Directory.Caller, query: ListQuery.ListQuery) =>
  Effect.map(Directory.Directory.use((directory) => directory.list(caller, query)), Listing.toPageView)

/** A listing as the caller reads it, as its published view (`Listing.toListingView`). */
export const getView = (caller: Directory.Caller, id: string) =>
  Effect.map(Directory.Directory.use((directory) => directory.get(caller, id)), (row) => Listing.toListingView(row.listing, row.reader))
