import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import fc from "fast-check"
import type { ListingId } from "../../domain/Ids.ts"
import type { ListingRecord } from "../../domain/Listing.ts"
import { maskHint } from "../../domain/Masking.ts"
import { DAY } from "../../domain/Time.ts"
import { ListingStore, type SnapshotChunk } from "../../ports/ListingStore.ts"
import { listingInput, variedListings } from "../fixtures.ts"
import { pageRequest, pages } from "./ListingPages.ts"
import { readers } from "./ListingReaders.ts"
import { type Run, T0 } from "./Stores.ts"

/** The listing store's writes, pruning, codes and snapshots, with its pages and what they answer for a reader. */
export const suite = (name: string, run: Run) => {
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

    pages(run)

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

    readers(run)

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
}
