/**
 * Embedding the dropshelf core in another service, with the in-memory adapter.
 * Run it from the repository root: `npx node docs/examples/embedding.ts` (`npm test` runs it too).
 */
import { Directory, Listing, ListingJson, ListQuery, Operators } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { StoreMemory } from "@dropshelf/store-memory"
import { Effect } from "effect"

const program = Effect.gen(function*() {
  const operators = yield* Operators.Operators
  const directory = yield* Directory.Directory

  // An operator loads listings and opens an account with a key.
  yield* operators.upsertListings([
    Fixtures.listingInput("Xy12Ab34", { domain: "bestcoffeeshop.com", discoveredAt: Date.now() - 30 * 86_400_000 })
  ])
  const account = yield* operators.createAccount("Acme", "pro")
  const { secret } = yield* operators.createKey(account.id, "acme-backend")

  // A caller is whoever holds a key; the plan is resolved on every call.
  const caller = yield* directory.authenticate(secret)
  // A read answers records with what this caller is told of each; views and JSON are made from them.
  const page = yield* directory.list(caller, yield* ListQuery.decode({ limit: "10" }))
  console.log("masked:", Listing.toPageView(page).data.length, "listing(s), names withheld")
  const listing = yield* directory.get(caller, "Xy12Ab34")
  console.log("as REST sends it:", ListingJson.rowJson(listing))

  const revealed = yield* directory.reveal(caller, "Xy12Ab34")
  console.log("revealed:", revealed.domain, "at", revealed.revealed_at)

  const held = yield* directory.hold(caller, "Xy12Ab34")
  console.log("held until", held.hold.expires_at, `(${held.holds.active}/${held.holds.limit} holds)`)

  // Refusals are tagged values: branch on `_tag`, no HTTP involved.
  const refusal = yield* Effect.flip(directory.reveal(caller, "NoSuchId"))
  console.log("refused:", refusal._tag)
})

await Effect.runPromise(program.pipe(Effect.provide(StoreMemory.layerDirectory)))
