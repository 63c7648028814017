import { Listing, ListingJson } from "@dropshelf/core"
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import fc from "fast-check"

/*
 * The server publishes listings and pages with ListingJson instead of encoding views with the
 * endpoint schemas. Whatever the record and the reader, the text must parse to exactly what the
 * schema encoding of the same view gives, or the OpenAPI document would no longer describe it.
 */

const instant = fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2100, 0, 1) })
const count = fc.option(fc.nat({ max: 50_000_000 }), { nil: null })
/** Text with quotes, backslashes, control characters and astral symbols, which JSON must escape. */
const awkwardText = fc.string({ unit: "binary", maxLength: 30 })

const record: fc.Arbitrary<Listing.ListingRecord> = fc.record({
  id: fc.stringMatching(/^[A-Za-z0-9]{8}$/),
  domain: fc.oneof(fc.constantFrom("castsmell.co", "green-energy.co.uk", "a.io"), awkwardText),
  tier: fc.constantFrom("featured", "regular", "open"),
  status: fc.constant("active"),
  discoveredAt: instant,
  updatedAt: instant,
  estimatedValueCents: count,
  category: fc.option(awkwardText, { nil: null }),
  ageYears: fc.option(fc.nat({ max: 40 }), { nil: null }),
  backlinks: count,
  referringDomains: count,
  domainAuthority: fc.option(fc.nat({ max: 100 }), { nil: null }),
  snapshots: count,
  directoryScore: fc.option(fc.nat({ max: 100 }), { nil: null }),
  spam: fc.constantFrom("low", "moderate", null),
  linkedBy: fc.array(awkwardText, { maxLength: 3 }),
  tags: fc.array(awkwardText, { maxLength: 3 }),
  blurb: fc.option(awkwardText, { nil: null }),
  source: fc.option(awkwardText, { nil: null }),
  agentCitability: fc.option(
    fc.record({ score: fc.nat({ max: 100 }), sources: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 2 }) }),
    { nil: null }
  ),
  featuredRank: fc.option(fc.nat({ max: 1000 }), { nil: null }),
  availabilityCheckedAt: fc.option(instant, { nil: null }),
  maskHint: fc.option(awkwardText, { nil: null }),
  wordCount: fc.nat({ max: 6 })
}) as unknown as fc.Arbitrary<Listing.ListingRecord>

const reader: fc.Arbitrary<Listing.ReaderView> = fc.record({
  disclosed: fc.boolean(),
  holdState: fc.constantFrom("none", "mine", "other"),
  holdExpiresAt: fc.option(instant, { nil: null })
})

const row: fc.Arbitrary<Listing.ReaderRow> = fc.oneof(
  fc.record({ _tag: fc.constant("Listing" as const), listing: record, reader }),
  fc.record({
    _tag: fc.constant("Tombstone" as const),
    listing: record.chain((listing) =>
      fc.constantFrom("sold", "blocked", "delisted").map((status) => ({ ...listing, status }))
    )
  })
)

const page: fc.Arbitrary<Listing.ReaderPage> = fc.record({
  rows: fc.array(row, { maxLength: 8 }),
  nextCursor: fc.option(fc.string({ maxLength: 40 }), { nil: null }),
  syncedAt: instant
})

/**
 * The schema encoding as it arrives over the wire: JSON has no -0 (an agent citability source
 * may hold one), so both sides are compared as JSON carries them.
 */
const onTheWire = (value: unknown) => JSON.parse(JSON.stringify(value))
const encodeListing = (view: unknown) => onTheWire(Schema.encodeUnknownSync(Listing.ListingView)(view))
const encodePage = (view: unknown) => onTheWire(Schema.encodeUnknownSync(Listing.PageView)(view))

describe("ListingJson", () => {
  it("a listing's JSON is the schema encoding of its view, for any record and reader", () => {
    fc.assert(fc.property(record, reader, (listing, view) => {
      assert.deepStrictEqual(
        JSON.parse(ListingJson.listingJson(listing, view)),
        encodeListing(Listing.toListingView(listing, view))
      )
    }))
  })

  it("rendered once per record, it still follows the reader: the same record read by two readers", () => {
    fc.assert(fc.property(record, reader, reader, (listing, first, second) => {
      ListingJson.listingJson(listing, first)
      assert.deepStrictEqual(
        JSON.parse(ListingJson.listingJson(listing, second)),
        encodeListing(Listing.toListingView(listing, second))
      )
    }))
  })

  it("a reader's listing (what Directory.get answers) renders as the schema encoding of toListingView", () => {
    fc.assert(fc.property(record, reader, (listing, view) => {
      const row = { _tag: "Listing", listing, reader: view } as const
      assert.deepStrictEqual(JSON.parse(ListingJson.rowJson(row)), encodeListing(Listing.toListingView(row.listing, row.reader)))
    }))
  })

  it("a page's JSON is the schema encoding of toPageView, tombstones and cursor included", () => {
    fc.assert(fc.property(page, (readerPage) => {
      assert.deepStrictEqual(JSON.parse(ListingJson.pageJson(readerPage)), encodePage(Listing.toPageView(readerPage)))
    }))
  })

  it("is the same text when each record's members are remembered, as an adapter may keep them", () => {
    fc.assert(fc.property(page, (readerPage) => {
      const kept = new Map<Listing.ListingRecord, string>()
      const remembered: ListingJson.Members = (listing) => kept.get(listing) ?? kept.set(listing, ListingJson.members(listing)).get(listing)!
      const first = ListingJson.pageJson(readerPage, remembered)
      assert.strictEqual(ListingJson.pageJson(readerPage, remembered), first)
      assert.strictEqual(first, ListingJson.pageJson(readerPage))
    }))
  })

  it("utf8Of is the UTF-8 of the pieces joined, whatever their characters and sizes", () => {
    // Whole code points: the JSON pieces are JSON.stringify output, which never ends in half a pair.
    const piece = fc.oneof(
      fc.string({ unit: "binary", maxLength: 400 }),
      fc.string({ unit: fc.constantFrom("a", "é", "€", "😀", "\u0000"), maxLength: 2000 })
    )
    fc.assert(fc.property(fc.array(piece, { maxLength: 20 }), (pieces) => {
      assert.deepStrictEqual(ListingJson.utf8Of(pieces), new TextEncoder().encode(pieces.join("")))
    }), { numRuns: 500 })
  })

  /** What a reader could be told differently about a page, one change at a time. */
  const changeOf = (readerPage: Listing.ReaderPage): fc.Arbitrary<Listing.ReaderPage> => {
    const changes: Array<fc.Arbitrary<Listing.ReaderPage>> = [
      fc.option(fc.string({ maxLength: 40 }), { nil: null })
        .filter((cursor) => cursor !== readerPage.nextCursor)
        .map((nextCursor) => ({ ...readerPage, nextCursor })),
      instant.filter((at) => at !== readerPage.syncedAt).map((syncedAt) => ({ ...readerPage, syncedAt })),
      row.map((added) => ({ ...readerPage, rows: [...readerPage.rows, added] }))
    ]
    if (readerPage.rows.length > 0) {
      const at = fc.nat({ max: readerPage.rows.length - 1 })
      const withRow = (index: number, changed: Listing.ReaderRow) => ({
        ...readerPage,
        rows: readerPage.rows.map((existing, position) => (position === index ? changed : existing))
      })
      changes.push(
        // Another version of the row's listing: a new record object, as a store hands back.
        fc.tuple(at, instant).map(([index, updatedAt]) => {
          const existing = readerPage.rows[index]!
          return withRow(index, { ...existing, listing: { ...existing.listing, updatedAt } } as Listing.ReaderRow)
        }),
        // The same listing told differently: disclosed, held, or held until another time.
        fc.tuple(at, reader).map(([index, view]) => {
          const existing = readerPage.rows[index]!
          return withRow(index, { _tag: "Listing", listing: existing.listing, reader: view })
        })
      )
    }
    return fc.oneof(...changes)
  }

  const textOf = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

  it("pageJsonBytes is the UTF-8 of pageJson", () => {
    fc.assert(fc.property(page, (readerPage) => {
      assert.strictEqual(textOf(ListingJson.pageJsonBytes(readerPage)), ListingJson.pageJson(readerPage))
    }))
  })

  it("withoutWatermark is the page's bytes without synced_at: the same for any watermark, another for any other change", () => {
    const restOf = (readerPage: Listing.ReaderPage) => textOf(ListingJson.withoutWatermark(ListingJson.pageJsonBytes(readerPage)))
    const viewWithoutWatermark = (readerPage: Listing.ReaderPage) => {
      const { synced_at: _, ...view } = JSON.parse(ListingJson.pageJson(readerPage))
      return view
    }
    fc.assert(fc.property(page.chain((readerPage) => fc.tuple(fc.constant(readerPage), changeOf(readerPage))), ([readerPage, changed]) => {
      const [rest, changedRest] = [restOf(readerPage), restOf(changed)]
      assert.deepStrictEqual(JSON.parse(`${rest}}`), viewWithoutWatermark(readerPage))
      assert.deepStrictEqual(JSON.parse(`${changedRest}}`), viewWithoutWatermark(changed))
      if (changed.syncedAt !== readerPage.syncedAt) assert.strictEqual(changedRest, rest)
    }))
  })
})
