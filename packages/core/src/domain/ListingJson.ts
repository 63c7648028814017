import { type ListingRecord, type ReaderPage, type ReaderRow, type ReaderView, toPublicView } from "./Listing.ts"
import type { ListQuery } from "./ListQuery.ts"
import { toIso } from "./Time.ts"

/*
 * The published JSON of listings and pages, written without building and encoding a view per
 * row per request. Of a listing's view only `domain`, `name_disclosed`, `hold_state` and
 * `hold_expires_at` depend on the reader; the rest is rendered once per record object (a store
 * that hands back the same object for an unchanged row, as the SQL adapter's cache does, gets
 * it rendered once per version) and spliced in. The text parses to exactly the value
 * `Schema.encode(Listing.PageView)` gives for `toPageView` of the same page: the views contain
 * only strings, numbers, booleans, null and arrays, which the schemas encode as they are, and
 * a property test holds the two together (test/ListingJson.test.ts).
 */

const readerIndependent = new WeakMap<ListingRecord, string>()

/**
 * How a page is rendered. `keep` (default true) keeps each listing's reader-independent JSON
 * for the next page that shows the same record object. A `since` run shows each record once:
 * keeping its text only costs (a WeakMap entry per record; docs/decisions/0503-listing-json.md),
 * so a since page is rendered with `keep: false`.
 */
export interface RenderOptions {
  readonly keep?: boolean | undefined
}

/**
 * How a page asked with `query` is rendered: a since run shows each listing once, so neither its
 * listings' JSON nor the page's is worth keeping.
 */
export const renderOptionsOf = (query: Pick<ListQuery, "since">): RenderOptions => ({ keep: query.since === undefined })

/** Every member no reader changes (`"id":…` first), as JSON text without the braces. */
const readerIndependentMembers = (listing: ListingRecord, keep: boolean): string => {
  let members = readerIndependent.get(listing)
  if (members === undefined) {
    members = JSON.stringify(toPublicView(listing)).slice(1, -1)
    if (keep) readerIndependent.set(listing, members)
  }
  return members
}

/** The JSON of `toListingView(listing, reader)`, members in another order. */
export const listingJson = (listing: ListingRecord, reader: ReaderView, options: RenderOptions = {}): string =>
  `{${readerIndependentMembers(listing, options.keep ?? true)},"domain":${reader.disclosed ? JSON.stringify(listing.domain) : "null"},"name_disclosed":${reader.disclosed},"hold_state":"${reader.holdState}","hold_expires_at":${
    reader.holdExpiresAt === null ? "null" : `"${toIso(reader.holdExpiresAt)}"`
  }}`

const tombstoneJson = (listing: ListingRecord): string =>
  `{"id":${JSON.stringify(listing.id)},"status":"delisted","updated_at":"${toIso(listing.updatedAt)}"}`

export const rowJson = (row: ReaderRow, options: RenderOptions = {}): string =>
  row._tag === "Listing" ? listingJson(row.listing, row.reader, options) : tombstoneJson(row.listing)

/**
 * The JSON of `toPageView(page)` in pieces, one per row among them, to be written one after
 * another: one string of a whole since page is large enough to live in V8's large-object space
 * until a full collection, where pieces die young.
 */
export const pageJsonParts = (page: ReaderPage, options: RenderOptions = {}): Array<string> => {
  const parts = new Array<string>(page.rows.length + 2)
  parts[0] = `{"data":[`
  for (let index = 0; index < page.rows.length; index++) {
    parts[index + 1] = index === 0 ? rowJson(page.rows[index]!, options) : `,${rowJson(page.rows[index]!, options)}`
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
export const pageJson = (page: ReaderPage, options: RenderOptions = {}): string => pageJsonParts(page, options).join("")

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

/** Whether two pages' rows render the same: the same record objects, told the same to their readers. */
const sameRows = (rows: ReadonlyArray<ReaderRow>, others: ReadonlyArray<ReaderRow>): boolean => {
  if (rows.length !== others.length) return false
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index]!
    const other = others[index]!
    if (row.listing !== other.listing || row._tag !== other._tag) return false
    if (row._tag === "Listing" && other._tag === "Listing") {
      const reader = row.reader
      const otherReader = other.reader
      if (
        reader.disclosed !== otherReader.disclosed || reader.holdState !== otherReader.holdState ||
        reader.holdExpiresAt !== otherReader.holdExpiresAt
      ) return false
    }
  }
  return true
}

interface RenderedPage {
  readonly page: ReaderPage
  readonly bytes: Uint8Array
}

/** Pages rendered with `keep`, most recently used first. */
const renderedPages: Array<RenderedPage> = []
/** How many rendered pages are remembered: enough for the pages read again and again, few enough to hold little memory. */
const RENDERED_PAGES = 16

/**
 * The UTF-8 of `pageJson(page, options)`. With `keep` (the default), the last pages rendered
 * are remembered: a page with the same record objects, each told the same to its reader, the
 * same cursor and the same watermark gets the same bytes back, not a new rendering. Under load
 * many page requests are a few pages read again and again, and rendering one is a large share
 * of a list request's server time (docs/decisions/0503-listing-json.md). The bytes may be shared by
 * several callers: do not modify them.
 */
export const pageJsonBytes = (page: ReaderPage, options: RenderOptions = {}): Uint8Array => {
  const keep = options.keep ?? true
  if (!keep) return utf8Of(pageJsonParts(page, options))
  for (let index = 0; index < renderedPages.length; index++) {
    const rendered = renderedPages[index]!
    if (
      rendered.page.syncedAt === page.syncedAt && rendered.page.nextCursor === page.nextCursor &&
      sameRows(rendered.page.rows, page.rows)
    ) {
      if (index > 0) {
        renderedPages.splice(index, 1)
        renderedPages.unshift(rendered)
      }
      return rendered.bytes
    }
  }
  const bytes = utf8Of(pageJsonParts(page, options))
  renderedPages.unshift({ page, bytes })
  if (renderedPages.length > RENDERED_PAGES) renderedPages.pop()
  return bytes
}
