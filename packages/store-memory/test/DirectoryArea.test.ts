import { assert, describe, it } from "@effect/vitest"
import { Directory, DirectoryArea, Errors, type Operators, type RevealStore } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { callerOn, DAY, HOUR, listing, load, T0 } from "./support.ts"

const run = <A, E>(
  effect: Effect.Effect<A, E, Directory.Directory | DirectoryArea.DirectoryArea | Operators.Operators | RevealStore.RevealStore>
) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(T0)
    return yield* effect
  }).pipe(Effect.provide(DirectoryArea.DirectoryArea.layer.pipe(Layer.provideMerge(StoreMemory.layerDirectory))))

const outlook = (caller: Directory.Caller, id: string) =>
  Effect.map(DirectoryArea.DirectoryArea.use((area) => area.listing(caller, id)), (read) => read.reveal)

describe("DirectoryArea: what a reveal would do, told before it is done", () => {
  it.effect("charged on a plan with a ceiling, saying how many remain; a repeat after it; free on open or without a ceiling", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      yield* load(listing("CHARGED1"), listing("OPENROW1", { tier: "open" }), listing("CHARGED2"))
      const { caller: pro } = yield* callerOn("pro")
      const resetsAt = Date.UTC(2026, 6, 1)
      assert.deepStrictEqual(yield* outlook(pro, "CHARGED1"), { _tag: "Charged", remaining: 500, limit: 500, resetsAt })
      // Reading the outlook spends nothing.
      assert.deepStrictEqual(yield* outlook(pro, "CHARGED1"), { _tag: "Charged", remaining: 500, limit: 500, resetsAt })
      yield* directory.reveal(pro, "CHARGED1")
      assert.deepStrictEqual(yield* outlook(pro, "CHARGED1"), { _tag: "Repeat", revealedAt: T0 })
      assert.deepStrictEqual(yield* outlook(pro, "CHARGED2"), { _tag: "Charged", remaining: 499, limit: 500, resetsAt })
      assert.deepStrictEqual(yield* outlook(pro, "OPENROW1"), { _tag: "Free" })
      const { caller: business } = yield* callerOn("business")
      assert.deepStrictEqual(yield* outlook(business, "CHARGED1"), { _tag: "Free" })
    })))

  it.effect("the ledger's refusals: a featured listing on free, another account's hold; an unreadable listing is not found", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      yield* load(
        listing("FEATURE1", { tier: "featured" }),
        listing("HELDROW1"),
        listing("NEWROW01", { discoveredAt: T0 - 2 * DAY })
      )
      const { caller: free } = yield* callerOn("free")
      assert.deepStrictEqual(yield* outlook(free, "FEATURE1"), { _tag: "Refused", error: new Errors.FeaturedRequiresPro() })
      const { caller: holder } = yield* callerOn("pro", "holder")
      yield* directory.reveal(holder, "HELDROW1")
      yield* directory.hold(holder, "HELDROW1")
      const { caller: other } = yield* callerOn("pro", "other")
      assert.deepStrictEqual(yield* outlook(other, "HELDROW1"), {
        _tag: "Refused",
        error: new Errors.HeldByOther({ expiresAt: T0 + 48 * HOUR })
      })
      // Inside the free plan's access delay: as `Directory.get`, not found.
      const hidden = yield* Effect.flip(DirectoryArea.DirectoryArea.use((area) => area.listing(free, "NEWROW01")))
      assert.deepStrictEqual(hidden, new Errors.ListingNotFound({ listingId: "NEWROW01" }))
    })))

  it.effect("a spent allowance reads as no reveal remaining", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      const ids = Array.from({ length: 11 }, (_, index) => `SPENT${String(index).padStart(3, "0")}`)
      yield* load(...ids.map((id) => listing(id)))
      const { caller: free } = yield* callerOn("free")
      for (const id of ids.slice(0, 10)) yield* directory.reveal(free, id)
      assert.deepStrictEqual(yield* outlook(free, ids[10]!), { _tag: "Charged", remaining: 0, limit: 10, resetsAt: Date.UTC(2026, 6, 1) })
    })))
})
