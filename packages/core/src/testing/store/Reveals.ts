import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Allowance } from "../../domain/RevealLedger.ts"
import { DAY, HOUR } from "../../domain/Time.ts"
import { RevealStore } from "../../ports/RevealStore.ts"
import { type Run, T0 } from "./Stores.ts"

export const suite = (name: string, run: Run) => {
  describe(`${name}: reveal ledger`, () => {
    const allowance: Allowance = { month: "2026-06", limit: 2 }

    it.live("a first reveal is written once; a repeat returns the original and costs nothing", () =>
      run(Effect.gen(function*() {
        const ledger = yield* RevealStore
        const first = yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL1", at: T0, charge: allowance })
        assert.strictEqual(first._tag, "Recorded")
        const repeat = yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL1", at: T0 + HOUR, charge: allowance })
        assert.deepStrictEqual(repeat, {
          _tag: "Recorded",
          fresh: false,
          entry: { accountId: "a1", listingId: "LLLLLLL1", revealedAt: T0, charged: true }
        })
        assert.strictEqual(yield* ledger.usedIn("a1", "2026-06"), 1)
        assert.strictEqual(yield* ledger.usedIn("a1", "2026-07"), 0)
        assert.strictEqual(yield* ledger.usedIn("a2", "2026-06"), 0)
      })))

    it.live("a spent allowance writes nothing; free reveals never touch it", () =>
      run(Effect.gen(function*() {
        const ledger = yield* RevealStore
        yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL1", at: T0, charge: allowance })
        yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL2", at: T0, charge: allowance })
        const third = yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL3", at: T0, charge: allowance })
        assert.deepStrictEqual(third, { _tag: "AllowanceSpent" })
        assert.strictEqual(yield* ledger.find("a1", "LLLLLLL3"), undefined)
        const free = yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL3", at: T0, charge: undefined })
        assert.isTrue(free._tag === "Recorded" && free.fresh && !free.entry.charged)
        assert.strictEqual(yield* ledger.usedIn("a1", "2026-06"), 2)
        const nextMonth = yield* ledger.record({
          accountId: "a1",
          listingId: "LLLLLLL4",
          at: T0 + 31 * DAY,
          charge: { month: "2026-07", limit: 2 }
        })
        assert.strictEqual(nextMonth._tag, "Recorded")
        assert.deepStrictEqual(
          [...(yield* ledger.revealedAmong("a1", ["LLLLLLL1", "LLLLLLL3", "LLLLLLL9"]))].sort(),
          ["LLLLLLL1", "LLLLLLL3"]
        )
      })))

    it.live("an allowance of nothing charges nothing and writes nothing, though a repeat is still answered", () =>
      run(Effect.gen(function*() {
        const ledger = yield* RevealStore
        const none = { month: "2026-06", limit: 0 }
        assert.deepStrictEqual(yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL1", at: T0, charge: none }), { _tag: "AllowanceSpent" })
        assert.strictEqual(yield* ledger.find("a1", "LLLLLLL1"), undefined)
        assert.strictEqual(yield* ledger.usedIn("a1", "2026-06"), 0)
        yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL2", at: T0, charge: undefined })
        const repeat = yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL2", at: T0 + HOUR, charge: none })
        assert.isTrue(repeat._tag === "Recorded" && !repeat.fresh && repeat.entry.revealedAt === T0)
        assert.strictEqual(yield* ledger.usedIn("a1", "2026-06"), 0)
      })))
  })
}
