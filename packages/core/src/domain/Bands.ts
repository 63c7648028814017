/*
 * Published metrics are bands and ranges, never exact figures. A band is `low-high`
 * (both inclusive, low < high) or `low+` when open-ended, so no band names one number.
 */

interface BandScale {
  /** Lower bounds in increasing order; each band runs to the next bound minus one, the last is open. */
  readonly lows: ReadonlyArray<number>
  /** Upper bound of the last band when the metric is bounded (domain authority: 100). */
  readonly max?: number
}

const label = (scale: BandScale, index: number): string => {
  const low = scale.lows[index]!
  const next = scale.lows[index + 1]
  if (next !== undefined) return `${low}-${next - 1}`
  return scale.max !== undefined ? `${low}-${scale.max}` : `${low}+`
}

const bandOf = (scale: BandScale, value: number): string => {
  let index = 0
  while (index + 1 < scale.lows.length && value >= scale.lows[index + 1]!) index++
  return label(scale, index)
}

const labels = (scale: BandScale): ReadonlyArray<string> => scale.lows.map((_, i) => label(scale, i))

const backlinksScale: BandScale = {
  lows: [0, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000]
}
const referringDomainsScale: BandScale = { lows: [0, 5, 10, 25, 50, 100, 250, 500, 1000] }
const authorityScale: BandScale = { lows: [0, 10, 20, 30, 40, 50, 60, 70, 80, 90], max: 100 }
const snapshotsScale: BandScale = { lows: [0, 10, 50, 100, 500, 1000] }

export const backlinksBand = (count: number): string => bandOf(backlinksScale, count)
export const referringDomainsBand = (count: number): string => bandOf(referringDomainsScale, count)
export const domainAuthorityBand = (authority: number): string => bandOf(authorityScale, authority)
export const snapshotsBand = (count: number): string => bandOf(snapshotsScale, count)

/** Every value `referring_domains` can take: also what the `rd` filter accepts. */
export const REFERRING_DOMAIN_BANDS = labels(referringDomainsScale)
export const BACKLINK_BANDS = labels(backlinksScale)
export const DOMAIN_AUTHORITY_BANDS = labels(authorityScale)
export const SNAPSHOT_BANDS = labels(snapshotsScale)

/** Lowest and highest count a referring-domains band covers (`null` high when open-ended). */
export const referringDomainsBandBounds = (band: string): { readonly low: number; readonly high: number | null } => {
  const index = REFERRING_DOMAIN_BANDS.indexOf(band)
  const next = referringDomainsScale.lows[index + 1]
  return { low: referringDomainsScale.lows[index]!, high: next === undefined ? null : next - 1 }
}

export interface ScoreRange {
  readonly low: number
  readonly high: number
}

/** The published range around the exact directory score (0-100): deciles, the top one 90-100. */
export const directoryScoreRange = (score: number): ScoreRange => {
  const low = Math.min(90, Math.floor(score / 10) * 10)
  return { low, high: low === 90 ? 100 : low + 9 }
}

export const PRICE_RANGES = ["under-100", "100-249", "250-999", "1000-2499", "2500-plus"] as const
export type PriceRange = typeof PRICE_RANGES[number]

/** Bounds in cents, lower inclusive and upper exclusive (`null`: unbounded), per product.md. */
export const priceRangeBounds: { readonly [R in PriceRange]: { readonly low: number; readonly high: number | null } } = {
  "under-100": { low: 0, high: 10_000 },
  "100-249": { low: 10_000, high: 25_000 },
  "250-999": { low: 25_000, high: 100_000 },
  "1000-2499": { low: 100_000, high: 250_000 },
  "2500-plus": { low: 250_000, high: null }
}

export const priceRangeOf = (cents: number): PriceRange => {
  for (const range of PRICE_RANGES) {
    const { high } = priceRangeBounds[range]
    if (high === null || cents < high) return range
  }
  return "2500-plus"
}

/** Used when an import gives no valuation: the directory's reference figure, $250. */
export const REFERENCE_VALUE_CENTS = 25_000
