import { Context } from "effect"

/**
 * Which of the adapter's caches and batchers run: all of them unless a deployment switches one
 * off to measure what it buys (`DROPSHELF_CACHES_OFF`; apps/cli/src/Caches.ts lists every cache
 * with what it keeps and how it is invalidated). Read once, when the stores are built.
 */
export interface Switches {
  /** KeyLookups: each key digest's answer. */
  readonly keyLookups: boolean
  /** ListingCache: decoded listings by (id, updated_at), which also lets a page read only ids and versions. */
  readonly listingRecords: boolean
  /** SharedReads: concurrent identical reads share one statement. */
  readonly sharedReads: boolean
  /** SinceFeed: one reading of the since watermark serves the pages of the next second. */
  readonly syncedAt: boolean
  /** SinceFeed: the next page of a since run that follows a cursor is read while this one is sent. */
  readonly sinceReadAhead: boolean
  /** ColumnPages: the filtered columns of the directory, scanned for pages whose filters match few rows. */
  readonly filterColumns: boolean
}

export const ALL: Switches = { keyLookups: true, listingRecords: true, sharedReads: true, syncedAt: true, sinceReadAhead: true, filterColumns: true }

export const StoreCaches = Context.Reference<Switches>("@dropshelf/store-sql/StoreCaches", { defaultValue: () => ALL })
