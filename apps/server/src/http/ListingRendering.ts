import { type Listing, ListingJson } from "@dropshelf/core"
import { Context, Layer } from "effect"

/*
 * The reader-independent JSON of each listing (`ListingJson.Members`), kept per record object
 * for the records last rendered. Records are immutable, so an object's text never changes and
 * nothing needs invalidating: a changed row is read as a new object. Hits come from a store that
 * hands back the same object for an unchanged row (the SQL adapter's ListingCache,
 * docs/architecture.md "Records are values"). Held strongly, not in a WeakMap: a full
 * collection marks a WeakMap's entries as ephemerons, which made its pauses several times
 * longer. A since page and a snapshot show each listing once, so they render with
 * `ListingJson.members` and keep nothing.
 */

/** Records whose text is kept: as many as the SQL adapter's row cache holds. */
const DEFAULT_CAPACITY = 20_000

export class ListingRendering extends Context.Service<ListingRendering, {
  /** Renders what no reader changes of a listing, remembered per record object when the cache is on. */
  readonly members: ListingJson.Members
}>()("@dropshelf/server/ListingRendering") {
  /** `enabled` false (`DROPSHELF_CACHES_OFF=listing-json`) renders every listing afresh. */
  static readonly layer = (enabled: boolean, capacity: number = DEFAULT_CAPACITY) =>
    Layer.sync(ListingRendering, () => ({ members: enabled ? remembering(capacity) : ListingJson.members }))
}

/**
 * Two generations, as the row cache's: texts go into the young map; when it holds half the
 * capacity it becomes the old one and the previous old one is dropped; a hit in the old map
 * moves the text to the young one. At most `capacity` records are held; one rendered within
 * the last half-capacity new renderings is kept.
 */
const remembering = (capacity: number): ListingJson.Members => {
  const half = Math.max(1, Math.floor(capacity / 2))
  let young = new Map<Listing.ListingRecord, string>()
  let old = new Map<Listing.ListingRecord, string>()
  return (listing) => {
    let text = young.get(listing)
    if (text !== undefined) return text
    text = old.get(listing) ?? ListingJson.members(listing)
    young.set(listing, text)
    if (young.size >= half) {
      old = young
      young = new Map()
    }
    return text
  }
}
