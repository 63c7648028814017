import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ListingId } from "../../domain/Ids.ts"
import { matchesFilters, searchText } from "../../domain/ListingFilter.ts"
import type { ListFilters } from "../../domain/ListQuery.ts"
import { maskHint } from "../../domain/Masking.ts"
import { DAY, HOUR } from "../../domain/Time.ts"
import { ListingStore, type PageRequest } from "../../ports/ListingStore.ts"
import { listingInput, variedListings } from "../fixtures.ts"
import { type Run, T0 } from "./Stores.ts"

export const pageRequest = (overrides: Partial<PageRequest> = {}): PageRequest => ({
  order: "id",
  after: undefined,
  limit: 250,
  filters: {},
  visibleBefore: T0 + 365 * DAY,
  since: undefined,
  now: T0,
  reader: { at: T0, revealsOf: undefined },
  ...overrides
})

/** Every filter alone and a few together: each store must return exactly what `matchesFilters` keeps. */
const filterCases: ReadonlyArray<ListFilters> = [
  {},
  { ageMin: 7 },
  { categories: ["tech"] },
  { categories: ["food", "travel"] },
  { checkedDays: 3 },
  { citabilityMin: 20 },
  { featured: true },
  { featured: false },
  { priceRange: "under-100" },
  { priceRange: "100-249" },
  { priceRange: "250-999" },
  { priceRange: "1000-2499" },
  { priceRange: "2500-plus" },
  { q: "espresso" },
  { q: "COFFEE beans" },
  { q: "shop" },
  { referringDomainBands: ["5-9", "1000+"] },
  { recommended: true },
  { rsMin: 50 },
  { rsMax: 49 },
  { rsMin: 20, rsMax: 79 },
  { rsMin: 35, rsMax: 100 },
  { recommended: true, rsMax: 69 },
  // Filter sets no score can pass: no published range ends below 9, or lies inside 81-83.
  { rsMax: 5 },
  { rsMin: 81, rsMax: 83 },
  { recommended: true, rsMax: 14 },
  { sources: ["auction"] },
  { spam: "moderate" },
  { openTierOnly: true },
  { tld: "co.uk" },
  { tld: "com", spam: "low", featured: false },
  { q: "hosting", rsMin: 10, openTierOnly: true },
  // Values no listing carries, with quotes, spaces and backslashes: matched as text, never as syntax.
  { tld: "o'reilly" },
  { categories: ["it's", "tech"] },
  { sources: ["a b\\", "auction"], spam: "low" }
]

/** The listing store's pages: order, keyset positions, filters, the access delay and since runs. */
export const pages = (run: Run) => {
  it.live("pages by ascending id with a keyset position and an exact has_more", () =>
    run(Effect.gen(function*() {
      const store = yield* ListingStore
      yield* store.upsert(variedListings(30))
      const seen: Array<string> = []
      let after: PageRequest["after"]
      for (let i = 0; i < 10; i++) {
        const page = yield* store.page(pageRequest({ limit: 7, after }))
        seen.push(...page.rows.map((row) => row.id))
        const last = page.rows[page.rows.length - 1]
        if (!page.hasMore) break
        after = { order: "id", id: last!.id }
      }
      assert.deepStrictEqual(seen, [...seen].sort())
      assert.strictEqual(new Set(seen).size, 30)
    })))

  it.live("sort=latest pages newest discovered_at first, ties broken by ascending id", () =>
    run(Effect.gen(function*() {
      const store = yield* ListingStore
      const inputs = variedListings(30)
      yield* store.upsert(inputs)
      const expected = [...inputs]
        .sort((a, b) => b.discoveredAt - a.discoveredAt || (a.id < b.id ? -1 : 1))
        .map((row) => row.id)
      const seen: Array<string> = []
      let after: PageRequest["after"]
      for (let i = 0; i < 10; i++) {
        const page = yield* store.page(pageRequest({ order: "latest", limit: 4, after }))
        seen.push(...page.rows.map((row) => row.id))
        const last = page.rows[page.rows.length - 1]
        if (!page.hasMore) break
        after = { order: "latest", discoveredAt: last!.discoveredAt, id: last!.id }
      }
      assert.deepStrictEqual(seen, expected)
    })))

  it.live("every filter keeps exactly the rows the reference semantics keep", () =>
    run(Effect.gen(function*() {
      const store = yield* ListingStore
      const inputs = variedListings(60)
      yield* store.upsert(inputs)
      for (const filters of filterCases) {
        const page = yield* store.page(pageRequest({ filters }))
        const stored = yield* Effect.forEach(inputs, (input) => store.find(input.id))
        const expected = stored
          .filter((row) => row !== undefined && matchesFilters(row, filters, T0))
          .map((row) => row!.id)
          .sort()
        assert.deepStrictEqual(page.rows.map((row) => row.id), expected, JSON.stringify(filters))
      }
    })))

  it.live("q searches the mask hint, tags, category and blurb, never the real name", () =>
    run(Effect.gen(function*() {
      const store = yield* ListingStore
      yield* store.upsert([
        listingInput("QQQQQQQ1", { domain: "zebracrossing.com", maskHint: maskHint("zebracrossing.com"), tags: [], blurb: null, category: null })
      ])
      const stored = (yield* store.find("QQQQQQQ1" as ListingId))!
      assert.isFalse(searchText(stored).includes("zebra"))
      const byName = yield* store.page(pageRequest({ filters: { q: "zebra" } }))
      assert.deepStrictEqual(byName.rows, [])
      const byHint = yield* store.page(pageRequest({ filters: { q: "crossing" } }))
      assert.deepStrictEqual(byHint.rows.map((row) => row.id), ["QQQQQQQ1"])
      const wildcard = yield* store.page(pageRequest({ filters: { q: "%" } }))
      assert.deepStrictEqual(wildcard.rows, [])
      // No listing holds U+0000 (imports refuse it), so a term with it matches nothing.
      const nul = yield* store.page(pageRequest({ filters: { q: "crossing \u0000" } }))
      assert.deepStrictEqual(nul.rows, [])
    })))

  it.live("the access delay hides rows discovered after visibleBefore", () =>
    run(Effect.gen(function*() {
      const store = yield* ListingStore
      yield* store.upsert([
        listingInput("VVVVVVV1", { discoveredAt: T0 - 2 * DAY }),
        listingInput("VVVVVVV2", { discoveredAt: T0 - HOUR })
      ])
      const page = yield* store.page(pageRequest({ visibleBefore: T0 - DAY }))
      assert.deepStrictEqual(page.rows.map((row) => row.id), ["VVVVVVV1"])
    })))

  it.live("a since run returns changed rows and tombstones, never drafts, by id", () =>
    run(Effect.gen(function*() {
      const store = yield* ListingStore
      yield* store.upsert([
        listingInput("SSSSSSS3"),
        listingInput("SSSSSSS1"),
        listingInput("SSSSSSS2", { status: "draft" }),
        listingInput("SSSSSSS4")
      ])
      yield* store.delist(["SSSSSSS4" as ListingId], "delisted")
      const since = Math.min(...(yield* Effect.forEach(["SSSSSSS1", "SSSSSSS3", "SSSSSSS4"], (id) =>
        Effect.map(store.find(id as ListingId), (row) => row!.updatedAt))))
      const page = yield* store.page(pageRequest({ since }))
      assert.deepStrictEqual(page.rows.map((row) => [row.id, row.status]), [
        ["SSSSSSS1", "active"],
        ["SSSSSSS3", "active"],
        ["SSSSSSS4", "delisted"]
      ])
      const later = yield* store.page(pageRequest({ since: Date.now() + DAY }))
      assert.deepStrictEqual(later.rows, [])
      // The earliest instant a caller can write (year 0000) is a since like any other.
      const earliest = yield* store.page(pageRequest({ since: Date.parse("0000-01-01T00:00:00.000Z"), limit: 250 }))
      for (const id of ["SSSSSSS1", "SSSSSSS3", "SSSSSSS4"]) assert.include(earliest.rows.map((row) => row.id), id)
      const plain = yield* store.page(pageRequest())
      assert.deepStrictEqual(plain.rows.map((row) => row.id), ["SSSSSSS1", "SSSSSSS3"])
      // Filters no active row can pass still leave a since run its tombstones.
      const none = yield* store.page(pageRequest({ since, filters: { rsMax: 5 } }))
      assert.deepStrictEqual(none.rows.map((row) => [row.id, row.status]), [["SSSSSSS4", "delisted"]])
    })))

  it.live("every page says whether its cursor's anchor exists, as find says, tombstones included", () =>
    run(Effect.gen(function*() {
      const store = yield* ListingStore
      yield* store.upsert(["ANC00001", "ANC00002", "ANC00003"].map((id) => listingInput(id as ListingId)))
      yield* store.delist(["ANC00002" as ListingId], "sold")
      const expected: Record<string, boolean> = { ANC00000: false, ANC00001: true, ANC00002: true, ANC00003: true, ANC00009: false }
      for (const [anchor, exists] of Object.entries(expected)) {
        assert.strictEqual((yield* store.find(anchor as ListingId)) !== undefined, exists, anchor)
        for (const since of [undefined, T0 - 400 * DAY]) {
          // ANC00003 and ANC00009 leave an empty page: the answer cannot ride on a row.
          const page = yield* store.page(pageRequest({ after: { order: "id", id: anchor as ListingId }, since }))
          assert.strictEqual(page.anchorExists, exists, `${anchor} since=${since}`)
        }
      }
      assert.isTrue((yield* store.page(pageRequest())).anchorExists)
    })))
}
