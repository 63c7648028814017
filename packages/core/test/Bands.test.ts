import { Bands } from "@dropshelf/core"
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"

/*
 * Metrics are published as bands, never as exact figures (spec, general convention 5):
 * a band is `low-high` with low < high, or `low+`, and the exact value lies inside it.
 */

interface ParsedBand {
  readonly low: number
  readonly high: number | null
}

const parseBand = (band: string): ParsedBand => {
  const closed = /^(\d+)-(\d+)$/.exec(band)
  if (closed !== null) return { low: Number(closed[1]), high: Number(closed[2]) }
  const open = /^(\d+)\+$/.exec(band)
  if (open !== null) return { low: Number(open[1]), high: null }
  throw new Error(`${JSON.stringify(band)} is not a published band shape`)
}

const contains = (band: ParsedBand, value: number): boolean =>
  value >= band.low && (band.high === null || value <= band.high)

const scales = [
  { metric: "backlinks", band: Bands.backlinksBand, labels: Bands.BACKLINK_BANDS, max: undefined },
  { metric: "referring_domains", band: Bands.referringDomainsBand, labels: Bands.REFERRING_DOMAIN_BANDS, max: undefined },
  { metric: "domain_authority", band: Bands.domainAuthorityBand, labels: Bands.DOMAIN_AUTHORITY_BANDS, max: 100 },
  { metric: "snapshots", band: Bands.snapshotsBand, labels: Bands.SNAPSHOT_BANDS, max: undefined }
] as const

describe.each(scales)("$metric bands", ({ band, labels, max }) => {
  const value = fc.integer({ min: 0, max: max ?? 10_000_000 })

  it("publish a range that never names one number and holds the exact value", () => {
    fc.assert(fc.property(value, (n) => {
      const parsed = parseBand(band(n))
      if (parsed.high !== null) assert.isBelow(parsed.low, parsed.high, band(n))
      assert.isTrue(contains(parsed, n), `${n} lies in ${band(n)}`)
    }))
  })

  it("only ever publish a label of the published list", () => {
    fc.assert(fc.property(value, (n) => {
      assert.include(labels, band(n))
    }))
  })

  it("are reached exactly: every listed label is the band of its own bounds, and the next value leaves it", () => {
    for (const label of labels) {
      const { high, low } = parseBand(label)
      assert.strictEqual(band(low), label)
      if (high !== null) {
        assert.strictEqual(band(high), label)
        if (max === undefined || high < max) assert.notStrictEqual(band(high + 1), label)
      }
    }
  })

  it("list labels that are contiguous from 0 and well formed", () => {
    const parsed = labels.map(parseBand)
    assert.strictEqual(parsed[0]!.low, 0)
    for (let i = 1; i < parsed.length; i++) assert.strictEqual(parsed[i]!.low, parsed[i - 1]!.high! + 1)
    const last = parsed[parsed.length - 1]!
    assert.strictEqual(last.high, max ?? null)
    for (const { high, low } of parsed) if (high !== null) assert.isBelow(low, high)
  })
})

describe("domain authority", () => {
  it("tops out at 90-100", () => {
    assert.strictEqual(Bands.domainAuthorityBand(100), "90-100")
    assert.strictEqual(Bands.domainAuthorityBand(90), "90-100")
    assert.strictEqual(Bands.domainAuthorityBand(89), "80-89")
  })
})

describe("directoryScoreRange", () => {
  it("holds every score 0..100 in a range inside 0..100 with low < high", () => {
    for (let score = 0; score <= 100; score++) {
      const { high, low } = Bands.directoryScoreRange(score)
      assert.isTrue(low <= score && score <= high, `${score} in ${low}-${high}`)
      assert.isBelow(low, high)
      assert.isAtLeast(low, 0)
      assert.isAtMost(high, 100)
    }
  })
})

describe("priceRangeOf", () => {
  it.each([
    [0, "under-100"],
    [9_999, "under-100"],
    [10_000, "100-249"],
    [24_999, "100-249"],
    [25_000, "250-999"],
    [99_999, "250-999"],
    [100_000, "1000-2499"],
    [249_999, "1000-2499"],
    [250_000, "2500-plus"],
    [1_000_000_000, "2500-plus"]
  ] as const)("puts %i cents in %s", (cents, expected) => {
    assert.strictEqual(Bands.priceRangeOf(cents), expected)
  })

  it("agrees with priceRangeBounds: lower bound inclusive, upper exclusive", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (cents) => {
      const { high, low } = Bands.priceRangeBounds[Bands.priceRangeOf(cents)]
      assert.isAtLeast(cents, low)
      if (high !== null) assert.isBelow(cents, high)
    }))
  })

  it("has bounds that tile 0..infinity in PRICE_RANGES order", () => {
    let expectedLow = 0
    for (const range of Bands.PRICE_RANGES) {
      const { high, low } = Bands.priceRangeBounds[range]
      assert.strictEqual(low, expectedLow, range)
      assert.strictEqual(Bands.priceRangeOf(low), range)
      if (high === null) {
        assert.strictEqual(range, "2500-plus")
      } else {
        assert.strictEqual(Bands.priceRangeOf(high - 1), range)
        expectedLow = high
      }
    }
  })

  it("puts the reference figure ($250) in 250-999", () => {
    assert.strictEqual(Bands.priceRangeOf(Bands.REFERENCE_VALUE_CENTS), "250-999")
  })
})

describe("referringDomainsBandBounds", () => {
  it("is the inverse of referringDomainsBand", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 10_000_000 }), (count) => {
      const band = Bands.referringDomainsBand(count)
      const { high, low } = Bands.referringDomainsBandBounds(band)
      assert.isAtLeast(count, low)
      if (high !== null) assert.isAtMost(count, high)
    }))
  })

  it("gives the bounds each published band covers", () => {
    for (const band of Bands.REFERRING_DOMAIN_BANDS) {
      const { high, low } = Bands.referringDomainsBandBounds(band)
      assert.deepStrictEqual({ low, high }, parseBand(band))
      assert.strictEqual(Bands.referringDomainsBand(low), band)
      if (high !== null) {
        assert.strictEqual(Bands.referringDomainsBand(high), band)
        assert.notStrictEqual(Bands.referringDomainsBand(high + 1), band)
      }
    }
  })
})
