import { type ListingRecord, type ReaderPage, type ReaderRow, type ReaderView, toPublicView } from "./Listing.ts"
import { toIso } from "./Time.ts"

/*
 * The published JSON of listings and pages, written without building and encoding a view per
 * row per request. Of a listing's view only `domain`, `name_disclosed`, `hold_state` and
 * `hold_expires_at` depend on the reader; the rest (`Members`) is rendered by a function the
 * caller may give, so that an adapter can keep it per record (the server's ListingRendering),
 * and spliced in. The text parses to exactly the value `Schema.encode(Listing.PageView)` gives
 * for `toPageView` of the same page: the views contain only strings, numbers, booleans, null and
 * arrays, which the schemas encode as they are, and a property test holds the two together
 * (test/ListingJson.test.ts).
 */

/** Every member of a listing's JSON no reader changes (`"id":…` first), as JSON text without the braces. */
export type Members = (listing: ListingRecord) => string

/** `Members` rendered afresh on every call. */
export const members: Members = (listing) => JSON.stringify(toPublicView(listing)).slice(1, -1)

/** The JSON of `toListingView(listing, reader)`, members in another order. */
export const listingJson = (listing: ListingRecord, reader: ReaderView, membersOf: Members = members): string =>
  `{${membersOf(listing)},"domain":${reader.disclosed ? JSON.stringify(listing.domain) : "null"},"name_disclosed":${reader.disclosed},"hold_state":"${reader.holdState}","hold_expires_at":${
    reader.holdExpiresAt === null ? "null" : `"${toIso(reader.holdExpiresAt)}"`
  }}`

const tombstoneJson = (listing: ListingRecord): string =>
  `{"id":${JSON.stringify(listing.id)},"status":"delisted","updated_at":"${toIso(listing.updatedAt)}"}`

export const rowJson = (row: ReaderRow, membersOf: Members = members): string =>
  row._tag === "Listing" ? listingJson(row.listing, row.reader, membersOf) : tombstoneJson(row.listing)

/**
 * The JSON of `toPageView(page)` in pieces, one per row among them, to be written one after
 * another: one string of a whole since page is large enough to live in V8's large-object space
 * until a full collection, where pieces die young.
 */
export const pageJsonParts = (page: ReaderPage, membersOf: Members = members): Array<string> => {
  const parts = new Array<string>(page.rows.length + 2)
  parts[0] = `{"data":[`
  for (let index = 0; index < page.rows.length; index++) {
    parts[index + 1] = index === 0 ? rowJson(page.rows[index]!, membersOf) : `,${rowJson(page.rows[index]!, membersOf)}`
  }
  parts[page.rows.length + 1] = `],"next_cursor":${page.nextCursor === null ? "null" : JSON.stringify(page.nextCursor)},"has_more":${
    page.nextCursor !== null
  },"synced_at":"${toIso(page.syncedAt)}"}`
  return parts
}

/**
 * The bytes of a rendered page (`pageJsonBytes`) up to its watermark: `synced_at` is the page's
 * last member and holds no comma, so it starts after the last comma. What the page says apart
 * from the watermark, which moves with the clock while the rows stay the same: a page's entity
 * tag is taken over these bytes.
 */
export const withoutWatermark = (bytes: Uint8Array): Uint8Array => bytes.subarray(0, bytes.lastIndexOf(0x2c))

/** The JSON of `toPageView(page)`. */
export const pageJson = (page: ReaderPage, membersOf: Members = members): string => pageJsonParts(page, membersOf).join("")

const encoder = new TextEncoder()

/**
 * The UTF-8 of `parts` joined, encoded piece by piece into one buffer: no page-sized string is
 * made (see `pageJsonParts`) and the bytes can be written as they are.
 */
export const utf8Of = (parts: ReadonlyArray<string>): Uint8Array => {
  let chars = 0
  for (const part of parts) chars += part.length
  // JSON here is nearly all ASCII: one byte a character, more room only when a name needs it.
  let bytes = new Uint8Array(chars + 256)
  let used = 0
  for (const part of parts) {
    let read = 0
    while (true) {
      const step = encoder.encodeInto(read === 0 ? part : part.slice(read), bytes.subarray(used))
      read += step.read
      used += step.written
      if (read >= part.length) break
      const larger = new Uint8Array(bytes.length * 2)
      larger.set(bytes.subarray(0, used))
      bytes = larger
    }
  }
  return bytes.subarray(0, used)
}

/** The UTF-8 of `pageJson(page, membersOf)`. */
export const pageJsonBytes = (page: ReaderPage, membersOf: Members = members): Uint8Array => utf8Of(pageJsonParts(page, membersOf))
