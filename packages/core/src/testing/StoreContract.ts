import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, type Layer } from "effect"
import fc from "fast-check"
import type { Allowance } from "../domain/RevealLedger.ts"
import * as Errors from "../domain/errors.ts"
import * as Hold from "../domain/Hold.ts"
import { ABANDONED_AFTER_MS, type BeginDecision, RETENTION_MS } from "../domain/Idempotency.ts"
import type { ListingId } from "../domain/Ids.ts"
import type { ListingRecord } from "../domain/Listing.ts"
import { matchesFilters, searchText } from "../domain/ListingFilter.ts"
import type { ListFilters } from "../domain/ListQuery.ts"
import { maskHint } from "../domain/Masking.ts"
import { Plans } from "../domain/Plan.ts"
import { DAY, HOUR } from "../domain/Time.ts"
import { AccountStore } from "../ports/AccountStore.ts"
import { HoldStore } from "../ports/HoldStore.ts"
import { IdempotencyStore } from "../ports/IdempotencyStore.ts"
import { KeyStore } from "../ports/KeyStore.ts"
import { ListingStore, type PageRequest, type SnapshotChunk } from "../ports/ListingStore.ts"
import { RevealStore } from "../ports/RevealStore.ts"
import { listingInput, variedListings } from "./fixtures.ts"

export type Stores = ListingStore | RevealStore | HoldStore | AccountStore | KeyStore | IdempotencyStore

const T0 = Date.UTC(2026, 5, 1, 12)
const pro = Plans.pro

const pageRequest = (overrides: Partial<PageRequest> = {}): PageRequest => ({
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

/**
 * The contract every storage adapter honours, written once and run by each adapter's tests
 * with its own layer. The layer is built afresh for every test.
 */
export const suite = (name: string, layer: Layer.Layer<Stores>) => {
  const run = <A, E>(effect: Effect.Effect<A, E, Stores>) => Effect.provide(effect, layer)

  describe(`${name}: listings`, () => {
    it.live("upsert inserts, then updates without rewriting discovered_at, and stamps updated_at", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        const first = yield* store.upsert([listingInput("AAAAAAA1"), listingInput("AAAAAAA2")])
        assert.deepStrictEqual(first, { inserted: 2, updated: 0 })
        const before = (yield* store.find("AAAAAAA1" as ListingId))!
        const second = yield* store.upsert([
          listingInput("AAAAAAA1", { discoveredAt: T0, blurb: "changed" }),
          listingInput("AAAAAAA3")
        ])
        assert.deepStrictEqual(second, { inserted: 1, updated: 1 })
        const after = (yield* store.find("AAAAAAA1" as ListingId))!
        assert.strictEqual(after.blurb, "changed")
        assert.strictEqual(after.discoveredAt, before.discoveredAt)
        assert.isTrue(after.updatedAt >= before.updatedAt)
        assert.strictEqual(yield* store.find("aaaaaaa1" as ListingId), undefined)
      })))

    it.live("keeps every field of a record as written", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        const input = variedListings(6)[5]!
        yield* store.upsert([input])
        const { updatedAt, ...stored } = (yield* store.find(input.id))!
        assert.isNumber(updatedAt)
        assert.deepStrictEqual(stored, input)
      })))

    it.live("delist turns rows into tombstones once and reports only what changed", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        yield* store.upsert([listingInput("DDDDDDD1"), listingInput("DDDDDDD2")])
        const changed = yield* store.delist(["DDDDDDD1" as ListingId, "NOSUCHID" as ListingId], "sold")
        assert.deepStrictEqual<ReadonlyArray<string>>(changed, ["DDDDDDD1"])
        assert.strictEqual((yield* store.find("DDDDDDD1" as ListingId))!.status, "sold")
        assert.deepStrictEqual(yield* store.delist(["DDDDDDD1" as ListingId], "blocked"), [])
        const page = yield* store.page(pageRequest())
        assert.deepStrictEqual(page.rows.map((row) => row.id), ["DDDDDDD2"])
      })))

    it.live("delist takes draft and blocked rows too, as the port says, and leaves sold and delisted ones alone", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        yield* store.upsert([
          listingInput("DBLOCKED", { status: "blocked" }),
          listingInput("DDRAFTED", { status: "draft" }),
          listingInput("DSOLDOUT")
        ])
        yield* store.delist(["DSOLDOUT" as ListingId], "sold")
        const changed = yield* store.delist(["DBLOCKED", "DDRAFTED", "DSOLDOUT"] as Array<ListingId>, "delisted")
        assert.deepStrictEqual<ReadonlyArray<string>>([...changed].sort(), ["DBLOCKED", "DDRAFTED"])
        assert.strictEqual((yield* store.find("DBLOCKED" as ListingId))!.status, "delisted")
        assert.strictEqual((yield* store.find("DDRAFTED" as ListingId))!.status, "delisted")
        assert.strictEqual((yield* store.find("DSOLDOUT" as ListingId))!.status, "sold")
      })))

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

    it.live("keeps the largest figures an import accepts exactly", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        const int32 = 2 ** 31 - 1
        const edges = {
          estimatedValueCents: Number.MAX_SAFE_INTEGER,
          ageYears: int32,
          backlinks: Number.MAX_SAFE_INTEGER,
          referringDomains: Number.MAX_SAFE_INTEGER,
          snapshots: Number.MAX_SAFE_INTEGER,
          agentCitability: { score: int32, sources: [] },
          featuredRank: -int32 - 1
        }
        yield* store.upsert([listingInput("EDGEEDG1", edges), listingInput("EDGEEDG2", { featuredRank: int32 })])
        const stored = (yield* store.find("EDGEEDG1" as ListingId))!
        assert.deepStrictEqual(
          {
            estimatedValueCents: stored.estimatedValueCents,
            ageYears: stored.ageYears,
            backlinks: stored.backlinks,
            referringDomains: stored.referringDomains,
            snapshots: stored.snapshots,
            agentCitability: stored.agentCitability,
            featuredRank: stored.featuredRank
          },
          edges
        )
        assert.strictEqual((yield* store.find("EDGEEDG2" as ListingId))!.featuredRank, int32)
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
      })))

    it.live("pruning deletes exactly the tombstones last changed before a time; an id imported again after is a new row", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        const find = (id: string) => Effect.map(store.find(id as ListingId), (row) => row!)
        yield* store.upsert([
          listingInput("PRUNE001", { discoveredAt: T0 - 90 * DAY }),
          listingInput("PRUNE002"),
          listingInput("PRUNE003", { status: "draft" }),
          listingInput("PRUNE004", { status: "blocked" }),
          listingInput("PRUNE005")
        ])
        yield* store.delist(["PRUNE001" as ListingId], "sold")
        // Stamps are milliseconds of the store's clock: the second delisting is strictly later.
        yield* Effect.sleep(5)
        yield* store.delist(["PRUNE002" as ListingId], "delisted")
        const cutoff = (yield* find("PRUNE002")).updatedAt
        const active = yield* find("PRUNE005")
        assert.isTrue(active.updatedAt < cutoff)
        assert.strictEqual(yield* store.pruneTombstones(cutoff), 2)
        assert.strictEqual(yield* store.find("PRUNE001" as ListingId), undefined)
        assert.strictEqual(yield* store.find("PRUNE004" as ListingId), undefined)
        // The tombstone changed at the cutoff itself stays; active and draft rows stay, however old.
        assert.strictEqual((yield* find("PRUNE002")).status, "delisted")
        assert.strictEqual((yield* find("PRUNE003")).status, "draft")
        assert.deepStrictEqual(yield* find("PRUNE005"), active)
        assert.strictEqual(yield* store.pruneTombstones(cutoff), 0)
        const since = yield* store.page(pageRequest({ since: 0 }))
        assert.deepStrictEqual(since.rows.map((row) => row.id), ["PRUNE002", "PRUNE005"])
        // Imported again, a pruned id is inserted afresh: its discovered_at is the import's.
        const again = yield* store.upsert([listingInput("PRUNE001", { discoveredAt: T0 })])
        assert.deepStrictEqual(again, { inserted: 1, updated: 0 })
        const back = yield* find("PRUNE001")
        assert.strictEqual(back.status, "active")
        assert.strictEqual(back.discoveredAt, T0)
        assert.isTrue(back.updatedAt >= cutoff)
        // A tombstone not yet pruned comes back as the same row: its discovered_at is kept.
        yield* store.upsert([listingInput("PRUNE002", { discoveredAt: T0 })])
        assert.strictEqual((yield* find("PRUNE002")).discoveredAt, listingInput("PRUNE002").discoveredAt)
      })))

    it.live("pruning keeps every row but the tombstones before its time, in any history of imports and delistings", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        const touched = new Set<string>()
        let round = 0
        const statuses = ["active", "draft", "blocked", "sold", "delisted"] as const
        const step = fc.record({ slot: fc.integer({ min: 0, max: 3 }), status: fc.constantFrom(...statuses) })
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), fc.nat(), fc.boolean(), async (steps, pick, past) => {
              round++
              await Effect.runPromise(Effect.gen(function*() {
                for (const { slot, status } of steps) {
                  const id = `PR${String(round).padStart(3, "0")}${slot}AA`.slice(0, 8)
                  touched.add(id)
                  if (status === "sold" || status === "delisted") yield* store.delist([id as ListingId], status)
                  else yield* store.upsert([listingInput(id, { status })])
                }
                const before = new Map<string, ListingRecord>()
                for (const id of touched) {
                  const row = yield* store.find(id as ListingId)
                  if (row !== undefined) before.set(id, row)
                }
                const stamps = [...before.values()].map((row) => row.updatedAt).sort((a, b) => a - b)
                // A history of delistings alone of ids never imported leaves no row: any cutoff then.
                const cutoff = stamps.length === 0 ? Date.now() : stamps[pick % stamps.length]! + (past ? 1 : 0)
                const doomed = [...before.values()].filter((row) =>
                  (row.status === "sold" || row.status === "blocked" || row.status === "delisted") && row.updatedAt < cutoff
                )
                assert.strictEqual(yield* store.pruneTombstones(cutoff), doomed.length)
                for (const [id, row] of before) {
                  const after = yield* store.find(id as ListingId)
                  if (doomed.includes(row)) assert.strictEqual(after, undefined, `${id} should be pruned`)
                  else assert.deepStrictEqual(after, row, `${id} should stay as it was`)
                }
              }))
            }),
            { numRuns: 12 }
          )
        )
      })))

    it.live("synced_at trails the clock by at least 120 seconds", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        const before = Date.now()
        const syncedAt = yield* store.syncedAt
        assert.isTrue(syncedAt <= Date.now() - 120_000 + 1_000, `${syncedAt} vs ${before}`)
        assert.isTrue(syncedAt >= before - 125_000 - 5_000)
      })))

    it.live("every page says exactly what the hold and reveal stores say of its rows, on either kind of run", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        const holds = yield* HoldStore
        const reveals = yield* RevealStore
        const ids = ["RDR00001", "RDR00002", "RDR00003", "RDR00004", "RDR00005", "RDR00006", "RDR00007"] as Array<ListingId>
        yield* store.upsert(ids.map((id) => listingInput(id)))
        const running = yield* holds.acquire({ accountId: "holder", listingId: ids[0]!, plan: pro, now: T0 })
        const ended = yield* holds.acquire({ accountId: "holder", listingId: ids[1]!, plan: pro, now: T0 })
        yield* holds.end({ accountId: "holder", holdId: ended.hold.id, now: T0 + 1, outcome: "released" })
        yield* holds.acquire({ accountId: "other", listingId: ids[5]!, plan: pro, now: T0 })
        // The first and last rows among them: a store may look reveals up over a page's span of ids.
        yield* reveals.record({ accountId: "reader", listingId: ids[0]!, at: T0, charge: undefined })
        yield* reveals.record({ accountId: "reader", listingId: ids[2]!, at: T0, charge: undefined })
        yield* reveals.record({ accountId: "reader", listingId: ids[6]!, at: T0, charge: undefined })
        yield* reveals.record({ accountId: "someone", listingId: ids[3]!, at: T0, charge: undefined })
        yield* store.delist([ids[4]!], "sold")
        const expected = (rowIds: ReadonlyArray<string>, at: number, revealsOf: string | undefined) =>
          Effect.gen(function*() {
            return {
              running: yield* holds.runningOn(rowIds, at),
              revealed: revealsOf === undefined ? new Set<string>() : yield* reveals.revealedAmong(revealsOf, rowIds)
            }
          })
        for (const revealsOf of ["reader", "nobody", undefined]) {
          for (const at of [T0 + 2, T0 + 400 * DAY]) {
            const reader = { at, revealsOf }
            const page = yield* store.page(pageRequest({ now: at, reader }))
            const rowIds = page.rows.map((row) => row.id)
            assert.deepStrictEqual({ running: page.running, revealed: page.revealed }, yield* expected(rowIds, at, revealsOf))
            // Paged by cursor, two rows a page, in either order: each page answers for its own rows.
            for (const order of ["id", "latest"] as const) {
              let position: PageRequest["after"]
              for (let i = 0; i < ids.length; i++) {
                const part = yield* store.page(pageRequest({ now: at, reader, order, limit: 2, after: position }))
                const partIds = part.rows.map((row) => row.id)
                assert.deepStrictEqual(
                  { running: part.running, revealed: part.revealed },
                  yield* expected(partIds, at, revealsOf),
                  `${order} ${revealsOf} ${at} ${partIds}`
                )
                const last = part.rows[part.rows.length - 1]
                if (!part.hasMore || last === undefined) break
                position = order === "id" ? { order, id: last.id } : { order, id: last.id, discoveredAt: last.discoveredAt }
              }
            }
            // A since run followed page by page, as a consumer does: every page answers afresh.
            let after: PageRequest["after"]
            const seen: Array<string> = []
            for (let i = 0; i < ids.length + 1; i++) {
              const sincePage = yield* store.page(pageRequest({ now: at, reader, since: T0 - 400 * DAY, limit: 2, after }))
              const sinceIds = sincePage.rows.map((row) => row.id)
              seen.push(...sinceIds)
              assert.deepStrictEqual(
                { running: sincePage.running, revealed: sincePage.revealed },
                yield* expected(sinceIds, at, revealsOf),
                `${revealsOf} ${at} ${sinceIds}`
              )
              if (!sincePage.hasMore) break
              after = { order: "id", id: sinceIds[sinceIds.length - 1] as ListingId }
            }
            assert.deepStrictEqual(seen, ids)
          }
        }
        // Spot checks of what the comparison above relies on.
        const now = yield* store.page(pageRequest({ now: T0 + 2, reader: { at: T0 + 2, revealsOf: "reader" } }))
        assert.deepStrictEqual(now.running.get(ids[0]!), running.hold)
        assert.isFalse(now.running.has(ids[1]!))
        assert.deepStrictEqual([...now.revealed].sort(), [ids[0]!, ids[2]!, ids[6]!])
        const noCeiling = yield* store.page(pageRequest({ now: T0 + 2, reader: { at: T0 + 2, revealsOf: undefined } }))
        assert.deepStrictEqual(noCeiling.revealed, new Set())
        assert.strictEqual(noCeiling.running.size, 2)
      })))

    it.live("a single read says what find, the hold store and the reveal store say of its listing, in one look-up", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        const holds = yield* HoldStore
        const reveals = yield* RevealStore
        const ids = ["ONE00001", "ONE00002", "ONE00003", "ONE00004", "ONE00005"] as Array<ListingId>
        yield* store.upsert(ids.map((id) => listingInput(id)))
        yield* holds.acquire({ accountId: "holder", listingId: ids[0]!, plan: pro, now: T0 })
        const ended = yield* holds.acquire({ accountId: "holder", listingId: ids[1]!, plan: pro, now: T0 })
        yield* holds.end({ accountId: "holder", holdId: ended.hold.id, now: T0 + 1, outcome: "released" })
        yield* reveals.record({ accountId: "reader", listingId: ids[2]!, at: T0, charge: undefined })
        yield* reveals.record({ accountId: "someone", listingId: ids[0]!, at: T0, charge: undefined })
        yield* store.delist([ids[3]!], "sold")
        for (const id of [...ids, "ONE00009" as ListingId]) {
          for (const revealsOf of ["reader", "someone", undefined]) {
            for (const at of [T0 + 2, T0 + 400 * DAY]) {
              const found = yield* store.findForReader(id, { at, revealsOf })
              const listing = yield* store.find(id)
              if (listing === undefined) {
                assert.strictEqual(found, undefined)
                continue
              }
              const revealed = revealsOf === undefined ? false : (yield* reveals.revealedAmong(revealsOf, [id])).has(id)
              assert.deepStrictEqual(found, { listing, running: (yield* holds.runningOn([id], at)).get(id), revealed }, `${id} ${revealsOf} ${at}`)
            }
          }
        }
        // Read all at once, as concurrent requests do (a store may answer them together): each gets its own answer.
        const asked = [...ids, "ONE00009" as ListingId].flatMap((id) => ["reader", "someone", undefined].map((revealsOf) => ({ id, revealsOf })))
        const alone = yield* Effect.forEach(asked, ({ id, revealsOf }) => store.findForReader(id, { at: T0 + 2, revealsOf }))
        const together = yield* Effect.forEach(asked, ({ id, revealsOf }) => store.findForReader(id, { at: T0 + 2, revealsOf }), { concurrency: "unbounded" })
        assert.deepStrictEqual(together, alone)
        // Spot checks of what the comparison relies on.
        assert.isDefined((yield* store.findForReader(ids[0]!, { at: T0 + 2, revealsOf: "reader" }))!.running)
        assert.isTrue((yield* store.findForReader(ids[2]!, { at: T0 + 2, revealsOf: "reader" }))!.revealed)
        assert.isFalse((yield* store.findForReader(ids[2]!, { at: T0 + 2, revealsOf: "someone" }))!.revealed)
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

    it.live("knows which category and source codes no listing in the directory carries, in the order asked", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        yield* store.upsert([
          listingInput("CCCCCCC1", { category: "tech", source: "dropcatch" }),
          listingInput("CCCCCCC2", { category: null, source: null }),
          listingInput("CCCCCCC3", { category: "drafted", source: "drafted", status: "draft" }),
          listingInput("CCCCCCC4", { category: "gone", source: "gone" })
        ])
        yield* store.delist(["CCCCCCC4" as ListingId], "sold")
        assert.deepStrictEqual(yield* store.unknownCodes("category", ["zeta", "tech", "drafted", "gone", "nope"]), [
          "zeta",
          "drafted",
          "gone",
          "nope"
        ])
        assert.deepStrictEqual(yield* store.unknownCodes("source", ["dropcatch", "tech", "drafted", "gone"]), ["tech", "drafted", "gone"])
        assert.deepStrictEqual(yield* store.unknownCodes("source", []), [])
      })))

    it.live("lists the codes listings carry, each once, ascending from a given code, up to a limit", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        assert.deepStrictEqual(yield* store.knownCodes("category", "", 10), [])
        yield* store.upsert([
          listingInput("KKKKKKK1", { category: "travel", source: "pool" }),
          listingInput("KKKKKKK2", { category: "food", source: "auction" }),
          listingInput("KKKKKKK3", { category: "tech", source: "pool" }),
          listingInput("KKKKKKK4", { category: "food", source: null }),
          listingInput("KKKKKKK5", { category: null, source: "manual" }),
          listingInput("KKKKKKK6", { category: "drafted", source: "drafted", status: "draft" }),
          listingInput("KKKKKKK7", { category: "gone", source: "gone" })
        ])
        yield* store.delist(["KKKKKKK7" as ListingId], "blocked")
        assert.deepStrictEqual(yield* store.knownCodes("category", "", 10), ["food", "tech", "travel"])
        assert.deepStrictEqual(yield* store.knownCodes("category", "", 2), ["food", "tech"])
        assert.deepStrictEqual(yield* store.knownCodes("category", "tech", 10), ["tech", "travel"])
        assert.deepStrictEqual(yield* store.knownCodes("category", "techs", 10), ["travel"])
        assert.deepStrictEqual(yield* store.knownCodes("category", "zzz", 10), [])
        assert.deepStrictEqual(yield* store.knownCodes("source", "", 10), ["auction", "manual", "pool"])
        assert.deepStrictEqual(yield* store.knownCodes("source", "b", 1), ["manual"])
      })))

    it.live("a snapshot hands over every active row visible before its bound, once, in chunks of at most chunkSize", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        const visible = Array.from({ length: 23 }, (_, i) => listingInput(`SNAP${String(i).padStart(4, "0")}`))
        yield* store.upsert([
          ...visible,
          listingInput("SNAPLATE", { discoveredAt: T0 + 2 * DAY }),
          listingInput("SNAPDRFT", { status: "draft" }),
          listingInput("SNAPSOLD")
        ])
        yield* store.delist(["SNAPSOLD" as ListingId], "sold")
        const chunks: Array<SnapshotChunk> = []
        yield* store.snapshot({ visibleBefore: T0 + DAY, chunkSize: 5, reader: { at: T0, revealsOf: undefined } }, (chunk) =>
          Effect.sync(() => {
            chunks.push(chunk)
          }))
        assert.isTrue(chunks.every((chunk) => chunk.rows.length >= 1 && chunk.rows.length <= 5))
        const ids = chunks.flatMap((chunk) => chunk.rows.map((row) => row.id))
        assert.deepStrictEqual([...ids].sort(), visible.map((input) => input.id))
        assert.deepStrictEqual(chunks.flatMap((chunk) => chunk.rows).find((row) => row.id === "SNAP0003"), yield* store.find("SNAP0003" as ListingId))
      })))

    it.live("a write committed while a snapshot is read is not in it, not even in part", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        const inputs = Array.from({ length: 30 }, (_, i) => listingInput(`CONS${String(i).padStart(4, "0")}`))
        yield* store.upsert(inputs)
        const rewritten = [inputs[0]!, inputs[14]!, inputs[29]!].map((input) => ({ ...input, blurb: "rewritten" }))
        // The write runs outside the snapshot's context (on SQL: not inside its transaction).
        const outside = yield* Effect.context<never>()
        let writer: Fiber.Fiber<unknown> | undefined
        const seen: Array<string | null> = []
        yield* store.snapshot({ visibleBefore: T0 + DAY, chunkSize: 4, reader: { at: T0, revealsOf: undefined } }, (chunk) =>
          Effect.gen(function*() {
            if (writer === undefined) {
              // A fiber of its own, started from the context outside: a forked one would inherit the transaction.
              writer = Effect.runFork(Effect.provideContext(store.upsert(rewritten), outside))
              // Where the store can take the write meanwhile, it commits before the next chunk; an
              // embedded database with one connection makes it wait for the snapshot instead.
              yield* Effect.ignore(Effect.timeout(Fiber.await(writer), 300))
            }
            for (const row of chunk.rows) if (rewritten.some((input) => input.id === row.id)) seen.push(row.blurb)
          }))
        yield* Fiber.await(writer!)
        assert.strictEqual(seen.length, 3)
        assert.deepStrictEqual(seen, [inputs[0]!.blurb, inputs[14]!.blurb, inputs[29]!.blurb])
        assert.strictEqual((yield* store.find("CONS0014" as ListingId))!.blurb, "rewritten")
      })))

    it.live("stamps availability and backfills only missing masks", () =>
      run(Effect.gen(function*() {
        const store = yield* ListingStore
        yield* store.upsert([
          listingInput("MMMMMMM1", { maskHint: null, domain: "bestcoffeeshop.com" }),
          listingInput("MMMMMMM2", { maskHint: "kept-as-is.com" })
        ])
        const stamped = yield* store.stampAvailability("MMMMMMM2" as ListingId, T0)
        assert.strictEqual(stamped?.availabilityCheckedAt, T0)
        assert.strictEqual(yield* store.stampAvailability("NOSUCHID" as ListingId, T0), undefined)
        assert.strictEqual(yield* store.backfillMasks(maskHint), 1)
        assert.strictEqual((yield* store.find("MMMMMMM1" as ListingId))!.maskHint, "b*********shop.com")
        assert.strictEqual((yield* store.find("MMMMMMM2" as ListingId))!.maskHint, "kept-as-is.com")
        assert.strictEqual(yield* store.backfillMasks(maskHint), 0)
      })))
  })

  describe(`${name}: reveal ledger`, () => {
    const allowance: Allowance = { month: "2026-06", limit: 2 }

    it.live("a first reveal is written once; a repeat returns the original and costs nothing", () =>
      run(Effect.gen(function*() {
        const ledger = yield* RevealStore
        const first = yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL1", at: T0, charge: allowance })
        assert.strictEqual(first._tag, "Recorded")
        const repeat = yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL1", at: T0 + HOUR, charge: allowance })
        assert.deepStrictEqual(repeat, {
          _tag: "Recorded",
          fresh: false,
          entry: { accountId: "a1", listingId: "LLLLLLL1", revealedAt: T0, charged: true }
        })
        assert.strictEqual(yield* ledger.usedIn("a1", "2026-06"), 1)
        assert.strictEqual(yield* ledger.usedIn("a1", "2026-07"), 0)
        assert.strictEqual(yield* ledger.usedIn("a2", "2026-06"), 0)
      })))

    it.live("a spent allowance writes nothing; free reveals never touch it", () =>
      run(Effect.gen(function*() {
        const ledger = yield* RevealStore
        yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL1", at: T0, charge: allowance })
        yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL2", at: T0, charge: allowance })
        const third = yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL3", at: T0, charge: allowance })
        assert.deepStrictEqual(third, { _tag: "AllowanceSpent" })
        assert.strictEqual(yield* ledger.find("a1", "LLLLLLL3"), undefined)
        const free = yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL3", at: T0, charge: undefined })
        assert.isTrue(free._tag === "Recorded" && free.fresh && !free.entry.charged)
        assert.strictEqual(yield* ledger.usedIn("a1", "2026-06"), 2)
        const nextMonth = yield* ledger.record({
          accountId: "a1",
          listingId: "LLLLLLL4",
          at: T0 + 31 * DAY,
          charge: { month: "2026-07", limit: 2 }
        })
        assert.strictEqual(nextMonth._tag, "Recorded")
        assert.deepStrictEqual(
          [...(yield* ledger.revealedAmong("a1", ["LLLLLLL1", "LLLLLLL3", "LLLLLLL9"]))].sort(),
          ["LLLLLLL1", "LLLLLLL3"]
        )
      })))

    it.live("an allowance of nothing charges nothing and writes nothing, though a repeat is still answered", () =>
      run(Effect.gen(function*() {
        const ledger = yield* RevealStore
        const none = { month: "2026-06", limit: 0 }
        assert.deepStrictEqual(yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL1", at: T0, charge: none }), { _tag: "AllowanceSpent" })
        assert.strictEqual(yield* ledger.find("a1", "LLLLLLL1"), undefined)
        assert.strictEqual(yield* ledger.usedIn("a1", "2026-06"), 0)
        yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL2", at: T0, charge: undefined })
        const repeat = yield* ledger.record({ accountId: "a1", listingId: "LLLLLLL2", at: T0 + HOUR, charge: none })
        assert.isTrue(repeat._tag === "Recorded" && !repeat.fresh && repeat.entry.revealedAt === T0)
        assert.strictEqual(yield* ledger.usedIn("a1", "2026-06"), 0)
      })))
  })

  describe(`${name}: holds`, () => {
    const acquire = (accountId: string, listingId: string, now: number, plan = pro) =>
      Effect.gen(function*() {
        const holds = yield* HoldStore
        return yield* holds.acquire({ accountId, listingId, plan, now })
      })

    it.live("one running hold per listing; the holder gets it back unchanged, others are refused", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore
        const { created, hold } = yield* acquire("a1", "HHHHHHH1", T0)
        assert.isTrue(created)
        assert.strictEqual(hold.expiresAt, T0 + 48 * HOUR)
        const again = yield* acquire("a1", "HHHHHHH1", T0 + HOUR)
        assert.deepStrictEqual(again, { hold, created: false })
        const other = yield* Effect.flip(acquire("a2", "HHHHHHH1", T0 + HOUR))
        assert.deepStrictEqual(other, new Errors.HeldByOther({ expiresAt: hold.expiresAt }))
        const running = yield* holds.runningOn(["HHHHHHH1", "HHHHHHH2"], T0 + HOUR)
        assert.deepStrictEqual([...running.keys()], ["HHHHHHH1"])
        assert.strictEqual(yield* holds.countRunning("a1", T0 + HOUR), 1)
      })))

    it.live("the plan's cap counts running holds only", () =>
      run(Effect.gen(function*() {
        for (const listing of ["CAPCAP01", "CAPCAP02", "CAPCAP03"]) yield* acquire("a1", listing, T0)
        const refused = yield* Effect.flip(acquire("a1", "CAPCAP04", T0))
        assert.deepStrictEqual(refused, new Errors.HoldCapReached({ limit: 3 }))
        const afterExpiry = yield* acquire("a1", "CAPCAP04", T0 + 48 * HOUR)
        assert.isTrue(afterExpiry.created)
      })))

    it.live("an expired hold frees the listing for others and puts its holder in cooldown", () =>
      run(Effect.gen(function*() {
        const { hold } = yield* acquire("a1", "EXPIRED1", T0)
        const later = hold.expiresAt
        const taken = yield* acquire("a2", "EXPIRED1", later)
        assert.isTrue(taken.created)
        const holds = yield* HoldStore
        yield* holds.end({ accountId: "a2", holdId: taken.hold.id, now: later + HOUR, outcome: "released" })
        const cooldown = yield* Effect.flip(acquire("a1", "EXPIRED1", later + 2 * HOUR))
        assert.deepStrictEqual(cooldown, new Errors.HoldCooldown({ availableAt: hold.expiresAt + 30 * DAY }))
        const back = yield* acquire("a1", "EXPIRED1", hold.expiresAt + 30 * DAY)
        assert.isTrue(back.created)
      })))

    it.live("ending a hold starts the holder's cooldown and frees the listing at once", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore
        const { hold } = yield* acquire("a1", "ENDED001", T0)
        const ended = yield* holds.end({ accountId: "a1", holdId: hold.id, now: T0 + HOUR, outcome: "registered" })
        assert.strictEqual(Hold.statusAt(ended, T0 + HOUR), "registered")
        assert.strictEqual(ended.endedAt, T0 + HOUR)
        const again = yield* Effect.flip(holds.end({ accountId: "a1", holdId: hold.id, now: T0 + 2 * HOUR, outcome: "released" }))
        assert.deepStrictEqual(again, new Errors.HoldOver({ state: "registered" }))
        const cooldown = yield* Effect.flip(acquire("a1", "ENDED001", T0 + 2 * HOUR))
        assert.deepStrictEqual(cooldown, new Errors.HoldCooldown({ availableAt: T0 + HOUR + 30 * DAY }))
        const other = yield* acquire("a2", "ENDED001", T0 + 2 * HOUR)
        assert.isTrue(other.created)
      })))

    it.live("one extension, counted from the scheduled end; none after the end; only the holder's", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore
        const { hold } = yield* acquire("a1", "EXTEND01", T0)
        const notMine = yield* Effect.flip(holds.extend({ accountId: "a2", holdId: hold.id, now: T0, extensionMs: 24 * HOUR }))
        assert.deepStrictEqual(notMine, new Errors.HoldNotFound({ holdId: hold.id }))
        const extended = yield* holds.extend({ accountId: "a1", holdId: hold.id, now: T0 + HOUR, extensionMs: 24 * HOUR })
        assert.strictEqual(extended.expiresAt, hold.expiresAt + 24 * HOUR)
        assert.isTrue(extended.extended)
        const twice = yield* Effect.flip(holds.extend({ accountId: "a1", holdId: hold.id, now: T0 + 2 * HOUR, extensionMs: 24 * HOUR }))
        assert.deepStrictEqual(twice, new Errors.AlreadyExtended())
        const { hold: second } = yield* acquire("a1", "EXTEND02", T0)
        const over = yield* Effect.flip(holds.extend({ accountId: "a1", holdId: second.id, now: second.expiresAt, extensionMs: 24 * HOUR }))
        assert.deepStrictEqual(over, new Errors.HoldOver({ state: "expired" }))
        const missing = yield* Effect.flip(holds.end({ accountId: "a1", holdId: "h_nosuch", now: T0, outcome: "released" }))
        assert.deepStrictEqual(missing, new Errors.HoldNotFound({ holdId: "h_nosuch" }))
        assert.deepStrictEqual(yield* holds.findOwn("a2", hold.id), undefined)
        assert.strictEqual((yield* holds.findOwn("a1", hold.id))!.id, hold.id)
      })))

    it.live("an id holding the NUL character names no hold (no store can keep one)", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore
        yield* acquire("a1", "NULHOLD1", T0)
        for (const holdId of ["\u0000", "h_\u0000", "h_00000001\u0000"]) {
          assert.strictEqual(yield* holds.findOwn("a1", holdId), undefined)
          const extended = yield* Effect.flip(holds.extend({ accountId: "a1", holdId, now: T0, extensionMs: HOUR }))
          assert.deepStrictEqual(extended, new Errors.HoldNotFound({ holdId }))
          const ended = yield* Effect.flip(holds.end({ accountId: "a1", holdId, now: T0, outcome: "released" }))
          assert.deepStrictEqual(ended, new Errors.HoldNotFound({ holdId }))
        }
      })))

    it.live("an account's holds: running ones and those ended since a given time, newest first", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore
        const old = yield* acquire("a1", "LIST0001", T0 - 40 * DAY)
        const recent = yield* acquire("a1", "LIST0002", T0 - 3 * DAY)
        const running = yield* acquire("a1", "LIST0003", T0 - HOUR)
        yield* acquire("a2", "LIST0004", T0)
        const listed = yield* holds.forAccount("a1", T0 - 30 * DAY, T0)
        assert.deepStrictEqual(listed.map((hold) => hold.id), [running.hold.id, recent.hold.id])
        assert.notInclude(listed.map((hold) => hold.id), old.hold.id)
      })))
  })

  describe(`${name}: idempotency keys`, () => {
    const begin = (accountId: string, key: string, fingerprint: string, now: number) =>
      IdempotencyStore.use((store) => store.begin({ accountId, key, fingerprint, now }))

    it.live("the first request runs; its repeat waits while it runs and replays its answer after; another request is refused", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        assert.deepStrictEqual(yield* begin("a1", "key-1", "hold A", T0), { _tag: "Run" })
        assert.deepStrictEqual(yield* begin("a1", "key-1", "hold A", T0 + 1), { _tag: "Wait" })
        assert.deepStrictEqual(yield* begin("a1", "key-1", "hold B", T0 + 1), { _tag: "Reused" })
        assert.deepStrictEqual(yield* store.find("a1", "key-1"), {
          accountId: "a1",
          key: "key-1",
          fingerprint: "hold A",
          startedAt: T0,
          outcome: null
        })
        assert.isFalse(yield* store.complete({ accountId: "a1", key: "key-1", startedAt: T0 + 1, outcome: "not this run's" }))
        assert.isTrue(yield* store.complete({ accountId: "a1", key: "key-1", startedAt: T0, outcome: "answer" }))
        assert.isFalse(yield* store.complete({ accountId: "a1", key: "key-1", startedAt: T0, outcome: "a second answer" }))
        assert.deepStrictEqual(yield* begin("a1", "key-1", "hold A", T0 + 2), { _tag: "Replay", outcome: "answer" })
        assert.deepStrictEqual(yield* begin("a1", "key-1", "hold B", T0 + 2), { _tag: "Reused" })
        // Keys belong to the account: another account's same key is its own.
        assert.deepStrictEqual(yield* begin("a2", "key-1", "hold B", T0 + 2), { _tag: "Run" })
        assert.strictEqual(yield* store.find("a3", "key-1"), undefined)
      })))

    it.live("an answer is kept exactly as written", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const outcome = `{"z":1,"a":"é\u2028 ü","b":[{"y":null,"x":0.5}]}`
        yield* begin("a1", "exact", "f", T0)
        yield* store.complete({ accountId: "a1", key: "exact", startedAt: T0, outcome })
        assert.strictEqual((yield* store.find("a1", "exact"))!.outcome, outcome)
        assert.deepStrictEqual(yield* begin("a1", "exact", "f", T0 + 1), { _tag: "Replay", outcome })
      })))

    it.live("a released run frees its key; a run that is not the record's, or one answered, releases nothing", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        yield* begin("a1", "released", "f", T0)
        yield* store.release({ accountId: "a1", key: "released", startedAt: T0 - 1 })
        assert.deepStrictEqual(yield* begin("a1", "released", "f", T0 + 1), { _tag: "Wait" })
        yield* store.release({ accountId: "a1", key: "released", startedAt: T0 })
        assert.strictEqual(yield* store.find("a1", "released"), undefined)
        assert.deepStrictEqual(yield* begin("a1", "released", "g", T0 + 2), { _tag: "Run" })
        yield* store.complete({ accountId: "a1", key: "released", startedAt: T0 + 2, outcome: "kept" })
        yield* store.release({ accountId: "a1", key: "released", startedAt: T0 + 2 })
        assert.deepStrictEqual(yield* begin("a1", "released", "g", T0 + 3), { _tag: "Replay", outcome: "kept" })
      })))

    it.live("a run unanswered for over a minute is taken over, and the late answer of the first run is not kept", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        yield* begin("a1", "abandoned", "f", T0)
        assert.deepStrictEqual(yield* begin("a1", "abandoned", "f", T0 + ABANDONED_AFTER_MS), { _tag: "Wait" })
        assert.deepStrictEqual(yield* begin("a1", "abandoned", "g", T0 + ABANDONED_AFTER_MS + 1), { _tag: "Reused" })
        const takeover = T0 + ABANDONED_AFTER_MS + 1
        assert.deepStrictEqual(yield* begin("a1", "abandoned", "f", takeover), { _tag: "Run" })
        assert.isFalse(yield* store.complete({ accountId: "a1", key: "abandoned", startedAt: T0, outcome: "late" }))
        assert.isTrue(yield* store.complete({ accountId: "a1", key: "abandoned", startedAt: takeover, outcome: "second" }))
        assert.deepStrictEqual(yield* begin("a1", "abandoned", "f", takeover + 1), { _tag: "Replay", outcome: "second" })
      })))

    it.live("a key is bound for 24 hours from its start, that instant included; pruning deletes what started before a time", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        yield* begin("a1", "day", "f", T0)
        yield* store.complete({ accountId: "a1", key: "day", startedAt: T0, outcome: "first" })
        assert.deepStrictEqual(yield* begin("a1", "day", "g", T0 + RETENTION_MS), { _tag: "Reused" })
        assert.deepStrictEqual(yield* begin("a1", "day", "g", T0 + RETENTION_MS + 1), { _tag: "Run" })

        yield* begin("a2", "old", "f", T0)
        yield* store.complete({ accountId: "a2", key: "old", startedAt: T0, outcome: "old" })
        yield* begin("a2", "running", "f", T0 + 1)
        yield* begin("a2", "recent", "f", T0 + HOUR)
        assert.strictEqual(yield* store.prune(T0 + 2), 2)
        assert.strictEqual(yield* store.find("a2", "old"), undefined)
        assert.strictEqual(yield* store.find("a2", "running"), undefined)
        assert.strictEqual((yield* store.find("a2", "recent"))!.startedAt, T0 + HOUR)
        assert.strictEqual((yield* store.find("a1", "day"))!.fingerprint, "g")
        assert.strictEqual(yield* store.prune(T0 + 2), 0)
      })))

    it.live("of concurrent requests with one key, exactly one runs: a first one, or one taking over an abandoned or expired run", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const race = (key: string, now: number) =>
          Effect.forEach(Array.from({ length: 20 }, (_, i) => i), () => begin("a1", key, "f", now), { concurrency: "unbounded" })
        const tally = (decisions: ReadonlyArray<BeginDecision>) => ({
          run: decisions.filter((decision) => decision._tag === "Run").length,
          wait: decisions.filter((decision) => decision._tag === "Wait").length
        })
        assert.deepStrictEqual(tally(yield* race("concurrent", T0)), { run: 1, wait: 19 })
        assert.deepStrictEqual(tally(yield* race("concurrent", T0 + ABANDONED_AFTER_MS + 1)), { run: 1, wait: 19 })
        yield* store.complete({ accountId: "a1", key: "concurrent", startedAt: T0 + ABANDONED_AFTER_MS + 1, outcome: "done" })
        assert.deepStrictEqual(tally(yield* race("concurrent", T0 + 2 * RETENTION_MS)), { run: 1, wait: 19 })
      })))

    it.live("follows the rules of idempotency keys in any sequence of requests, answers, faults, time and pruning", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const exec = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)
        interface ModelRecord {
          fingerprint: string
          startedAt: number
          outcome: string | null
        }
        interface Model {
          now: number
          records: Map<string, ModelRecord>
          runs: number
        }
        // The rules, written out plainly: 24 hours bound, one minute to abandon, first request runs.
        const expectedDecision = (model: Model, slot: string, fingerprint: string): BeginDecision => {
          const record = model.records.get(slot)
          if (record === undefined || model.now - record.startedAt > 24 * HOUR) return { _tag: "Run" }
          if (record.fingerprint !== fingerprint) return { _tag: "Reused" }
          if (record.outcome !== null) return { _tag: "Replay", outcome: record.outcome }
          return model.now - record.startedAt > 60_000 ? { _tag: "Run" } : { _tag: "Wait" }
        }
        let round = 0
        type Command = fc.AsyncCommand<Model, { readonly prefix: string }>
        const slotOf = (account: number, key: number) => `${account}:${key}`
        const names = (real: { readonly prefix: string }, account: number, key: number) => ({
          accountId: `${real.prefix}-acct${account}`,
          key: `key-${key}`
        })
        const account = fc.integer({ min: 0, max: 1 })
        const key = fc.integer({ min: 0, max: 1 })
        const commands: Array<fc.Arbitrary<Command>> = [
          fc.record({ account, key, fingerprint: fc.constantFrom("reveal A", "hold A") }).map(({ account, key, fingerprint }): Command => ({
            check: () => true,
            run: async (model, real) => {
              const slot = slotOf(account, key)
              const expected = expectedDecision(model, slot, fingerprint)
              const actual = await exec(store.begin({ ...names(real, account, key), fingerprint, now: model.now }))
              assert.deepStrictEqual(actual, expected, `begin ${slot} ${fingerprint} at ${model.now}`)
              if (expected._tag === "Run") model.records.set(slot, { fingerprint, startedAt: model.now, outcome: null })
            },
            toString: () => `begin(${account}, ${key}, ${fingerprint})`
          })),
          fc.record({ account, key, stale: fc.boolean() }).map(({ account, key, stale }): Command => ({
            check: () => true,
            run: async (model, real) => {
              const slot = slotOf(account, key)
              const record = model.records.get(slot)
              const startedAt = (record?.startedAt ?? model.now) - (stale ? 1 : 0)
              const outcome = `answer ${++model.runs}`
              const owns = record !== undefined && !stale && record.outcome === null
              const kept = await exec(store.complete({ ...names(real, account, key), startedAt, outcome }))
              assert.strictEqual(kept, owns, `complete ${slot}`)
              if (owns) record.outcome = outcome
            },
            toString: () => `complete(${account}, ${key}${stale ? ", stale" : ""})`
          })),
          fc.record({ account, key }).map(({ account, key }): Command => ({
            check: () => true,
            run: async (model, real) => {
              const slot = slotOf(account, key)
              const record = model.records.get(slot)
              if (record === undefined) return
              await exec(store.release({ ...names(real, account, key), startedAt: record.startedAt }))
              if (record.outcome === null) model.records.delete(slot)
            },
            toString: () => `release(${account}, ${key})`
          })),
          fc.constantFrom(1, 30_000, 60_000, 61_000, HOUR, 24 * HOUR, 25 * HOUR).map((ms): Command => ({
            check: () => true,
            run: async (model) => {
              model.now += ms
            },
            toString: () => `advance(${ms})`
          })),
          fc.constant<Command>({
            check: () => true,
            run: async (model, real) => {
              await exec(store.prune(model.now - 24 * HOUR))
              for (const [slot, record] of model.records) {
                if (record.startedAt < model.now - 24 * HOUR) model.records.delete(slot)
              }
              for (const [slot] of model.records) {
                const [account, key] = slot.split(":").map(Number)
                const found = await exec(store.find(names(real, account!, key!).accountId, `key-${key}`))
                assert.isDefined(found, `pruned too much: ${slot}`)
              }
            },
            toString: () => "prune()"
          })
        ]
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.commands(commands, { maxCommands: 30 }), async (sequence) => {
              round++
              const start = T0 + round * 30 * DAY
              await fc.asyncModelRun(
                () => ({ model: { now: start, records: new Map(), runs: 0 }, real: { prefix: `run${round}` } }),
                sequence
              )
            }),
            { numRuns: 40 }
          )
        )
      })))
  })

  describe(`${name}: accounts and keys`, () => {
    it.live("accounts are created, found and moved between plans", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore
        const account = yield* accounts.create({ name: "Acme", plan: "pro", at: T0 })
        assert.deepStrictEqual(yield* accounts.find(account.id), account)
        const lapsed = yield* accounts.setPlan(account.id, "lapsed")
        assert.strictEqual(lapsed.plan, "lapsed")
        assert.strictEqual((yield* accounts.find(account.id))!.plan, "lapsed")
        const missing = yield* Effect.flip(accounts.setPlan("acct_nosuch", "pro"))
        assert.deepStrictEqual(missing, new Errors.AccountNotFound({ accountId: "acct_nosuch" }))
        assert.strictEqual(yield* accounts.find("acct_nosuch"), undefined)
      })))

    it.live("keys: the live ceiling, look-up by digest, touch and revoke", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore
        const keys = yield* KeyStore
        const account = yield* accounts.create({ name: "Acme", plan: "free", at: T0 })
        const make = (n: number) =>
          keys.create({ accountId: account.id, name: `k${n}`, prefix: `ds_live_pref000${n}`, digest: `digest-${n}`, liveLimit: 2, at: T0 })
        const first = yield* make(1)
        yield* make(2)
        assert.deepStrictEqual(yield* Effect.flip(make(3)), new Errors.KeyLimitReached({ limit: 2 }))
        const found = (yield* keys.findByDigest("digest-1"))!
        assert.strictEqual(found.key.id, first.id)
        assert.strictEqual(found.account.id, account.id)
        assert.strictEqual(found.key.lastUsedAt, null)
        yield* keys.touch(first.id, T0 + HOUR)
        assert.strictEqual((yield* keys.findByDigest("digest-1"))!.key.lastUsedAt, T0 + HOUR)
        const revoked = yield* keys.revoke("ds_live_pref0001", T0 + 2 * HOUR)
        assert.strictEqual(revoked.revokedAt, T0 + 2 * HOUR)
        assert.strictEqual((yield* keys.findByDigest("digest-1"))!.key.revokedAt, T0 + 2 * HOUR)
        const third = yield* Effect.exit(make(3))
        assert.isTrue(Exit.isSuccess(third))
        assert.deepStrictEqual(yield* Effect.flip(keys.revoke("ds_live_nosuch00", T0)), new Errors.KeyNotFound({ prefix: "ds_live_nosuch00" }))
        assert.strictEqual(yield* keys.findByDigest("digest-unknown"), undefined)
      })))

    it.live("a key's id is key_ and letters or digits: the rate limiter's other counters cannot share its name", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore
        const keys = yield* KeyStore
        const account = yield* accounts.create({ name: "Ids", plan: "business", at: T0 })
        for (let n = 0; n < 3; n++) {
          const key = yield* keys.create({ accountId: account.id, name: "k", prefix: `dsk_idshape${n}`, digest: `id-digest-${n}`, liveLimit: 10, at: T0 })
          assert.match(key.id, /^key_[A-Za-z0-9]+$/)
        }
      })))

    it.live("whether any unrevoked key's prefix starts with a text, taken literally", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore
        const keys = yield* KeyStore
        const account = yield* accounts.create({ name: "Formats", plan: "business", at: T0 })
        const make = (prefix: string) =>
          keys.create({ accountId: account.id, name: prefix, prefix, digest: `digest-${prefix}`, liveLimit: 10, at: T0 })
        assert.isFalse(yield* keys.anyLiveWithPrefix("ds_live_"))
        // `_` and `%` are LIKE wildcards: a store that matched a pattern would count these.
        yield* make("dsXliveXabcd1234")
        yield* make("ds%live_abcd1234")
        yield* make("dsk_abcd1234")
        assert.isFalse(yield* keys.anyLiveWithPrefix("ds_live_"))
        assert.isTrue(yield* keys.anyLiveWithPrefix("dsk_"))
        yield* make("ds_live_old00001")
        yield* make("ds_live_old00002")
        assert.isTrue(yield* keys.anyLiveWithPrefix("ds_live_"))
        yield* keys.revoke("ds_live_old00001", T0 + 1)
        assert.isTrue(yield* keys.anyLiveWithPrefix("ds_live_"))
        yield* keys.revoke("ds_live_old00002", T0 + 2)
        assert.isFalse(yield* keys.anyLiveWithPrefix("ds_live_"))
        assert.isTrue(yield* keys.anyLiveWithPrefix("dsk_"))
      })))

    it.live("keys that expire: the ceiling counts keys live at the time, rotation retires the old key at the latest by its grace", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore
        const keys = yield* KeyStore
        const account = yield* accounts.create({ name: "Expiring", plan: "free", at: T0 })
        const make = (n: number, at: number, expiresAt: number | null = null) =>
          keys.create({ accountId: account.id, name: `e${n}`, prefix: `dsk_expire0${n}`, digest: `expire-${n}`, liveLimit: 2, at, expiresAt })
        const short = yield* make(1, T0, T0 + HOUR)
        assert.strictEqual(short.expiresAt, T0 + HOUR)
        const lasting = yield* make(2, T0 + 1)
        assert.strictEqual(lasting.expiresAt, null)
        assert.deepStrictEqual(yield* Effect.flip(make(3, T0 + 2)), new Errors.KeyLimitReached({ limit: 2 }))
        // Past its expiry the first key no longer counts against the ceiling.
        const third = yield* make(3, T0 + 2 * HOUR)
        assert.strictEqual((yield* keys.findByPrefix("dsk_expire01"))!.key.expiresAt, T0 + HOUR)
        assert.strictEqual((yield* keys.findByPrefix("dsk_expire01"))!.account.id, account.id)
        assert.strictEqual(yield* keys.findByPrefix("dsk_nosuchkey"), undefined)

        // The account is full (two live keys), yet the key being retired makes room for its successor.
        const at = T0 + 3 * HOUR
        const rotated = yield* keys.rotate({
          prefix: "dsk_expire02",
          successor: { name: "e2", prefix: "dsk_expire04", digest: "expire-4", expiresAt: null },
          liveLimit: 2,
          retireAt: at + DAY,
          at
        })
        assert.strictEqual(rotated.retired.id, lasting.id)
        assert.strictEqual(rotated.retired.expiresAt, at + DAY)
        assert.strictEqual(rotated.retired.revokedAt, null)
        assert.strictEqual(rotated.successor.accountId, account.id)
        assert.strictEqual(rotated.successor.createdAt, at)
        assert.strictEqual((yield* keys.findByDigest("expire-4"))!.key.id, rotated.successor.id)
        // An expired, revoked or unknown key has nothing to rotate.
        const successor = { name: "x", prefix: "dsk_expire05", digest: "expire-5", expiresAt: null }
        assert.deepStrictEqual(
          yield* Effect.flip(keys.rotate({ prefix: "dsk_expire01", successor, liveLimit: 9, retireAt: at, at })),
          new Errors.KeyNotFound({ prefix: "dsk_expire01" })
        )
        yield* keys.revoke("dsk_expire03", at)
        assert.deepStrictEqual(
          yield* Effect.flip(keys.rotate({ prefix: "dsk_expire03", successor, liveLimit: 9, retireAt: at, at })),
          new Errors.KeyNotFound({ prefix: "dsk_expire03" })
        )
        assert.deepStrictEqual(
          yield* Effect.flip(keys.rotate({ prefix: "dsk_nosuchkey", successor, liveLimit: 9, retireAt: at, at })),
          new Errors.KeyNotFound({ prefix: "dsk_nosuchkey" })
        )
        // Over the ceiling even without the retiring key: refused, and nothing written.
        assert.deepStrictEqual(
          yield* Effect.flip(keys.rotate({ prefix: "dsk_expire04", successor, liveLimit: 1, retireAt: at, at })),
          new Errors.KeyLimitReached({ limit: 1 })
        )
        assert.strictEqual(yield* keys.findByDigest("expire-5"), undefined)
        assert.strictEqual((yield* keys.findByPrefix("dsk_expire04"))!.key.expiresAt, null)
        // A rotation never postpones an expiry already set.
        const again = yield* keys.rotate({ prefix: "dsk_expire02", successor, liveLimit: 9, retireAt: at + 2 * DAY, at: at + HOUR })
        assert.strictEqual(again.retired.expiresAt, at + DAY)

        const listed = yield* keys.forAccount(account.id, { after: undefined, limit: 10 })
        assert.deepStrictEqual(listed.map((key) => key.prefix), ["dsk_expire01", "dsk_expire02", "dsk_expire03", "dsk_expire04", "dsk_expire05"])
        assert.strictEqual(listed[2]!.revokedAt, at)
        const second = yield* keys.forAccount(account.id, { after: listed[1]!.id, limit: 2 })
        assert.deepStrictEqual(second.map((key) => key.id), [third.id, rotated.successor.id])
        assert.deepStrictEqual(yield* keys.forAccount("acct_nosuch", { after: undefined, limit: 10 }), [])
        assert.deepStrictEqual(yield* keys.forAccount(account.id, { after: "key_nosuch", limit: 10 }), [])
        assert.isTrue(listed.every((key) => key.digest.startsWith("expire-")))
      })))

    it.live("accounts in creation order, a page at a time after a named account", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore
        const later = T0 + 1000 * DAY
        const made = []
        for (let n = 0; n < 5; n++) made.push(yield* accounts.create({ name: `paged-${n}`, plan: "free", at: later + n }))
        const first = yield* accounts.list({ after: made[0]!.id, limit: 2 })
        assert.deepStrictEqual(first, [made[1], made[2]])
        const rest = yield* accounts.list({ after: made[2]!.id, limit: 10 })
        assert.deepStrictEqual(rest, [made[3], made[4]])
        assert.deepStrictEqual(yield* accounts.list({ after: made[4]!.id, limit: 10 }), [])
        assert.deepStrictEqual(yield* accounts.list({ after: "acct_nosuch", limit: 10 }), [])
        const all = yield* accounts.list({ after: undefined, limit: 1000 })
        assert.deepStrictEqual(all.slice(-5), made)
      })))
  })

  describe(`${name}: operator reads of holds and reveals`, () => {
    it.live("holds of one account or all, running or any, in order of holding, a page at a time", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore
        const acquire = (accountId: string, listingId: string, now: number) =>
          holds.acquire({ accountId, listingId, plan: pro, now }).pipe(Effect.map((result) => result.hold))
        const first = yield* acquire("hl-acct", "OPHOLD01", T0)
        const second = yield* acquire("hl-acct", "OPHOLD02", T0 + 1)
        const other = yield* acquire("hl-other", "OPHOLD03", T0 + 2)
        const ended = yield* holds.end({ accountId: "hl-acct", holdId: first.id, now: T0 + HOUR, outcome: "released" })
        const mine = yield* holds.list({ accountId: "hl-acct", runningAt: undefined }, { after: undefined, limit: 10 })
        assert.deepStrictEqual(mine, [ended, second])
        assert.deepStrictEqual(yield* holds.list({ accountId: "hl-acct", runningAt: T0 + 2 * HOUR }, { after: undefined, limit: 10 }), [second])
        assert.deepStrictEqual(yield* holds.list({ accountId: "hl-acct", runningAt: T0 + 100 * DAY }, { after: undefined, limit: 10 }), [])
        assert.deepStrictEqual(yield* holds.list({ accountId: "hl-acct", runningAt: undefined }, { after: first.id, limit: 10 }), [second])
        const everyone = yield* holds.list({ accountId: undefined, runningAt: T0 + 2 * HOUR }, { after: undefined, limit: 1000 })
        assert.deepStrictEqual(everyone.filter((hold) => hold.listingId.startsWith("OPHOLD")), [second, other])
        const paged = yield* holds.list({ accountId: undefined, runningAt: undefined }, { after: second.id, limit: 1 })
        assert.deepStrictEqual(paged, [other])
      })))

    it.live("an account's reveals in a month, in order of revealing, a page at a time", () =>
      run(Effect.gen(function*() {
        const ledger = yield* RevealStore
        const reveal = (listingId: string, at: number) =>
          ledger.record({ accountId: "rv-acct", listingId, at, charge: undefined })
        yield* reveal("OPREVL02", T0)
        yield* reveal("OPREVL01", T0 + 1)
        yield* reveal("OPREVL03", T0 + 40 * DAY)
        yield* ledger.record({ accountId: "rv-other", listingId: "OPREVL09", at: T0, charge: undefined })
        const june = { from: Date.UTC(2026, 5, 1), to: Date.UTC(2026, 6, 1) }
        const inJune = yield* ledger.forAccount("rv-acct", june, { after: undefined, limit: 10 })
        assert.deepStrictEqual(inJune.map((entry) => entry.listingId), ["OPREVL02", "OPREVL01"])
        assert.deepStrictEqual(inJune[0], { accountId: "rv-acct", listingId: "OPREVL02", revealedAt: T0, charged: false })
        const all = yield* ledger.forAccount("rv-acct", { from: undefined, to: undefined }, { after: "OPREVL02", limit: 1 })
        assert.deepStrictEqual(all.map((entry) => entry.listingId), ["OPREVL01"])
        const rest = yield* ledger.forAccount("rv-acct", { from: undefined, to: undefined }, { after: "OPREVL01", limit: 10 })
        assert.deepStrictEqual(rest.map((entry) => entry.listingId), ["OPREVL03"])
        assert.deepStrictEqual(yield* ledger.forAccount("rv-nobody", june, { after: undefined, limit: 10 }), [])
      })))
  })
}
