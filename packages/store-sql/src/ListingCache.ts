import type { Listing } from "@dropshelf/core"
import { SieveCache } from "@neophi/sieve-cache"

/*
 * Decoded listings kept by (id, updated_at). updated_at is a strict row version (every write
 * moves it), so a cached record whose updated_at equals the one the database reports is that
 * row's current content. A page then reads only ids and versions and decodes just the rows it
 * has not seen at that version: decoding full rows costs more than the query itself
 * (docs/decisions/0501-page-statement.md). Handing back the same object for an unchanged row
 * also lets the server keep what it derives from a record (its published JSON) by object.
 */

/** Rows remembered: what callers walking arbitrary filter sets come back to (docs/decisions/0517-eviction.md). */
export const DEFAULT_CAPACITY = 60_000

export interface ListingCache {
  /** The record of this id if it is cached at exactly this version. */
  readonly get: (id: string, updatedAt: number) => Listing.ListingRecord | undefined
  /** The cached record for this content, or `record` itself, now cached. */
  readonly intern: (record: Listing.ListingRecord) => Listing.ListingRecord
  /** Whether some version of this id is cached, without counting as a use. */
  readonly has: (id: string) => boolean
}

/*
 * Evicted by SIEVE (@neophi/sieve-cache, docs/decisions/0517-eviction.md): a hit only marks the
 * record, and the record evicted is the oldest not hit since the eviction hand last passed it.
 * So rows read once (single reads over the whole directory, walks wider than the cache) go
 * before rows read again, which recency alone would evict. At most `capacity` are held.
 */
export const make = (capacity: number = DEFAULT_CAPACITY): ListingCache => {
  if (capacity <= 0) {
    return { get: () => undefined, intern: (record) => record, has: () => false }
  }
  const records = new SieveCache<string, Listing.ListingRecord>(capacity)
  return {
    get: (id, updatedAt) => {
      const record = records.get(id)
      return record !== undefined && record.updatedAt === updatedAt ? record : undefined
    },
    intern: (record) => {
      const cached = records.get(record.id)
      if (cached !== undefined && cached.updatedAt === record.updatedAt) return cached
      records.set(record.id, record)
      return record
    },
    has: (id) => records.has(id)
  }
}
