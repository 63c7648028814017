import { Time } from "@dropshelf/core"
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"

describe("Time.toIso", () => {
  it("writes exactly what Date#toISOString writes, for any instant", () => {
    const anywhere = fc.integer({ min: -8.64e15, max: 8.64e15 })
    const nearYearFour = fc.integer({ min: -62_167_219_200_000 - 1_000_000, max: -62_167_219_200_000 + 1_000_000 })
    const nearYear9999 = fc.integer({ min: 253_402_300_799_999 - 1_000_000, max: 253_402_300_799_999 + 1_000_000 })
    const thisCentury = fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) })
    fc.assert(fc.property(fc.oneof(anywhere, nearYearFour, nearYear9999, thisCentury), (instant) => {
      assert.strictEqual(Time.toIso(instant), new Date(instant).toISOString())
    }), { numRuns: 20_000 })
  })

  it.each([0, -1, 951_782_400_000, 1_709_164_800_000, 4_107_542_400_000, Date.UTC(2026, 11, 31, 23, 59, 59, 999)])(
    "writes %d as Date does (epoch, before it, leap days, a century that is not leap)",
    (instant) => {
      assert.strictEqual(Time.toIso(instant), new Date(instant).toISOString())
    }
  )
})
