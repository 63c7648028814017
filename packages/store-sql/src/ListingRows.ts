import type { Hold, Ids, Listing, ListingStore } from "@dropshelf/core"
import { HOLD_COLUMN_NAMES, toHoldAt } from "./SqlHoldStore.ts"
import { instant, instantOrNull, int, intOrNull, json, textOrNull } from "./Rows.ts"

/*
 * How listing rows come back from a page statement: the columns every read selects, a row taken
 * apart by position into a record, and where the statement's extra columns (the cursor anchor,
 * the reader's reveals, the running hold) sit, with what they say of the page's reader. Rows
 * are read with `.values`, as arrays: building one object per row, keyed by column name, is a
 * large share of reading a page (docs/decisions/0501-page-statement.md).
 */

/** The columns of a listing, in the order every read selects them. */
export const LISTING_COLUMNS = [
  "id",
  "domain",
  "tier",
  "status",
  "discovered_at",
  "updated_at",
  "estimated_value_cents",
  "category",
  "age_years",
  "backlinks",
  "referring_domains",
  "domain_authority",
  "snapshots",
  "directory_score",
  "spam",
  "linked_by",
  "tags",
  "blurb",
  "source",
  "agent_citability",
  "featured_rank",
  "availability_checked_at",
  "mask_hint",
  "word_count"
] as const
export const COLUMNS = LISTING_COLUMNS.join(", ")
export const COLUMN = Object.fromEntries(LISTING_COLUMNS.map((name, index) => [name, index])) as {
  readonly [Name in typeof LISTING_COLUMNS[number]]: number
}

/** What a page's first statement reads of each row: enough to find the row in the cache. */
export const VERSION_COLUMNS = ["id", "updated_at", "discovered_at"] as const

/** The running hold a page statement joins, in `toHoldAt`'s order, named apart from the listing's columns. */
export const JOINED_HOLD_COLUMNS = HOLD_COLUMN_NAMES.map((name) => `h.${name} AS h_${name}`).join(", ")

/** A row read with `.values`: its columns in the order of the statement's select list. */
export type Values = ReadonlyArray<unknown>

/** A listing from a row whose first columns are `COLUMNS`. */
export const toRecord = (row: Values): Listing.ListingRecord => ({
  id: row[COLUMN.id] as Ids.ListingId,
  domain: row[COLUMN.domain] as string,
  tier: row[COLUMN.tier] as Listing.Tier,
  status: row[COLUMN.status] as Listing.ListingStatus,
  discoveredAt: instant(row[COLUMN.discovered_at]),
  updatedAt: instant(row[COLUMN.updated_at]),
  estimatedValueCents: intOrNull(row[COLUMN.estimated_value_cents]),
  category: textOrNull(row[COLUMN.category]),
  ageYears: intOrNull(row[COLUMN.age_years]),
  backlinks: intOrNull(row[COLUMN.backlinks]),
  referringDomains: intOrNull(row[COLUMN.referring_domains]),
  domainAuthority: intOrNull(row[COLUMN.domain_authority]),
  snapshots: intOrNull(row[COLUMN.snapshots]),
  directoryScore: intOrNull(row[COLUMN.directory_score]),
  spam: textOrNull(row[COLUMN.spam]) as Listing.Spam | null,
  linkedBy: json(row[COLUMN.linked_by]) as ReadonlyArray<string>,
  tags: json(row[COLUMN.tags]) as ReadonlyArray<string>,
  blurb: textOrNull(row[COLUMN.blurb]),
  source: textOrNull(row[COLUMN.source]),
  agentCitability: (json(row[COLUMN.agent_citability]) ?? null) as Listing.AgentCitability | null,
  featuredRank: intOrNull(row[COLUMN.featured_rank]),
  availabilityCheckedAt: instantOrNull(row[COLUMN.availability_checked_at]),
  maskHint: textOrNull(row[COLUMN.mask_hint]),
  wordCount: int(row[COLUMN.word_count])
})

/**
 * Where a page statement's own columns sit in its rows: after the `selected` columns of its
 * select come the anchor's answer (with a cursor), then, with a reader, `revealed_by` (at
 * `revealed`) and the running hold's columns (`PageStatement.withReader`). Every select starts
 * with `id`.
 */
export interface Layout {
  readonly anchorExists: number
  readonly revealed: number
  readonly hold: number
}

export const layoutOf = (anchored: boolean, selected: number): Layout => {
  const anchor = anchored ? 1 : 0
  return { anchorExists: selected, revealed: selected + anchor, hold: selected + anchor + 1 }
}

/** What a statement said of its readers: the running holds, and the listings each account asked revealed. */
export interface ReaderAnswers {
  readonly running: ReadonlyMap<string, Hold.HoldRecord>
  readonly revealed: ReadonlyMap<string, ReadonlySet<string>>
}

export const readerAnswers = (rows: ReadonlyArray<Values>, layout: Layout): ReaderAnswers => {
  const running = new Map<string, Hold.HoldRecord>()
  const revealed = new Map<string, Set<string>>()
  for (const row of rows) {
    const id = row[0] as string
    if (row[layout.hold] !== null && row[layout.hold] !== undefined) running.set(id, toHoldAt(row, layout.hold))
    for (const account of (row[layout.revealed] ?? []) as ReadonlyArray<string>) {
      let ids = revealed.get(account)
      if (ids === undefined) revealed.set(account, ids = new Set())
      ids.add(id)
    }
  }
  return { running, revealed }
}

/** `PageResult`'s reader fields for `reader`, from what a (possibly shared) statement said. */
export const answersFor = (reader: ListingStore.PageReader, answers: ReaderAnswers) => ({
  running: answers.running,
  revealed: reader.revealsOf === undefined
    ? new Set<string>()
    : answers.revealed.get(reader.revealsOf) ?? new Set<string>()
})

/** The accounts whose reveals a statement reads for `reader`. */
export const accountsAsked = (reader: ListingStore.PageReader | undefined): ReadonlyArray<string> =>
  reader?.revealsOf === undefined ? [] : [reader.revealsOf]

/** The anchor's answer of a page statement: undefined without a cursor or without rows to carry it. */
export const anchorExistsIn = (anchored: boolean, rows: ReadonlyArray<Values>, layout: Layout) =>
  !anchored || rows[0] === undefined ? undefined : rows[0][layout.anchorExists] === true
