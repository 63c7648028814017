import { Bands, type Cursor, type Ids, Listing, ListingFilter, ListingStore, type ListQuery, Masking } from "@dropshelf/core"
import { Fixtures, StoreContract } from "@dropshelf/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { Effect, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as ColumnPages from "../src/ColumnPages.ts"
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
  // Up to 252: a byte holds larger values as "other", which passes every test (a superset).
  ageYears: fc.option(fc.integer({ min: 0, max: 252 }), { nil: null }),
  referringDomains: fc.option(fc.constantFrom(0, 4, 5, 24, 99, 100, 1_200), { nil: null }),
  directoryScore: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
  spam: fc.option(fc.constantFrom("low", "moderate"), { nil: null }),
  linked: fc.boolean(),
  source: fc.option(fc.constantFrom("dropcatch", "auction"), { nil: null }),
  citability: fc.option(fc.integer({ min: 0, max: 252 }), { nil: null }),
  featured: fc.boolean(),
  checkedMinutes: fc.option(fc.integer({ min: -5 * 24 * 60, max: 0 }), { nil: null }),
  tags: fc.subarray(["cloud", "food", "Cloudy"]),
  blurb: fc.constantFrom("A name with history", "good food", "A CLOUD kitchen"),
  // Mostly active: many rows gone make the columns a new copy, and writes in place go untested.
  active: fc.integer({ min: 0, max: 7 }).map((roll) => roll > 0)
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
    availabilityCheckedAt: a.checkedMinutes === null ? null : T0 + a.checkedMinutes * MINUTE,
    tags: a.tags,
    blurb: a.blurb
  }),
  status: a.active ? "active" : "delisted",
  updatedAt: T0
}))

const everyFilter = fc.record({
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
  tld: fc.constantFrom("com", "co.uk", "io", "org"),
  q: fc.constantFrom("cloud", "OO", "food cloud", "kitchen", "history cloudy", "nowhere")
})

/** Up to four filters: more keep almost no row of a few dozen, and every scan would find none. */
const filters: fc.Arbitrary<ListQuery.ListFilters> = everyFilter.chain((all) =>
  fc.subarray(Object.keys(all) as Array<keyof typeof all>, { maxLength: 4 }).map((keys) => Object.fromEntries(keys.map((key) => [key, all[key]])))
)

/**
 * Writes after the load: new rows (the columns are copied with them merged in), or, for
 * `inPlace`, new values of rows held, discovered when they were (written in place).
 */
const writesOf = (held: ReadonlyArray<Listing.ListingRecord>, written: ReadonlyArray<Listing.ListingRecord>, inPlace: boolean) =>
  !inPlace || held.length === 0
    ? written
    : written.map((record, i) => ({ ...record, id: held[i % held.length]!.id, discoveredAt: held[i % held.length]!.discoveredAt }))

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
  linked: record.linkedBy.length > 0,
  searchText: ListingFilter.searchText(record)
})

/** Each search term of `f` held, its rows read from `records` as the store reads them from the database. */
const holdTerms = (columns: FilterColumns, records: ReadonlyArray<Listing.ListingRecord>, f: ListQuery.ListFilters, every: boolean) => {
  for (const term of f.q === undefined ? [] : ListingFilter.searchTerms(f.q)) {
    const ids = records.filter((record) => record.status === "active" && ListingFilter.searchText(record).includes(term))
    columns.addTerm(term, every ? "every" : ids.map((record) => record.id), 8)
  }
}

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
      fc.boolean(),
      (loaded, newValues, f, order, start, visibleMinutes, wanted, inPlace) => {
        // Loaded in ascending id (without search text), its terms read, then the writes applied,
        // as the store's columns are kept.
        const first = current(loaded)
        const loader = FilterColumns.loader(first.length)
        for (const record of [...first].sort(inOrder("id"))) {
          if (record.status === "active") assert.isTrue(loader.add({ ...columnRow(record), searchText: undefined }))
        }
        const loadedColumns = loader.done()
        holdTerms(loadedColumns, first, f, false)
        const written = writesOf(first.filter((record) => record.status === "active"), newValues, inPlace)
        const columns = loadedColumns.apply(written.map(columnRow))
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

  it("a row written in place leaves the bitmaps of its old values for those of its new ones", () => {
    fc.assert(fc.property(
      fc.array(listing, { minLength: 1, maxLength: 40 }),
      fc.array(listing, { minLength: 1, maxLength: 10 }),
      everyFilter.chain((all) => fc.constantFrom(...Object.keys(all) as Array<keyof typeof all>).map((key) => ({ [key]: all[key] }))),
      fc.constantFrom("id" as const, "latest" as const),
      (loaded, newValues, f, order) => {
        const first = current(loaded).map((record) => ({ ...record, status: "active" as const }))
        const loader = FilterColumns.loader(first.length)
        for (const record of [...first].sort(inOrder("id"))) loader.add(columnRow(record))
        const loadedColumns = loader.done()
        holdTerms(loadedColumns, first, f, false)
        const written = writesOf(first, newValues.map((record) => ({ ...record, status: "active" as const })), true)
        const columns = loadedColumns.apply(written.map(columnRow))
        assert.strictEqual(columns, loadedColumns)
        const records = current([...first, ...written])
        const scan = columns.scan(order, undefined, records.length, columns.test(f, T0, T0 + MINUTE))
        assert.deepStrictEqual(scan.ids, expected(records, f, order, undefined, T0 + MINUTE))
      }
    ), { numRuns: 500 })
  })

  it("a row whose discovery moved takes its new place in the newest-first order", () => {
    const at = (id: string, minutes: number): Listing.ListingRecord => ({
      ...Fixtures.listingInput(id, { discoveredAt: T0 + minutes * MINUTE }),
      status: "active",
      updatedAt: T0
    })
    const loader = FilterColumns.loader(2)
    for (const record of [at("A0000001", 0), at("A0000002", 1)]) loader.add(columnRow(record))
    // Later, still before the other: the same place in the order, a new discovery.
    const columns = loader.done().apply([columnRow(at("A0000001", 0.5))])
    const newest = (visibleMinutes: number) => columns.scan("latest", undefined, 10, columns.test({}, T0, T0 + visibleMinutes * MINUTE)).ids
    assert.deepStrictEqual(newest(0.25), [])
    assert.deepStrictEqual(newest(0.5), ["A0000001"])
    assert.deepStrictEqual(newest(1), ["A0000002", "A0000001"])
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

  it("a search term's rows are kept as rows are written, added and delisted, in either order", () => {
    fc.assert(fc.property(
      fc.array(listing, { maxLength: 40 }),
      fc.array(listing, { maxLength: 20 }),
      fc.constantFrom("cloud", "food cloud", "kitchen", "history"),
      fc.constantFrom("id" as const, "latest" as const),
      fc.boolean(),
      (loaded, newValues, q, order, inPlace) => {
        const first = current(loaded)
        const loader = FilterColumns.loader(first.length)
        for (const record of [...first].sort(inOrder("id"))) {
          if (record.status === "active") loader.add({ ...columnRow(record), searchText: undefined })
        }
        const loadedColumns = loader.done()
        holdTerms(loadedColumns, first, { q }, false)
        const written = writesOf(first.filter((record) => record.status === "active"), newValues, inPlace)
        const columns = loadedColumns.apply(written.map(columnRow))
        const records = current([...first, ...written])
        const scan = columns.scan(order, undefined, records.length, columns.test({ q }, T0, T0 + MINUTE))
        assert.deepStrictEqual(scan.ids, expected(records, { q }, order, undefined, T0 + MINUTE))
      }
    ), { numRuns: 300 })
  })

  it("a term held as every row, or one no longer held, keeps every row its other filters keep", () => {
    fc.assert(fc.property(
      fc.array(listing, { maxLength: 40 }),
      filters.filter((f) => f.q !== undefined),
      fc.boolean(),
      (loaded, f, every) => {
        const records = current(loaded).filter((record) => record.status === "active")
        const loader = FilterColumns.loader(records.length)
        for (const record of [...records].sort(inOrder("id"))) loader.add(columnRow(record))
        const columns = loader.done()
        holdTerms(columns, records, f, every)
        // Held up to one term: the others, read first, are no longer held.
        if (!every) columns.addTerm("another", [], 1)
        const { q: _, ...others } = f
        for (const order of ["id", "latest"] as const) {
          const scan = columns.scan(order, undefined, records.length, columns.test(f, T0, T0 + MINUTE))
          assert.deepStrictEqual(scan.ids, expected(records, others, order, undefined, T0 + MINUTE))
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
const throughColumns = SqlListingStore.layerWith({ syncLagSeconds: 120, filterColumns: { ...ColumnPages.DEFAULTS, sparseRows: 0, awaitLoad: true } })

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

    it.live("a row written after they loaded before the page's position, or not yet visible, is not on it", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore.ListingStore
        yield* store.upsert([...ids(20, "A").map((id) => spam(id, "low")), ...ids(3, "M").map((id, i) => spam(id, "moderate", T0 - i * 1_000))])
        const moderate = request({ spam: "moderate" }, "id", 1)
        assert.deepStrictEqual((yield* store.page(moderate)).rows.map((row) => row.id), ["M0000000"])
        // Since the columns loaded: one before each order's position, one discovered after the reader may see it.
        yield* store.upsert([spam("L0000001", "moderate", T0 + 1_000), spam("N0000001", "moderate", T0 + 2 * 365 * 86_400_000)])
        const afterId = yield* store.page({ ...moderate, limit: 50, after: { order: "id", id: "M0000000" as Ids.ListingId } })
        assert.deepStrictEqual(afterId.rows.map((row) => row.id), ["M0000001", "M0000002"])
        const afterLatest = yield* store.page({
          ...request({ spam: "moderate" }, "latest"),
          after: { order: "latest", discoveredAt: T0, id: "M0000000" as Ids.ListingId }
        })
        assert.deepStrictEqual(afterLatest.rows.map((row) => row.id), ["M0000001", "M0000002"])
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

    it.live("a search term's rows read once: rows written since that hold it, or no longer do, are read as they are", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore.ListingStore
        const tagged = (id: string, tag: string, discoveredAt = T0) => Fixtures.listingInput(id, { tags: [tag], discoveredAt })
        yield* store.upsert([...ids(5, "A").map((id, i) => tagged(id, "cloud", T0 - i * 1_000)), ...ids(20, "B").map((id) => tagged(id, "tea"))])
        const page = (order: ListQuery.ListOrder) => Effect.map(store.page(request({ q: "cloud" }, order)), (page) => page.rows.map((row) => row.id))
        assert.deepStrictEqual(yield* page("id"), ids(5, "A"))
        yield* store.upsert([tagged("C0000001", "Cloudless", T0 + 1_000), tagged("A0000000", "tea")])
        assert.deepStrictEqual(yield* page("id"), ["A0000001", "A0000002", "A0000003", "A0000004", "C0000001"])
        assert.deepStrictEqual(yield* page("latest"), ["C0000001", "A0000001", "A0000002", "A0000003", "A0000004"])
      }).pipe(Effect.provide(stores)))

    it.live("on a read replica a page uses them only once it has replayed as far as they were read", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore.ListingStore
        yield* store.upsert([...ids(20, "A").map((id) => spam(id, "low")), spam("M0000001", "moderate")])
        const columns = ColumnPages.make(yield* SqlClient.SqlClient, yield* Scope.Scope, true, { ...ColumnPages.DEFAULTS, sparseRows: 0, awaitLoad: true })
        const page = request({ spam: "moderate" })
        assert.isDefined(yield* columns.narrow(page, 51))
        const readAt = columns.floor(page)
        assert.isUndefined(yield* ColumnPages.onReplica(columns, (floor) => readAt - 1 > floor).narrow(page, 51))
        assert.isDefined(yield* ColumnPages.onReplica(columns, (floor) => readAt + 1 > floor).narrow(page, 51))
      }).pipe(Effect.scoped, Effect.provide(stores)))

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
