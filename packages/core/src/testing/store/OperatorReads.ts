import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { DAY, HOUR } from "../../domain/Time.ts"
import { HoldStore } from "../../ports/HoldStore.ts"
import { RevealStore } from "../../ports/RevealStore.ts"
import { pro, type Run, T0 } from "./Stores.ts"

export const suite = (name: string, run: Run) => {
  describe(`${name}: operator reads of holds and reveals`, () => {
    it.live("holds of one account or all, running or any, in order of holding, a page at a time", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore
        const acquire = (accountId: string, listingId: string, now: number) =>
          holds.acquire({ accountId, listingId, plan: pro, now }).pipe(Effect.map((result) => result.hold))
        const first = yield* acquire("hl-acct", "OPHOLD01", T0)
        const second = yield* acquire("hl-acct", "OPHOLD02", T0 + 1)
        const other = yield* acquire("hl-other", "OPHOLD03", T0 + 2)
        const ended = yield* holds.end({ accountId: "hl-acct", holdId: first.id, now: T0 + HOUR, outcome: "released" })
        const mine = yield* holds.list({ accountId: "hl-acct", runningAt: undefined }, { after: undefined, limit: 10 })
        assert.deepStrictEqual(mine, [ended, second])
        assert.deepStrictEqual(yield* holds.list({ accountId: "hl-acct", runningAt: T0 + 2 * HOUR }, { after: undefined, limit: 10 }), [second])
        assert.deepStrictEqual(yield* holds.list({ accountId: "hl-acct", runningAt: T0 + 100 * DAY }, { after: undefined, limit: 10 }), [])
        assert.deepStrictEqual(yield* holds.list({ accountId: "hl-acct", runningAt: undefined }, { after: first.id, limit: 10 }), [second])
        const everyone = yield* holds.list({ accountId: undefined, runningAt: T0 + 2 * HOUR }, { after: undefined, limit: 1000 })
        assert.deepStrictEqual(everyone.filter((hold) => hold.listingId.startsWith("OPHOLD")), [second, other])
        const paged = yield* holds.list({ accountId: undefined, runningAt: undefined }, { after: second.id, limit: 1 })
        assert.deepStrictEqual(paged, [other])
      })))

    it.live("an account's reveals in a month, in order of revealing, a page at a time", () =>
      run(Effect.gen(function*() {
        const ledger = yield* RevealStore
        const reveal = (listingId: string, at: number) =>
          ledger.record({ accountId: "rv-acct", listingId, at, charge: undefined })
        yield* reveal("OPREVL02", T0)
        yield* reveal("OPREVL01", T0 + 1)
        yield* reveal("OPREVL03", T0 + 40 * DAY)
        yield* ledger.record({ accountId: "rv-other", listingId: "OPREVL09", at: T0, charge: undefined })
        const june = { from: Date.UTC(2026, 5, 1), to: Date.UTC(2026, 6, 1) }
        const inJune = yield* ledger.forAccount("rv-acct", june, { after: undefined, limit: 10 })
        assert.deepStrictEqual(inJune.map((entry) => entry.listingId), ["OPREVL02", "OPREVL01"])
        assert.deepStrictEqual(inJune[0], { accountId: "rv-acct", listingId: "OPREVL02", revealedAt: T0, charged: false })
        const all = yield* ledger.forAccount("rv-acct", { from: undefined, to: undefined }, { after: "OPREVL02", limit: 1 })
        assert.deepStrictEqual(all.map((entry) => entry.listingId), ["OPREVL01"])
        const rest = yield* ledger.forAccount("rv-acct", { from: undefined, to: undefined }, { after: "OPREVL01", limit: 10 })
        assert.deepStrictEqual(rest.map((entry) => entry.listingId), ["OPREVL03"])
        assert.deepStrictEqual(yield* ledger.forAccount("rv-nobody", june, { after: undefined, limit: 10 }), [])
      })))
  })
}
