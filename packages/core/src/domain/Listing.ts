import { Schema } from "effect"
import * as Bands from "./Bands.ts"
import type { ListingId } from "./Ids.ts"
import { lengthBucketOf, splitName, tldOfParts } from "./Masking.ts"
import { type Instant, toIso } from "./Time.ts"

export const Tier = Schema.Literals(["featured", "regular", "open"])
export type Tier = typeof Tier.Type

export const Spam = Schema.Literals(["low", "moderate"])
export type Spam = typeof Spam.Type

/** Where a listing stands in the directory. Only `active` rows are read; sold, blocked and delisted rows are tombstones. */
export type ListingStatus = "active" | "draft" | "blocked" | "sold" | "delisted"
export const DELIST_REASONS = ["sold", "blocked", "delisted"] as const
export type DelistReason = typeof DELIST_REASONS[number]

export const HoldState = Schema.Literals(["none", "mine", "other"])
export type HoldState = typeof HoldState.Type

export interface AgentCitability {
  readonly score: number
  readonly sources: ReadonlyArray<unknown>
}

/**
 * A listing as the directory stores it: exact figures, never published as such. Every count,
 * score, rank and amount of cents is a whole number (imports are decoded as integers and the
 * SQL adapter stores integers).
 */
export interface ListingRecord {
  readonly id: ListingId
  readonly domain: string
  readonly tier: Tier
  readonly status: ListingStatus
  readonly discoveredAt: Instant
  /** Feed watermark and row version; stamped by the store on every change of the row. */
  readonly updatedAt: Instant
  /** `null`: unvalued, published as the reference figure. */
  readonly estimatedValueCents: number | null
  readonly category: string | null
  readonly ageYears: number | null
  readonly backlinks: number | null
  readonly referringDomains: number | null
  readonly domainAuthority: number | null
  readonly snapshots: number | null
  readonly directoryScore: number | null
  readonly spam: Spam | null
  readonly linkedBy: ReadonlyArray<string>
  readonly tags: ReadonlyArray<string>
  readonly blurb: string | null
  readonly source: string | null
  readonly agentCitability: AgentCitability | null
  readonly featuredRank: number | null
  readonly availabilityCheckedAt: Instant | null
  /** `null` on rows that predate the mask backfill. */
  readonly maskHint: string | null
  readonly wordCount: number
}

const Timestamp = Schema.String.annotate({
  description: "ISO 8601 instant in UTC with millisecond precision",
  examples: ["2026-11-22T09:30:00.000Z"]
})
const Band = Schema.String.annotate({ description: "A published band: `low-high` or `low+`, never an exact figure" })

/** A whole number from zero: a count, cents, years. The published document states the bound. */
export const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
/** A figure on the directory's 0-100 scale. */
export const Percent = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100 }))

export const DirectoryScoreRange = Schema.Struct({ low: Percent, high: Percent }).annotate({
  description: "Published range holding the exact directory score; the score itself is never exposed"
})

export const AgentCitabilitySchema = Schema.Struct({
  score: Count,
  sources: Schema.Array(Schema.Unknown)
})

/** The optional metrics whose `null` is listed in `metrics_missing`. */
export const MissingMetric = Schema.Literals(["age_years", "agent_citability", "backlinks", "category", "domain_authority"])
export type MissingMetric = typeof MissingMetric.Type

/** The full row of `GET /domains/{id}` and of a page. */
export const ListingView = Schema.Struct({
  id: Schema.String,
  status: Schema.Literal("active"),
  tier: Tier,
  domain: Schema.NullOr(Schema.String),
  mask_hint: Schema.NullOr(Schema.String),
  name_disclosed: Schema.Boolean,
  hold_state: HoldState,
  hold_expires_at: Schema.optionalKey(Schema.NullOr(Timestamp)),
  estimated_value_cents: Count,
  discovered_at: Timestamp,
  updated_at: Timestamp,
  tld: Schema.String,
  length_bucket: Schema.optionalKey(Schema.String),
  featured: Schema.optionalKey(Schema.Boolean),
  category: Schema.optionalKey(Schema.NullOr(Schema.String)),
  age_years: Schema.optionalKey(Schema.NullOr(Count)),
  backlinks: Schema.optionalKey(Schema.NullOr(Band)),
  referring_domains: Schema.optionalKey(Schema.NullOr(Band)),
  domain_authority: Schema.optionalKey(Schema.NullOr(Band)),
  snapshots: Schema.optionalKey(Band),
  word_count: Schema.optionalKey(Count),
  spam: Schema.optionalKey(Spam),
  linked_by: Schema.optionalKey(Schema.Array(Schema.String)),
  agent_citability: Schema.optionalKey(Schema.NullOr(AgentCitabilitySchema)),
  directory_score: Schema.optionalKey(DirectoryScoreRange),
  availability_checked_at: Schema.optionalKey(Timestamp),
  metrics_missing: Schema.Array(MissingMetric)
}).annotate({ identifier: "Listing" })
export type ListingView = typeof ListingView.Type

export const RevealedListingView = Schema.Struct({
  ...ListingView.fields,
  revealed_at: Timestamp
}).annotate({ identifier: "RevealedListing" })
export type RevealedListingView = typeof RevealedListingView.Type

export const TombstoneView = Schema.Struct({
  id: Schema.String,
  status: Schema.Literal("delisted"),
  updated_at: Timestamp
}).annotate({ identifier: "Tombstone" })
export type TombstoneView = typeof TombstoneView.Type

export const PageView = Schema.Struct({
  data: Schema.Array(Schema.Union([ListingView, TombstoneView])),
  next_cursor: Schema.NullOr(Schema.String),
  has_more: Schema.Boolean,
  synced_at: Timestamp
}).annotate({ identifier: "ListingPage" })
export type PageView = typeof PageView.Type

export const metricsMissing = (listing: ListingRecord): Array<MissingMetric> => {
  const missing: Array<MissingMetric> = []
  if (listing.ageYears === null) missing.push("age_years")
  if (listing.agentCitability === null) missing.push("agent_citability")
  if (listing.backlinks === null) missing.push("backlinks")
  if (listing.category === null) missing.push("category")
  if (listing.domainAuthority === null) missing.push("domain_authority")
  return missing
}

export const publishedValueCents = (listing: ListingRecord): number =>
  listing.estimatedValueCents ?? Bands.REFERENCE_VALUE_CENTS

/** What a given reader sees of a listing's name and hold. */
export interface ReaderView {
  readonly disclosed: boolean
  readonly holdState: HoldState
  readonly holdExpiresAt: Instant | null
}

/** The members of a listing's published row that no reader changes. */
export type PublicView = Omit<ListingView, "domain" | "name_disclosed" | "hold_state" | "hold_expires_at">

/** Everything of the published row except what depends on the reader (`ListingJson` renders it once per record). */
export const toPublicView = (listing: ListingRecord): PublicView => {
  // One Public Suffix List look-up for both the tld and the length bucket.
  const name = splitName(listing.domain)
  const view: { -readonly [K in keyof PublicView]: PublicView[K] } = {
    id: listing.id,
    status: "active",
    tier: listing.tier,
    mask_hint: listing.maskHint,
    estimated_value_cents: publishedValueCents(listing),
    discovered_at: toIso(listing.discoveredAt),
    updated_at: toIso(listing.updatedAt),
    tld: tldOfParts(name, listing.domain),
    length_bucket: lengthBucketOf(name),
    featured: listing.featuredRank !== null,
    category: listing.category,
    age_years: listing.ageYears,
    backlinks: listing.backlinks === null ? null : Bands.backlinksBand(listing.backlinks),
    referring_domains: listing.referringDomains === null ? null : Bands.referringDomainsBand(listing.referringDomains),
    domain_authority: listing.domainAuthority === null ? null : Bands.domainAuthorityBand(listing.domainAuthority),
    word_count: listing.wordCount,
    linked_by: listing.linkedBy,
    agent_citability: listing.agentCitability,
    metrics_missing: metricsMissing(listing)
  }
  if (listing.snapshots !== null) view.snapshots = Bands.snapshotsBand(listing.snapshots)
  if (listing.spam !== null) view.spam = listing.spam
  if (listing.directoryScore !== null) view.directory_score = Bands.directoryScoreRange(listing.directoryScore)
  if (listing.availabilityCheckedAt !== null) view.availability_checked_at = toIso(listing.availabilityCheckedAt)
  return view
}

/** The published row: bands and ranges instead of figures, the name only when disclosed. */
export const toListingView = (listing: ListingRecord, reader: ReaderView): ListingView => ({
  ...toPublicView(listing),
  domain: reader.disclosed ? listing.domain : null,
  name_disclosed: reader.disclosed,
  hold_state: reader.holdState,
  hold_expires_at: reader.holdExpiresAt === null ? null : toIso(reader.holdExpiresAt)
})

export const toTombstoneView = (listing: ListingRecord): TombstoneView => ({
  id: listing.id,
  status: "delisted",
  updated_at: toIso(listing.updatedAt)
})

/** A listing as one reader will see it, before it is published: the record and what that reader is told about its name and hold. */
export interface ReaderListing {
  readonly _tag: "Listing"
  readonly listing: ListingRecord
  readonly reader: ReaderView
}

/**
 * A row of a page as one reader will see it, before it is published: a listing, or on a since
 * page a tombstone. `toPageView` and `ListingJson.pageJson` publish it.
 */
export type ReaderRow =
  | ReaderListing
  | { readonly _tag: "Tombstone"; readonly listing: ListingRecord }

/**
 * A page for one reader (what `Directory.list` answers): its rows, the cursor to the next one,
 * and the since watermark. `ListingJson.pageJson` renders it, `toPageView` makes its view.
 */
export interface ReaderPage {
  readonly rows: ReadonlyArray<ReaderRow>
  readonly nextCursor: string | null
  readonly syncedAt: Instant
}

export const toRowView = (row: ReaderRow): ListingView | TombstoneView =>
  row._tag === "Listing" ? toListingView(row.listing, row.reader) : toTombstoneView(row.listing)

export const toPageView = (page: ReaderPage): PageView => ({
  data: page.rows.map(toRowView),
  next_cursor: page.nextCursor,
  has_more: page.nextCursor !== null,
  synced_at: toIso(page.syncedAt)
})

/** Rows that left the directory and appear on `since` pages as tombstones. */
export const isTombstone = (status: ListingStatus): boolean =>
  status === "sold" || status === "blocked" || status === "delisted"
