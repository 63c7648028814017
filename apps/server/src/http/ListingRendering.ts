import { type Listing, ListingJson } from "@dropshelf/core"
import { Context, Layer } from "effect"

/*
 * The reader-independent JSON of each listing (`ListingJson.Members`), kept per record object
 * while that object lives. Records are immutable, so an object's text never changes and nothing
 * needs invalidating: a changed row is read as a new object, and an entry goes when its record
 * is collected. Hits come from a store that hands back the same object for an unchanged row (the
 * SQL adapter's ListingCache, docs/architecture.md "Records are values"). A since page and a
 * snapshot show each listing once, so they render with `ListingJson.members` and keep nothing.
 */

export class ListingRendering extends Context.Service<ListingRendering, {
  /** Renders what no reader changes of a listing, remembered per record object when the cache is on. */
  readonly members: ListingJson.Members
}>()("@dropshelf/server/ListingRendering") {
  /** `enabled` false (`DROPSHELF_CACHES_OFF=listing-json`) renders every listing afresh. */
  static readonly layer = (enabled: boolean) =>
    Layer.sync(ListingRendering, () => ({ members: enabled ? remembering() : ListingJson.members }))
}

const remembering = (): ListingJson.Members => {
  const kept = new WeakMap<Listing.ListingRecord, string>()
  return (listing) => {
    let text = kept.get(listing)
    if (text === undefined) {
      text = ListingJson.members(listing)
      kept.set(listing, text)
    }
    return text
  }
}
