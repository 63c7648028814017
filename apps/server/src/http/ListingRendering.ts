import { type Listing, ListingJson } from "@dropshelf/core"
import { SieveCache } from "@neophi/sieve-cache"
import { Context, Layer } from "effect"

/*
 * The reader-independent JSON of each listing (`ListingJson.Members`), kept per record object
 * for the records rendered lately and again. Records are immutable, so an object's text never
 * changes and nothing needs invalidating: a changed row is read as a new object. Hits come from
 * a store that hands back the same object for an unchanged row (the SQL adapter's ListingCache,
 * docs/architecture.md "Records are values"). Held strongly, not in a WeakMap: a full
 * collection marks a WeakMap's entries as ephemerons, which made its pauses several times
 * longer. A since page and a snapshot show each listing once, so they render with
 * `ListingJson.members` and keep nothing.
 */

/** Records whose text is kept: as many as the SQL adapter's row cache holds. */
const DEFAULT_CAPACITY = 60_000

export class ListingRendering extends Context.Service<ListingRendering, {
  /** Renders what no reader changes of a listing, remembered per record object when the cache is on. */
  readonly members: ListingJson.Members
}>()("@dropshelf/server/ListingRendering") {
  /** `enabled` false (`DROPSHELF_CACHES_OFF=listing-json`) renders every listing afresh. */
  static readonly layer = (enabled: boolean, capacity: number = DEFAULT_CAPACITY) =>
    Layer.sync(ListingRendering, () => ({ members: enabled && capacity > 0 ? remembering(capacity) : ListingJson.members }))
}

/** Evicted by SIEVE, as the row cache is (store-sql ListingCache.ts). */
const remembering = (capacity: number): ListingJson.Members => {
  const texts = new SieveCache<Listing.ListingRecord, string>(capacity)
  return (listing) => {
    let text = texts.get(listing)
    if (text === undefined) {
      text = ListingJson.members(listing)
      texts.set(listing, text)
    }
    return text
  }
}
