import { Errors, Plan, RevealLedger, Time } from "@dropshelf/core"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"

/*
 * The reveal rules of the spec (POST /domains/{id}/reveal 1-6, Limits rule 3): a repeat is
 * free and returns the original entry whatever else holds; free cannot reveal `featured`;
 * another account's hold refuses only a first reveal; `open` listings and plans without a
 * ceiling cost nothing; the allowance is per calendar month in UTC.
 */

const anyPlan = fc.constantFrom(Plan.Plans.free, Plan.Plans.pro, Plan.Plans.business)
const anyTier = fc.constantFrom("featured" as const, "regular" as const, "open" as const)
const instant = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) })
const heldUntil = fc.option(instant, { nil: undefined })

const entry = fc.record({
  accountId: fc.constant("acct-me"),
  listingId: fc.constant("AbCd1234"),
  revealedAt: instant,
  charged: fc.boolean()
})

describe("planReveal", () => {
  it("answers a repeat with the original entry at no cost, whatever the plan, tier or hold", () => {
    fc.assert(fc.property(anyPlan, anyTier, entry, heldUntil, (plan, tier, existing, heldByOtherUntil) => {
      const result = RevealLedger.planReveal({ plan, tier, existing, heldByOtherUntil })
      assert.isTrue(Result.isSuccess(result))
      if (Result.isSuccess(result)) {
        assert.strictEqual(result.success._tag, "Repeat")
        if (result.success._tag === "Repeat") assert.strictEqual(result.success.entry, existing)
      }
    }))
  })

  it("re-opens a name revealed on pro after a downgrade to free, even a featured one held by another account", () => {
    const existing = { accountId: "acct-me", listingId: "AbCd1234", revealedAt: Date.UTC(2026, 0, 5), charged: true }
    const result = RevealLedger.planReveal({
      plan: Plan.Plans.free,
      tier: "featured",
      existing,
      heldByOtherUntil: Date.UTC(2026, 10, 30)
    })
    assert.deepStrictEqual(Result.getOrThrow(result), { _tag: "Repeat", entry: existing })
  })

  it("refuses a first reveal of a featured listing on free", () => {
    const result = RevealLedger.planReveal({ plan: Plan.Plans.free, tier: "featured", existing: undefined, heldByOtherUntil: undefined })
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) assert.instanceOf(result.failure, Errors.FeaturedRequiresPro)
  })

  it("refuses a first reveal while another account holds the listing, with the hold's end", () => {
    const allowed = fc.tuple(anyPlan, anyTier).filter(([plan, tier]) => tier !== "featured" || plan.revealFeatured)
    fc.assert(fc.property(allowed, instant, ([plan, tier], until) => {
      const result = RevealLedger.planReveal({ plan, tier, existing: undefined, heldByOtherUntil: until })
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.instanceOf(result.failure, Errors.HeldByOther)
        assert.strictEqual((result.failure as Errors.HeldByOther).expiresAt, until)
      }
    }))
  })

  it("refuses a first featured reveal on free held by another account", () => {
    const result = RevealLedger.planReveal({ plan: Plan.Plans.free, tier: "featured", existing: undefined, heldByOtherUntil: 1 })
    assert.isTrue(Result.isFailure(result))
  })

  it("plans a first reveal, charged exactly when the tier is not open and the plan has a ceiling", () => {
    const allowed = fc.tuple(anyPlan, anyTier).filter(([plan, tier]) => tier !== "featured" || plan.revealFeatured)
    fc.assert(fc.property(allowed, ([plan, tier]) => {
      const result = RevealLedger.planReveal({ plan, tier, existing: undefined, heldByOtherUntil: undefined })
      assert.deepStrictEqual(Result.getOrThrow(result), {
        _tag: "First",
        charged: tier !== "open" && plan.name !== "business"
      })
    }))
  })
})

describe("isCharged", () => {
  it.each([
    ["free", "featured", true],
    ["free", "regular", true],
    ["free", "open", false],
    ["pro", "featured", true],
    ["pro", "regular", true],
    ["pro", "open", false],
    ["business", "featured", false],
    ["business", "regular", false],
    ["business", "open", false]
  ] as const)("%s plan, %s tier: charged %s", (plan, tier, charged) => {
    assert.strictEqual(RevealLedger.isCharged(Plan.Plans[plan], tier), charged)
  })
})

describe("allowanceAt", () => {
  it("keys the allowance by calendar month in UTC", () => {
    assert.deepStrictEqual(RevealLedger.allowanceAt(Plan.Plans.free, Date.parse("2026-01-31T23:59:59.999Z")), {
      month: "2026-01",
      limit: 10
    })
    assert.deepStrictEqual(RevealLedger.allowanceAt(Plan.Plans.free, Date.parse("2026-02-01T00:00:00.000Z")), {
      month: "2026-02",
      limit: 10
    })
    assert.deepStrictEqual(RevealLedger.allowanceAt(Plan.Plans.pro, Date.parse("2026-12-31T23:30:00.000-01:00")), {
      month: "2027-01",
      limit: 500
    })
  })

  it("has no allowance on a plan without a ceiling", () => {
    fc.assert(fc.property(instant, (now) => {
      assert.isUndefined(RevealLedger.allowanceAt(Plan.Plans.business, now))
    }))
  })

  it("stays in one month from its first to its last millisecond", () => {
    fc.assert(fc.property(instant, (now) => {
      const next = Time.startOfNextMonth(now)
      const month = RevealLedger.allowanceAt(Plan.Plans.pro, now)!.month
      assert.strictEqual(RevealLedger.allowanceAt(Plan.Plans.pro, next - 1)!.month, month)
      assert.notStrictEqual(RevealLedger.allowanceAt(Plan.Plans.pro, next)!.month, month)
      assert.strictEqual(month, new Date(now).toISOString().slice(0, 7))
    }))
  })
})

describe("Time.startOfNextMonth", () => {
  it.each([
    ["2026-12-15T12:00:00.000Z", "2027-01-01T00:00:00.000Z"],
    ["2026-12-31T23:59:59.999Z", "2027-01-01T00:00:00.000Z"],
    ["2026-01-31T23:59:59.999Z", "2026-02-01T00:00:00.000Z"],
    ["2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"],
    ["2028-02-29T10:00:00.000Z", "2028-03-01T00:00:00.000Z"]
  ])("after %s is %s", (now, expected) => {
    assert.strictEqual(Time.toIso(Time.startOfNextMonth(Date.parse(now))), expected)
  })

  it("is always later, at midnight UTC on the first of a month, and at most 31 days away", () => {
    fc.assert(fc.property(instant, (now) => {
      const next = Time.startOfNextMonth(now)
      assert.isAbove(next, now)
      assert.isAtMost(next - now, 31 * Time.DAY)
      assert.match(Time.toIso(next), /^\d{4}-\d{2}-01T00:00:00\.000Z$/)
    }))
  })
})

describe("remainingReveals", () => {
  it("is the plan's limit minus what was used, never below zero", () => {
    fc.assert(fc.property(fc.constantFrom(Plan.Plans.free, Plan.Plans.pro), fc.nat({ max: 10_000 }), (plan, used) => {
      const remaining = RevealLedger.remainingReveals(plan, used)
      assert.strictEqual(remaining, Math.max(0, plan.revealsPerMonth! - used))
      assert.isAtLeast(remaining!, 0)
    }))
  })

  it("reads 0 after a downgrade leaves more used than the new limit", () => {
    assert.strictEqual(RevealLedger.remainingReveals(Plan.Plans.free, 137), 0)
    assert.strictEqual(RevealLedger.remainingReveals(Plan.Plans.free, 3), 7)
  })

  it("is null on a plan without a ceiling", () => {
    fc.assert(fc.property(fc.nat(), (used) => {
      assert.isNull(RevealLedger.remainingReveals(Plan.Plans.business, used))
    }))
  })
})
