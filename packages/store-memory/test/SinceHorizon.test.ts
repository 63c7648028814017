import { assert, describe, it } from "@effect/vitest"
import { Directory, Errors, ListingStore, ListQuery, Operators } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { callerOn, DAY, getView, HOUR, id, listing, listView, load, T0 } from "./support.ts"

const rate = { allowed: true, limit: 120, remaining: 119, resetAt: T0 + 60_000 }

/** The directory in memory with the clock at T0 before any layer starts (the pruning fiber counts from it). */
const run = <A, E>(
  effect: Effect.Effect<A, E, Directory.Directory | Operators.Operators | ListingStore.ListingStore>,
  options: { readonly horizonDays?: number; readonly pruning?: boolean } = {}
) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(T0)
    const directory = StoreMemory.layerDirectory.pipe(
      Layer.provide(options.horizonDays === undefined ? Layer.empty : Layer.succeed(Directory.SinceHorizonDays, options.horizonDays))
    )
    const layer = options.pruning === true ? Directory.Directory.layerPruning().pipe(Layer.provideMerge(directory)) : directory
    return yield* Effect.provide(effect, layer)
  })

const iso = (instant: number) => new Date(instant).toISOString()

describe("Directory: the since feed's horizon", () => {
  it.effect("a since exactly the horizon old is accepted; a millisecond older is refused, saying the oldest accepted", () =>
    run(Effect.gen(function*() {
      yield* load(listing("HRZN0001"))
      const { caller } = yield* callerOn("business")
      const at = yield* listView(caller, yield* ListQuery.decode({ since: iso(T0 - 30 * DAY) }))
      assert.deepStrictEqual(at.data.map((row) => row.id), ["HRZN0001"])
      const past = yield* Effect.flip(listView(caller, yield* ListQuery.decode({ since: iso(T0 - 30 * DAY - 1) })))
      assert.instanceOf(past, Errors.SinceTooOld)
      assert.deepStrictEqual({ ...past }, { _tag: "SinceTooOld", since: T0 - 30 * DAY - 1, oldestAccepted: T0 - 30 * DAY, horizonDays: 30 })
      // The horizon moves with the clock: what was accepted a moment ago is refused a millisecond later.
      yield* TestClock.adjust(1)
      assert.instanceOf(yield* Effect.flip(listView(caller, yield* ListQuery.decode({ since: iso(T0 - 30 * DAY) }))), Errors.SinceTooOld)
    })))

  it.effect("a run that started inside the horizon may follow its cursors for one more day", () =>
    run(Effect.gen(function*() {
      yield* load(listing("HRZN0001"), listing("HRZN0002"), listing("HRZN0003"))
      const { caller } = yield* callerOn("business")
      const since = iso(T0 - 30 * DAY)
      const first = yield* listView(caller, yield* ListQuery.decode({ since, limit: "1" }))
      assert.isNotNull(first.next_cursor)
      yield* TestClock.adjust(DAY)
      const second = yield* listView(caller, yield* ListQuery.decode({ since, limit: "1", cursor: first.next_cursor! }))
      assert.deepStrictEqual(second.data.map((row) => row.id), ["HRZN0002"])
      // A new run from the same since is past the horizon by now.
      assert.instanceOf(yield* Effect.flip(listView(caller, yield* ListQuery.decode({ since, limit: "1" }))), Errors.SinceTooOld)
      yield* TestClock.adjust(1)
      const late = yield* Effect.flip(listView(caller, yield* ListQuery.decode({ since, limit: "1", cursor: second.next_cursor! })))
      assert.instanceOf(late, Errors.SinceTooOld)
      assert.strictEqual((late as Errors.SinceTooOld).oldestAccepted, T0 + DAY + 1 - 31 * DAY)
    })))

  it.effect("a plan without the feed is told to upgrade, not that its since is too old", () =>
    run(Effect.gen(function*() {
      const { caller } = yield* callerOn("pro")
      const refused = yield* Effect.flip(listView(caller, yield* ListQuery.decode({ since: iso(T0 - 400 * DAY) })))
      assert.instanceOf(refused, Errors.UpgradeRequired)
    })))

  it.effect("the operator's horizon moves the boundary, and /me names it on the business plan only", () =>
    run(
      Effect.gen(function*() {
        const directory = yield* Directory.Directory
        const business = yield* callerOn("business")
        const pro = yield* callerOn("pro")
        assert.strictEqual((yield* directory.me(business.caller, rate)).since_horizon_days, 7)
        assert.isNull((yield* directory.me(pro.caller, rate)).since_horizon_days)
        yield* listView(business.caller, yield* ListQuery.decode({ since: iso(T0 - 7 * DAY) }))
        const refused = yield* Effect.flip(listView(business.caller, yield* ListQuery.decode({ since: iso(T0 - 7 * DAY - 1) })))
        assert.strictEqual((refused as Errors.SinceTooOld).horizonDays, 7)
      }),
      { horizonDays: 7 }
    ))

  it.effect("the server's pruning removes tombstones past the horizon, its grace and margin, hourly; other rows stay", () =>
    run(
      Effect.gen(function*() {
        const directory = yield* Directory.Directory
        const operators = yield* Operators.Operators
        const store = yield* ListingStore.ListingStore
        yield* load(listing("PRNE0001"), listing("PRNE0002"), listing("PRNE0003", { status: "draft" }))
        yield* operators.delist([id("PRNE0001")], "sold")
        yield* TestClock.adjust(HOUR)
        yield* operators.delist([id("PRNE0002")], "blocked")
        // Kept for 32 days: the 30-day horizon, a day's grace for runs, a day's margin.
        yield* TestClock.adjust(32 * DAY - HOUR)
        assert.isDefined(yield* store.find(id("PRNE0001")))
        yield* TestClock.adjust(HOUR)
        assert.strictEqual(yield* store.find(id("PRNE0001")), undefined)
        assert.strictEqual((yield* store.find(id("PRNE0002")))?.status, "blocked")
        yield* TestClock.adjust(HOUR)
        assert.strictEqual(yield* store.find(id("PRNE0002")), undefined)
        assert.strictEqual((yield* store.find(id("PRNE0003")))?.status, "draft")
        assert.strictEqual(yield* directory.pruneTombstones, 0)
      }),
      { pruning: true }
    ))

  it.effect("a listing imported again after its tombstone was pruned is new: the feed delivers it active, newly discovered", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      const operators = yield* Operators.Operators
      yield* load(listing("BACK0001"))
      yield* operators.delist([id("BACK0001")], "delisted")
      yield* TestClock.adjust(40 * DAY)
      assert.strictEqual(yield* directory.pruneTombstones, 1)
      const business = yield* callerOn("business")
      const pro = yield* callerOn("pro")
      const now = T0 + 40 * DAY
      yield* load(listing("BACK0001", { discoveredAt: now }))
      const page = yield* listView(business.caller, yield* ListQuery.decode({ since: iso(now - DAY) }))
      assert.deepStrictEqual(page.data.map((row) => [row.id, row.status]), [["BACK0001", "active"]])
      assert.strictEqual((page.data[0] as { discovered_at: string }).discovered_at, iso(now))
      // Newly discovered, it waits out the access delay again on plans that have one.
      assert.instanceOf(yield* Effect.flip(getView(pro.caller, "BACK0001")), Errors.ListingNotFound)
    })))
})
