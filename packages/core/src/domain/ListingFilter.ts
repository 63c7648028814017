import { directoryScoreRange, priceRangeBounds, referringDomainsBandBounds } from "./Bands.ts"
import { type ListingRecord, publishedValueCents } from "./Listing.ts"
import { type ListFilters, RECOMMENDED_SCORE_FLOOR } from "./ListQuery.ts"
import { tldOf } from "./Masking.ts"
import { DAY, type Instant } from "./Time.ts"

/** The text `q` searches: mask hint, tags, category and blurb, never the real name. */
export const searchText = (listing: Pick<ListingRecord, "maskHint" | "tags" | "category" | "blurb">): string =>
  [listing.maskHint ?? "", ...listing.tags, listing.category ?? "", listing.blurb ?? ""].join(" ").toLowerCase()

/** `q` matches when every whitespace-separated term occurs in the searched text, case-insensitively. */
export const searchTerms = (q: string): ReadonlyArray<string> =>
  q.toLowerCase().split(/\s+/).filter((term) => term.length > 0)

/** What the filters derive from a listing, computed once by a caller that checks one listing against many filters (watches). */
export interface Derived {
  readonly searchText: string
  readonly tld: string
}

export const derive = (listing: ListingRecord): Derived => ({ searchText: searchText(listing), tld: tldOf(listing.domain) })

/** Whether `rsMin`, `rsMax` or `recommended` narrow the directory score: rows without one are then excluded. */
const boundsScore = (f: ListFilters) => f.rsMin !== undefined || f.rsMax !== undefined || f.recommended === true

/** Whether an exact directory score passes `rsMin`, `rsMax` (on its published range) and `recommended`'s floor. */
const scoreAdmitted = (score: number, f: ListFilters): boolean => {
  if (f.recommended === true && score < RECOMMENDED_SCORE_FLOOR) return false
  const range = directoryScoreRange(score)
  return (f.rsMin === undefined || range.low >= f.rsMin) && (f.rsMax === undefined || range.high <= f.rsMax)
}

/** Every exact directory score there is: whole numbers 0-100. */
const SCORES = Array.from({ length: 101 }, (_, score) => score)

/**
 * The exact directory scores the filters admit, as one closed range (each condition is a bound,
 * so they form one): `undefined` when no filter narrows the score, `null` when the filters admit
 * none (`rsMax=5`: no published range ends that low). A store can test the score against two
 * numbers, and answer a filter set that admits no score without reading a row.
 */
export const directoryScoreBounds = (f: ListFilters): { readonly low: number; readonly high: number } | null | undefined => {
  if (!boundsScore(f)) return undefined
  const admitted = SCORES.filter((score) => scoreAdmitted(score, f))
  return admitted.length === 0 ? null : { low: admitted[0]!, high: admitted[admitted.length - 1]! }
}

/**
 * The reference semantics of every `GET /domains` filter, which each store must reproduce.
 * `min`-style filters exclude rows whose metric is null rather than ranking them low.
 */
export const matchesFilters = (listing: ListingRecord, filters: ListFilters, now: Instant, derived?: Derived): boolean => {
  const f = filters
  if (f.ageMin !== undefined && (listing.ageYears === null || listing.ageYears < f.ageMin)) return false
  if (f.categories !== undefined && (listing.category === null || !f.categories.includes(listing.category))) return false
  if (f.checkedDays !== undefined) {
    if (listing.availabilityCheckedAt === null || listing.availabilityCheckedAt < now - f.checkedDays * DAY) return false
  }
  if (f.citabilityMin !== undefined) {
    if (listing.agentCitability === null || listing.agentCitability.score < f.citabilityMin) return false
  }
  if (f.featured !== undefined && (listing.featuredRank !== null) !== f.featured) return false
  if (f.priceRange !== undefined) {
    const { high, low } = priceRangeBounds[f.priceRange]
    const cents = publishedValueCents(listing)
    if (cents < low || (high !== null && cents >= high)) return false
  }
  if (f.q !== undefined) {
    const text = derived?.searchText ?? searchText(listing)
    if (!searchTerms(f.q).every((term) => text.includes(term))) return false
  }
  if (f.referringDomainBands !== undefined) {
    const count = listing.referringDomains
    if (count === null) return false
    const inBand = f.referringDomainBands.some((band) => {
      const { high, low } = referringDomainsBandBounds(band)
      return count >= low && (high === null || count <= high)
    })
    if (!inBand) return false
  }
  if (f.recommended === true && (listing.category === null || listing.linkedBy.length === 0)) return false
  if (boundsScore(f) && (listing.directoryScore === null || !scoreAdmitted(listing.directoryScore, f))) return false
  if (f.sources !== undefined && (listing.source === null || !f.sources.includes(listing.source))) return false
  if (f.spam !== undefined && listing.spam !== f.spam) return false
  if (f.openTierOnly === true && listing.tier !== "open") return false
  if (f.tld !== undefined && (derived?.tld ?? tldOf(listing.domain)) !== f.tld) return false
  return true
}
