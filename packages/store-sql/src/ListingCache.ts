import type { Listing } from "@dropshelf/core"

/*
 * Decoded listings kept by (id, updated_at). Since migration 0002, updated_at is a strict row
 * version (every write moves it), so a cached record whose updated_at equals the one the
 * database reports is that row's current content. A page then reads only ids and versions and
 * decodes just the rows it has not seen at that version: decoding 50 full rows cost more than
 * the query itself (docs/performance.md). Handing back the same object for an unchanged row
 * also lets the core keep what it derives from a record (its published JSON) in a WeakMap.
 */

/** Rows remembered; the least recently used go first. About 1 KB each. */
export const DEFAULT_CAPACITY = 20_000

export interface ListingCache {
  /** The record of this id if it is cached at exactly this version. */
  readonly get: (id: string, updatedAt: number) => Listing.ListingRecord | undefined
  /** The cached record for this content, or `record` itself, now cached. */
  readonly intern: (record: Listing.ListingRecord) => Listing.ListingRecord
}

export const make = (capacity: number = DEFAULT_CAPACITY): ListingCache => {
  // A Map iterates in insertion order: re-inserting on use keeps the least recent first.
  const records = new Map<string, Listing.ListingRecord>()
  return {
    get: (id, updatedAt) => {
      const record = records.get(id)
      if (record === undefined || record.updatedAt !== updatedAt) return undefined
      records.delete(id)
      records.set(id, record)
      return record
    },
    intern: (record) => {
      const cached = records.get(record.id)
      if (cached !== undefined && cached.updatedAt === record.updatedAt) return cached
      records.delete(record.id)
      records.set(record.id, record)
      if (records.size > capacity) records.delete(records.keys().next().value!)
      return record
    }
  }
}
