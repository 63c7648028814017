import { Bands, ListingFilter, ListQuery } from "@dropshelf/core"
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { listingInput } from "../src/testing/fixtures.ts"

/*
 * The directory-score filters (spec, the parameter table): `rsMin` and `rsMax` bound the
 * published range, `recommended` the exact score. Stores test one range of exact scores
 * (`directoryScoreBounds`); it must keep exactly the scores the filters keep.
 */

const T0 = Date.parse("2026-06-01T00:00:00.000Z")

/** The spec's words, independently of the filter code: the published range inside rsMin..rsMax, the floor on the score. */
const passes = (score: number, filters: ListQuery.ListFilters) => {
  const { high, low } = Bands.directoryScoreRange(score)
  return (filters.rsMin === undefined || low >= filters.rsMin) &&
    (filters.rsMax === undefined || high <= filters.rsMax) &&
    (filters.recommended !== true || score >= ListQuery.RECOMMENDED_SCORE_FLOOR)
}

const scoreFilters = fc.record({
  rsMin: fc.integer({ min: 0, max: 100 }),
  rsMax: fc.integer({ min: 0, max: 100 }),
  recommended: fc.constant(true as const)
}, { requiredKeys: [] })

describe("directory score filters", () => {
  it("directoryScoreBounds keeps exactly the scores the filters pass, as one range", () => {
    fc.assert(fc.property(scoreFilters, (filters) => {
      const bounds = ListingFilter.directoryScoreBounds(filters)
      if (filters.rsMin === undefined && filters.rsMax === undefined && filters.recommended === undefined) {
        return bounds === undefined
      }
      for (let score = 0; score <= 100; score++) {
        const inside = bounds !== null && bounds !== undefined && score >= bounds.low && score <= bounds.high
        if (inside !== passes(score, filters)) return false
      }
      return bounds !== undefined
    }))
  })

  it("matchesFilters keeps a scored listing by the same rule and never one without a score", () => {
    fc.assert(fc.property(scoreFilters, fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }), (filters, score) => {
      const listing = { ...listingInput("FFFFFFF1", { directoryScore: score, category: "tech", linkedBy: ["bbc.co.uk"] }), updatedAt: T0 }
      const narrowed = filters.rsMin !== undefined || filters.rsMax !== undefined || filters.recommended === true
      const expected = score === null ? !narrowed : passes(score, filters)
      return ListingFilter.matchesFilters(listing, filters, T0) === expected
    }))
  })

  it("filter sets no published range can pass admit no score", () => {
    assert.strictEqual(ListingFilter.directoryScoreBounds({ rsMax: 5 }), null)
    assert.strictEqual(ListingFilter.directoryScoreBounds({ rsMin: 81, rsMax: 83 }), null)
    assert.strictEqual(ListingFilter.directoryScoreBounds({ rsMin: 95 }), null)
    assert.strictEqual(ListingFilter.directoryScoreBounds({ recommended: true, rsMax: 14 }), null)
    assert.deepStrictEqual(ListingFilter.directoryScoreBounds({ rsMax: 9 }), { low: 0, high: 9 })
    assert.deepStrictEqual(ListingFilter.directoryScoreBounds({ rsMin: 35 }), { low: 40, high: 100 })
    assert.deepStrictEqual(ListingFilter.directoryScoreBounds({ rsMin: 90, rsMax: 99 }), null)
    assert.deepStrictEqual(ListingFilter.directoryScoreBounds({ recommended: true }), { low: ListQuery.RECOMMENDED_SCORE_FLOOR, high: 100 })
  })
})
