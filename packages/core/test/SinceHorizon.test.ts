import { SinceHorizon, Time } from "@dropshelf/core"
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"

const { DAY } = Time
const horizons = fc.integer({ min: SinceHorizon.MIN_HORIZON_DAYS, max: SinceHorizon.MAX_HORIZON_DAYS })
const instants = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) })
const offsets = fc.integer({ min: -4000 * DAY, max: 4000 * DAY })

describe("SinceHorizon", () => {
  it("accepts a since exactly the horizon old, refuses one a millisecond older; a cursor page gets one day more", () => {
    const now = Date.UTC(2026, 10, 24, 12)
    assert.isTrue(SinceHorizon.isAccepted(now - 30 * DAY, now, 30, false))
    assert.isFalse(SinceHorizon.isAccepted(now - 30 * DAY - 1, now, 30, false))
    assert.isTrue(SinceHorizon.isAccepted(now - 31 * DAY, now, 30, true))
    assert.isFalse(SinceHorizon.isAccepted(now - 31 * DAY - 1, now, 30, true))
    assert.strictEqual(SinceHorizon.pruneBefore(now, 30), now - 32 * DAY)
  })

  it("no accepted since ever misses a tombstone: pruning, now or a margin later, keeps every one at or after it", () => {
    fc.assert(fc.property(horizons, instants, offsets, fc.boolean(), fc.integer({ min: 0, max: SinceHorizon.PRUNE_MARGIN_MS }), (
      horizon,
      now,
      offset,
      followsCursor,
      pruneLater
    ) => {
      const since = now + offset
      if (!SinceHorizon.isAccepted(since, now, horizon, followsCursor)) return
      // A tombstone at `since` or later survives a pruning round run at any time up to a margin later.
      assert.isTrue(since >= SinceHorizon.pruneBefore(now + pruneLater, horizon))
    }))
  })

  it("a run whose first page was accepted is accepted on every cursor page for a day; what is accepted stays accepted earlier", () => {
    fc.assert(fc.property(horizons, instants, offsets, fc.integer({ min: 0, max: SinceHorizon.RUN_GRACE_MS }), (
      horizon,
      now,
      offset,
      later
    ) => {
      const since = now + offset
      const first = SinceHorizon.isAccepted(since, now, horizon, false)
      if (first) assert.isTrue(SinceHorizon.isAccepted(since, now + later, horizon, true))
      // Acceptance only ends with time: a since accepted now was accepted at any earlier instant.
      if (SinceHorizon.isAccepted(since, now + later, horizon, false)) assert.isTrue(first)
    }))
  })
})
