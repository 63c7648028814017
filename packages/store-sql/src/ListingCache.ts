import type { Listing } from "@dropshelf/core"

/*
 * Decoded listings kept by (id, updated_at). updated_at is a strict row version (every write
 * moves it), so a cached record whose updated_at equals the one the database reports is that
 * row's current content. A page then reads only ids and versions and decodes just the rows it
 * has not seen at that version: decoding full rows costs more than the query itself
 * (docs/decisions/0501-page-statement.md). Handing back the same object for an unchanged row
 * also lets the server keep what it derives from a record (its published JSON) by object.
 */

/** Rows remembered; those not used for the longest go first. */
export const DEFAULT_CAPACITY = 20_000

export interface ListingCache {
  /** The record of this id if it is cached at exactly this version. */
  readonly get: (id: string, updatedAt: number) => Listing.ListingRecord | undefined
  /** The cached record for this content, or `record` itself, now cached. */
  readonly intern: (record: Listing.ListingRecord) => Listing.ListingRecord
  /** Whether some version of this id is cached, without counting as a use. */
  readonly has: (id: string) => boolean
}

/*
 * Two generations instead of an exact LRU: records go into the young map; when it holds half the
 * capacity it becomes the old one and the previous old one is dropped; a hit in the old map
 * moves the record to the young one. A hit in the young map costs one look-up; a strict LRU
 * deletes and re-inserts on every hit, and a page makes a hit a row
 * (docs/decisions/0509-read-paths.md). At most `capacity` records are held; one used within the
 * last half-capacity insertions is kept.
 */
export const make = (capacity: number = DEFAULT_CAPACITY): ListingCache => {
  const half = Math.max(1, Math.floor(capacity / 2))
  let young = new Map<string, Listing.ListingRecord>()
  let old = new Map<string, Listing.ListingRecord>()
  const keep = (record: Listing.ListingRecord) => {
    if (capacity <= 0) return
    young.set(record.id, record)
    if (young.size >= half) {
      old = young
      young = new Map()
    }
  }
  /** The newest record cached for `id`, at whatever version. */
  const find = (id: string) => {
    const fresh = young.get(id)
    if (fresh !== undefined) return fresh
    const aged = old.get(id)
    if (aged !== undefined) keep(aged)
    return aged
  }
  return {
    get: (id, updatedAt) => {
      const record = find(id)
      return record !== undefined && record.updatedAt === updatedAt ? record : undefined
    },
    intern: (record) => {
      const cached = find(record.id)
      if (cached !== undefined && cached.updatedAt === record.updatedAt) return cached
      keep(record)
      return record
    },
    has: (id) => young.has(id) || old.has(id)
  }
}
