import { Bands, type Cursor, type Ids, Listing, ListingFilter, ListingStore, type ListQuery, Masking } from "@dropshelf/core"
import { Fixtures, StoreContract } from "@dropshelf/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { Effect, Layer } from "effect"
import { type ColumnRow, FilterColumns, idNumber, idText } from "../src/FilterColumns.ts"
import { StoreSql } from "../src/index.ts"
import * as SqlListingStore from "../src/SqlListingStore.ts"
import { closePglite, describeOnServer, pgliteClient, serverClient } from "./support.ts"

/*
 * The filter columns against the reference semantics (`ListingFilter.matchesFilters`): a scan
 * finds, in either order and from any position, every listing the filters keep; and the store
 * contract, run with every filtered page found through them.
 */

const MINUTE = 60_000
const T0 = Date.UTC(2026, 5, 1)

/** A listing whose instants fall on whole minutes: the columns then hold them exactly. */
const listing = fc.record({
  id: fc.stringMatching(/^[0-9A-Za-z]{8}$/),
  domain: fc.constantFrom("a.com", "b.co.uk", "c.io", "d.net"),
  tier: fc.constantFrom("featured", "regular", "open"),
  discoveredMinutes: fc.integer({ min: -3, max: 3 }),
  estimatedValueCents: fc.option(fc.constantFrom(0, 9_999, 10_000, 24_999, 25_000, 250_000), { nil: null }),
  category: fc.option(fc.constantFrom("tech", "food", "travel"), { nil: null }),
  ageYears: fc.option(fc.integer({ min: 0, max: 400 }), { nil: null }),
  referringDomains: fc.option(fc.constantFrom(0, 4, 5, 24, 99, 100, 1_200), { nil: null }),
  directoryScore: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
  spam: fc.option(fc.constantFrom("low", "moderate"), { nil: null }),
  linked: fc.boolean(),
  source: fc.option(fc.constantFrom("dropcatch", "auction"), { nil: null }),
  citability: fc.option(fc.integer({ min: 0, max: 300 }), { nil: null }),
  featured: fc.boolean(),
  checkedMinutes: fc.option(fc.integer({ min: -5 * 24 * 60, max: 0 }), { nil: null }),
  active: fc.boolean()
}).map((a): Listing.ListingRecord => ({
  ...Fixtures.listingInput(a.id, {
    domain: a.domain,
    tier: a.tier as Listing.Tier,
    discoveredAt: T0 + a.discoveredMinutes * MINUTE,
    estimatedValueCents: a.estimatedValueCents,
    category: a.category,
    ageYears: a.ageYears,
    referringDomains: a.referringDomains,
    directoryScore: a.directoryScore,
    spam: a.spam as Listing.Spam | null,
    linkedBy: a.linked ? ["bbc.co.uk"] : [],
    source: a.source,
    agentCitability: a.citability === null ? null : { score: a.citability, sources: [] },
    featuredRank: a.featured ? 1 : null,
    availabilityCheckedAt: a.checkedMinutes === null ? null : T0 + a.checkedMinutes * MINUTE
  }),
  status: a.active ? "active" : "delisted",
  updatedAt: T0
}))

const filters: fc.Arbitrary<ListQuery.ListFilters> = fc.record({
  ageMin: fc.integer({ min: 0, max: 300 }),
  categories: fc.subarray(["tech", "food", "travel", "unheard"], { minLength: 1 }),
  checkedDays: fc.integer({ min: 0, max: 4 }),
  citabilityMin: fc.integer({ min: 0, max: 260 }),
  featured: fc.boolean(),
  priceRange: fc.constantFrom(...Bands.PRICE_RANGES),
  referringDomainBands: fc.subarray([...Bands.REFERRING_DOMAIN_BANDS], { minLength: 1 }),
  recommended: fc.constant(true as const),
  rsMax: fc.integer({ min: 0, max: 100 }),
  rsMin: fc.integer({ min: 0, max: 100 }),
  sources: fc.subarray(["dropcatch", "auction", "unheard"], { minLength: 1 }),
  spam: fc.constantFrom("low" as const, "moderate" as const),
  openTierOnly: fc.constant(true as const),
  tld: fc.constantFrom("com", "co.uk", "io", "org")
}, { requiredKeys: [] })

const columnRow = (record: Listing.ListingRecord): ColumnRow => ({
  id: record.id,
  active: record.status === "active",
  discoveredAt: record.discoveredAt,
  checkedAt: record.availabilityCheckedAt,
  tld: Masking.tldOf(record.domain),
  category: record.category,
  source: record.source,
  spam: record.spam,
  openTier: record.tier === "open",
  publishedCents: Listing.publishedValueCents(record),
  referringDomains: record.referringDomains,
  directoryScore: record.directoryScore,
  ageYears: record.ageYears,
  citabilityScore: record.agentCitability?.score ?? null,
  featured: record.featuredRank !== null,
  linked: record.linkedBy.length > 0
})

/** The latest version of each id, as the database would hold them. */
const current = (records: ReadonlyArray<Listing.ListingRecord>) => [...new Map(records.map((record) => [record.id, record])).values()]

const inOrder = (order: ListQuery.ListOrder) => (a: Listing.ListingRecord, b: Listing.ListingRecord) =>
  order === "latest" && a.discoveredAt !== b.discoveredAt ? b.discoveredAt - a.discoveredAt : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

const isAfter = (record: Listing.ListingRecord, after: Cursor.CursorPosition | undefined) =>
  after === undefined ||
  (after.order === "id"
    ? record.id > after.id
    : record.discoveredAt < after.discoveredAt || (record.discoveredAt === after.discoveredAt && record.id > after.id))

/** What a page of the directory holds: the active listings the filters keep, after `after`, in order. */
const expected = (
  records: ReadonlyArray<Listing.ListingRecord>,
  f: ListQuery.ListFilters,
  order: ListQuery.ListOrder,
  after: Cursor.CursorPosition | undefined,
  visibleBefore: number
) =>
  records.filter((record) =>
    record.status === "active" && record.discoveredAt <= visibleBefore && isAfter(record, after) && ListingFilter.matchesFilters(record, f, T0)
  ).sort(inOrder(order)).map((record) => record.id)

const positionOf = (record: Listing.ListingRecord, order: ListQuery.ListOrder): Cursor.CursorPosition =>
  order === "id" ? { order, id: record.id } : { order, discoveredAt: record.discoveredAt, id: record.id }

describe("filter columns", () => {
  it("ids are numbers in the ids' byte order", () => {
    fc.assert(fc.property(fc.stringMatching(/^[0-9A-Za-z]{8}$/), fc.stringMatching(/^[0-9A-Za-z]{8}$/), (a, b) => {
      assert.strictEqual(idText(idNumber(a)), a)
      assert.strictEqual(Math.sign(idNumber(a) - idNumber(b)), a < b ? -1 : a > b ? 1 : 0)
    }))
    assert.isNaN(idNumber("short"))
    assert.isNaN(idNumber("abc-defg"))
  })

  it("a scan finds exactly the listings the filters keep, in either order, from any position", () => {
    fc.assert(fc.property(
      fc.array(listing, { maxLength: 60 }),
      fc.array(listing, { maxLength: 20 }),
      filters,
      fc.constantFrom("id" as const, "latest" as const),
      fc.nat(),
      fc.integer({ min: -4, max: 4 }),
      fc.integer({ min: 1, max: 30 }),
      (loaded, written, f, order, start, visibleMinutes, wanted) => {
        // Loaded in ascending id, then the writes applied, as the store's columns are kept.
        const first = current(loaded)
        const loader = FilterColumns.loader(first.length)
        for (const record of [...first].sort(inOrder("id"))) {
          if (record.status === "active") assert.isTrue(loader.add(columnRow(record)))
        }
        const columns = loader.done().apply(written.map(columnRow))
        const records = current([...first, ...written])
        const visibleBefore = T0 + visibleMinutes * MINUTE
        const all = expected(records, f, order, undefined, visibleBefore)
        const anchor = records.find((record) => record.id === all[start % Math.max(1, all.length)])
        const after = anchor === undefined ? undefined : positionOf(anchor, order)
        const scan = columns.scan(order, after, wanted, columns.test(f, T0, visibleBefore))
        const page = expected(records, f, order, after, visibleBefore)
        assert.deepStrictEqual(scan.ids, page.slice(0, wanted))
        if (scan.exhausted) assert.isAtMost(page.length, wanted)
      }
    ), { numRuns: 400 })
  })

  it("instants between minutes are held coarser: a scan keeps every row the exact instant keeps", () => {
    fc.assert(fc.property(
      fc.array(fc.tuple(listing, fc.integer({ min: 1, max: MINUTE - 1 }), fc.integer({ min: 1, max: MINUTE - 1 })), { maxLength: 40 }),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: -3 * MINUTE, max: 3 * MINUTE }),
      (rows, checkedDays, visible) => {
        const records = current(rows.map(([record, discovered, checked]) => ({
          ...record,
          status: "active" as const,
          discoveredAt: record.discoveredAt + discovered,
          availabilityCheckedAt: record.availabilityCheckedAt === null ? null : record.availabilityCheckedAt - checked
        })))
        const loader = FilterColumns.loader(records.length)
        for (const record of [...records].sort(inOrder("id"))) loader.add(columnRow(record))
        const columns = loader.done()
        const f = { checkedDays }
        for (const order of ["id", "latest"] as const) {
          const scan = columns.scan(order, undefined, records.length, columns.test(f, T0, T0 + visible))
          const kept = expected(records, f, order, undefined, T0 + visible)
          assert.includeMembers(scan.ids, kept)
        }
      }
    ))
  })

  it("a column of more than 253 values passes its overflow to every filter on it", () => {
    const loader = FilterColumns.loader(300)
    for (let i = 0; i < 300; i++) {
      const record: Listing.ListingRecord = {
        ...Fixtures.listingInput(`T${String(i).padStart(7, "0")}`, { domain: `n${i}.tld${i}` }),
        status: "active",
        updatedAt: T0
      }
      loader.add(columnRow(record))
    }
    const columns = loader.done()
    const found = (i: number) => columns.scan("id", undefined, 300, columns.test({ tld: Masking.tldOf(`n${i}.tld${i}`) }, T0, T0)).ids
    const overflow = Array.from({ length: 300 - 253 }, (_, i) => `T${String(253 + i).padStart(7, "0")}`)
    // Past the 253rd value, every row is a candidate for any value: its statement decides.
    assert.deepStrictEqual(found(7), ["T0000007", ...overflow])
    assert.deepStrictEqual(found(299), overflow)
  })
})

/** Every filtered page through the columns, whatever its density, the columns loaded before it is read. */
const throughColumns = SqlListingStore.layerWith({ syncLagSeconds: 120, filterColumns: { sparseRows: 0, awaitLoad: true } })

StoreContract.suite("sql (pglite, filter columns)", Layer.merge(StoreSql.layerStores, throughColumns).pipe(Layer.provideMerge(pgliteClient)))

afterAll(closePglite)

describeOnServer("sql (server, filter columns)", (databaseUrl) => {
  StoreContract.suite(
    "sql (server, filter columns)",
    Layer.merge(StoreSql.layerStores, throughColumns).pipe(Layer.provideMerge(serverClient(databaseUrl)))
  )
})

/*
 * Writes after the columns loaded: the page's statement reads what was written since their
 * watermark, so a page is exact before the columns catch up, and when more was written than it
 * reads, or candidates stopped matching, the page is still whole.
 */
const afterLoad = (name: string, stores: Layer.Layer<StoreSql.Services>) =>
  describe(`${name}: pages through the filter columns after writes`, () => {
    const spam = (id: string, value: "low" | "moderate", discoveredAt = T0) => Fixtures.listingInput(id, { spam: value, discoveredAt })
    const request = (filters: ListQuery.ListFilters, order: ListQuery.ListOrder = "id", limit = 50): ListingStore.PageRequest => ({
      order,
      after: undefined,
      limit,
      filters,
      visibleBefore: T0 + 365 * 86_400_000,
      since: undefined,
      now: T0,
      reader: { at: T0, revealsOf: undefined }
    })
    const ids = (count: number, prefix: string) => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(7 - prefix.length + 1, "0")}`)

    it.live("a row written after they loaded is on the page; one changed or delisted since is not", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore.ListingStore
        yield* store.upsert(ids(20, "A").map((id) => spam(id, "low")))
        yield* store.upsert([spam("M0000001", "moderate"), spam("M0000002", "moderate")])
        assert.deepStrictEqual((yield* store.page(request({ spam: "moderate" }))).rows.map((row) => row.id), ["M0000001", "M0000002"])
        yield* store.upsert([spam("M0000003", "moderate"), spam("M0000001", "low")])
        yield* store.delist(["M0000002" as Ids.ListingId], "sold")
        assert.deepStrictEqual((yield* store.page(request({ spam: "moderate" }))).rows.map((row) => row.id), ["M0000003"])
      }).pipe(Effect.provide(stores)))

    it.live("more rows written since than a page's statement reads: the page is read alone, and whole", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore.ListingStore
        yield* store.upsert([spam("A0000001", "low")])
        assert.deepStrictEqual((yield* store.page(request({ spam: "moderate" }))).rows, [])
        const written = ids(2_100, "B")
        yield* store.upsert(written.map((id) => spam(id, "moderate")))
        const page = yield* store.page(request({ spam: "moderate" }, "id", 250))
        assert.deepStrictEqual(page.rows.map((row) => row.id), written.slice(0, 250))
        assert.isTrue(page.hasMore)
        const last = yield* store.page({ ...request({ spam: "moderate" }, "id", 250), after: { order: "id", id: written[2_049]! as Ids.ListingId } })
        assert.deepStrictEqual(last.rows.map((row) => row.id), written.slice(2_050))
        assert.isFalse(last.hasMore)
      }).pipe(Effect.provide(stores)))

    it.live("candidates that stopped matching: the columns are asked for more, the page is whole, in both orders", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore.ListingStore
        const rows = ids(60, "C")
        yield* store.upsert(rows.map((id, i) => spam(id, "moderate", T0 - i * 1_000)))
        for (const order of ["id", "latest"] as const) {
          assert.strictEqual((yield* store.page(request({ spam: "moderate" }, order, 10))).rows.length, 10)
        }
        // The first 30 in each order no longer match; the columns still hold them as they were.
        yield* store.upsert(rows.slice(0, 30).map((id, i) => spam(id, "low", T0 - i * 1_000)))
        for (const order of ["id", "latest"] as const) {
          const page = yield* store.page(request({ spam: "moderate" }, order, 10))
          assert.deepStrictEqual(page.rows.map((row) => row.id), rows.slice(30, 40))
          assert.isTrue(page.hasMore)
        }
      }).pipe(Effect.provide(stores)))
  })

afterLoad("sql (pglite)", Layer.merge(StoreSql.layerStores, throughColumns).pipe(Layer.provideMerge(pgliteClient)))

describeOnServer("sql (server)", (databaseUrl) => {
  afterLoad("sql (server)", Layer.merge(StoreSql.layerStores, throughColumns).pipe(Layer.provideMerge(serverClient(databaseUrl))))
})
