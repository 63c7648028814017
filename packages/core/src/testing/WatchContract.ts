import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import type { ListingId } from "../domain/Ids.ts"
import { DAY, HOUR } from "../domain/Time.ts"
import { ListingStore } from "../ports/ListingStore.ts"
import { type WatchRecord, WatchStore } from "../ports/WatchStore.ts"
import { listingInput } from "./fixtures.ts"
import { privacyProperty } from "./watch/PrivacyProperty.ts"
import { account, round, sleep, watchOf, webhook, type WatchStores } from "./watch/WatchFixtures.ts"

export type { WatchStores } from "./watch/WatchFixtures.ts"
export { scenarioArbitrary } from "./watch/PrivacyProperty.ts"

/*
 * The watch store's contract, run by every adapter with its own layer (built afresh per test).
 * Listing writes are stamped by the store's clock (the database's, for SQL), so rounds here
 * run at explicit instants from the wall clock on.
 */

export const suite = (name: string, layer: Layer.Layer<WatchStores>, options: { readonly propertyRuns?: number } = {}) => {
  const run = <A, E>(effect: Effect.Effect<A, E, WatchStores>) => Effect.provide(effect, layer)

  describe(`${name}: watches`, () => {
    it.live("keeps each account under its limit and shows an account only its own watches", () =>
      run(Effect.gen(function*() {
        const store = yield* WatchStore
        const a = yield* account("pro")
        const b = yield* account("pro")
        const first = yield* store.create(watchOf(a.id, { name: "one" }), 2)
        yield* store.create(watchOf(a.id, { name: "two" }), 2)
        const refused = yield* Effect.flip(store.create(watchOf(a.id), 2))
        assert.strictEqual(refused._tag, "WatchLimitReached")
        assert.strictEqual(refused.limit, 2)
        yield* store.create(watchOf(b.id), 2)
        assert.deepStrictEqual((yield* store.forAccount(a.id)).map((w) => w.name).sort(), ["one", "two"])
        assert.strictEqual(yield* store.find(b.id, first.id), undefined)
        assert.strictEqual(yield* store.update(b.id, first.id, (w) => ({ ...w, name: "stolen" })), undefined)
        assert.isFalse(yield* store.remove(b.id, first.id))
        const renamed = yield* store.update(a.id, first.id, (w) => ({ ...w, name: "renamed", query: { tld: "com" }, webhook }))
        assert.deepStrictEqual(yield* store.find(a.id, first.id), renamed)
        assert.isTrue(yield* store.remove(a.id, first.id))
        assert.strictEqual(yield* store.find(a.id, first.id), undefined)
        yield* store.create(watchOf(a.id), 2)
      })))

    it.live("concurrent creates never pass the limit", () =>
      run(Effect.gen(function*() {
        const store = yield* WatchStore
        const a = yield* account("free")
        const results = yield* Effect.forEach(
          Array.from({ length: 6 }, () => watchOf(a.id)),
          (watch) => Effect.result(store.create(watch, 1)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((r) => r._tag === "Success").length, 1)
        assert.strictEqual((yield* store.forAccount(a.id)).length, 1)
      })))

    it.live("a listing matches a watch once, and again only after it left the directory and came back", () =>
      run(Effect.gen(function*() {
        const store = yield* WatchStore
        const listings = yield* ListingStore
        const a = yield* account("business")
        const watch = yield* store.create(watchOf(a.id, { query: { tld: "com" } }), 10)
        yield* listings.upsert([listingInput("WATCHAA1"), listingInput("WATCHAA2", { domain: "other.net" })])
        const now = Date.now() + 1000
        const first = yield* round(now)
        assert.strictEqual(first.matches, 1)
        const page = yield* store.matches(watch.id, undefined, 10)
        assert.deepStrictEqual(page.map((m) => m.listingId), ["WATCHAA1"])
        yield* listings.upsert([listingInput("WATCHAA1", { blurb: "updated" })])
        assert.strictEqual((yield* round(Date.now() + 1000)).matches, 0)
        yield* listings.delist(["WATCHAA1" as ListingId], "sold")
        assert.strictEqual((yield* round(Date.now() + 1000)).matches, 0)
        yield* listings.upsert([listingInput("WATCHAA1")])
        assert.strictEqual((yield* round(Date.now() + 1000)).matches, 1)
        const all = yield* store.matches(watch.id, undefined, 10)
        assert.deepStrictEqual(all.map((m) => m.listingId), ["WATCHAA1", "WATCHAA1"])
        assert.isTrue(all[0]!.seq < all[1]!.seq)
        assert.deepStrictEqual(yield* store.matches(watch.id, all[0]!.seq, 10), [all[1]!])
        assert.deepStrictEqual(yield* store.findMatch(watch.id, all[1]!.id), all[1]!)
        assert.strictEqual((yield* round(Date.now() + 1000)).events, 0)
      })))

    it.live("a listing reaches each plan's watches when its access delay has passed, by the clock", () =>
      run(Effect.gen(function*() {
        const store = yield* WatchStore
        const listings = yield* ListingStore
        const free = yield* store.create(watchOf((yield* account("free")).id), 10)
        const pro = yield* store.create(watchOf((yield* account("pro")).id), 10)
        const business = yield* store.create(watchOf((yield* account("business")).id), 10)
        const discovered = Date.now()
        yield* listings.upsert([listingInput("DELAYED1", { discoveredAt: discovered })])
        const count = (watch: WatchRecord) => Effect.map(store.matches(watch.id, undefined, 10), (rows) => rows.length)
        yield* round(Date.now() + 1000)
        assert.deepStrictEqual([yield* count(free), yield* count(pro), yield* count(business)], [0, 0, 1])
        const pending = yield* store.pendingEvents
        assert.strictEqual(pending.count, 2)
        assert.strictEqual(pending.nextDueAt, discovered + DAY)
        yield* round(discovered + DAY - 1)
        assert.deepStrictEqual([yield* count(free), yield* count(pro)], [0, 0])
        yield* round(discovered + DAY)
        assert.deepStrictEqual([yield* count(free), yield* count(pro)], [0, 1])
        yield* round(discovered + 7 * DAY)
        assert.deepStrictEqual([yield* count(free), yield* count(pro), yield* count(business)], [1, 1, 1])
        assert.strictEqual((yield* store.pendingEvents).count, 0)
      })))

    it.live("the first watch catches up on listings written while no watch existed whose access delay has yet to pass", () =>
      run(Effect.gen(function*() {
        const store = yield* WatchStore
        const listings = yield* ListingStore
        const discovered = Date.now()
        yield* listings.upsert([
          listingInput("BEFORE01", { discoveredAt: discovered }),
          listingInput("LONGAGO1", { discoveredAt: discovered - 30 * DAY })
        ])
        const free = yield* store.create(watchOf((yield* account("free")).id, { createdAt: Date.now(), updatedAt: Date.now() }), 10)
        const matched = () => Effect.map(store.matches(free.id, undefined, 10), (rows) => rows.map((row) => row.listingId))
        yield* round(Date.now() + 1000)
        assert.deepStrictEqual(yield* matched(), [])
        // Readable to a free account only once its week has passed, which is after the watch began.
        yield* round(discovered + 7 * DAY)
        assert.deepStrictEqual(yield* matched(), ["BEFORE01"])
      })))

    it.live("a paused watch records nothing; a match of a watch with a webhook gets a delivery job in the same round", () =>
      run(Effect.gen(function*() {
        const store = yield* WatchStore
        const listings = yield* ListingStore
        const a = yield* account("business")
        const paused = yield* store.create(watchOf(a.id, { paused: true }), 10)
        const hooked = yield* store.create(watchOf(a.id, { webhook }), 10)
        yield* listings.upsert([listingInput("HOOKED01")])
        yield* round(Date.now() + 1000)
        assert.strictEqual((yield* store.matches(paused.id, undefined, 10)).length, 0)
        const [match] = yield* store.matches(hooked.id, undefined, 10)
        const job = yield* store.findDelivery(hooked.id, match!.id)
        assert.deepStrictEqual(yield* store.pendingDeliveries, { count: 1, oldestMatchedAt: match!.matchedAt })
        assert.strictEqual(job?.state, "pending")
        assert.strictEqual(job?.attempts, 0)
        assert.strictEqual(job?.listingId, "HOOKED01")
      })))

    it.live("a delivery is leased to one worker at a time, retried when due, and pauses or disables its webhook", () =>
      run(Effect.gen(function*() {
        const store = yield* WatchStore
        const listings = yield* ListingStore
        const a = yield* account("business")
        const hooked = yield* store.create(watchOf(a.id, { webhook }), 10)
        yield* listings.upsert([listingInput("LEASED01"), listingInput("LEASED02")])
        const now = Date.now() + 1000
        yield* round(now)
        const claims = yield* Effect.all(
          [store.claimDeliveries({ now, limit: 10, leaseUntil: now + 60_000 }), store.claimDeliveries({ now, limit: 10, leaseUntil: now + 60_000 })],
          { concurrency: 2 }
        )
        const taken = claims.flatMap((claim) => claim.map((c) => c.job.eventId))
        assert.strictEqual(taken.length, 2)
        assert.strictEqual(new Set(taken).size, 2)
        assert.deepStrictEqual(yield* store.claimDeliveries({ now: now + 1000, limit: 10, leaseUntil: now + 61_000 }), [])
        // A lone worker frees what a killed one held: then both can be taken again at once.
        assert.strictEqual(yield* store.releaseLeases, 2)
        assert.strictEqual((yield* store.claimDeliveries({ now: now + 1000, limit: 10, leaseUntil: now + 60_000 })).length, 2)
        const [first, second] = taken
        yield* store.finishAttempt({ eventId: first!, attempt: 1, at: now, durationMs: 12, statusCode: 200, error: null }, { _tag: "Delivered" })
        yield* store.finishAttempt({ eventId: second!, attempt: 1, at: now, durationMs: 15_000, statusCode: null, error: "timeout" }, {
          _tag: "Retry",
          at: now + 5_000
        })
        // A retry still waits in the queue; an acknowledged delivery does not.
        assert.strictEqual((yield* store.pendingDeliveries).count, 1)
        assert.deepStrictEqual(yield* store.claimDeliveries({ now: now + 4_999, limit: 10, leaseUntil: now + 70_000 }), [])
        const again = yield* store.claimDeliveries({ now: now + 5_000, limit: 10, leaseUntil: now + 70_000 })
        assert.deepStrictEqual(again.map((c) => [c.job.eventId, c.job.attempts, c.accountPlan]), [[second!, 1, "business"]])
        yield* store.finishAttempt({ eventId: second!, attempt: 2, at: now + 5_000, durationMs: 3, statusCode: 500, error: null }, {
          _tag: "Exhausted",
          reason: "all attempts failed"
        })
        const watch = (yield* store.find(a.id, hooked.id))!
        assert.deepStrictEqual([watch.webhook?.state, watch.webhook?.stateReason], ["paused", "all attempts failed"])
        assert.strictEqual((yield* store.findDelivery(hooked.id, second!))?.state, "failed")
        const attempts = yield* store.attempts(hooked.id, 10)
        const described = attempts.map((x) => JSON.stringify([x.eventId, x.attempt, x.statusCode, x.error]))
        assert.strictEqual(described[0], JSON.stringify([second!, 2, 500, null]))
        assert.deepStrictEqual(described.slice(1).sort(), [JSON.stringify([first!, 1, 200, null]), JSON.stringify([second!, 1, null, "timeout"])].sort())
        // A re-send is one attempt, taken only while the webhook is active.
        assert.isTrue(yield* store.resend(hooked.id, second!, now + 6_000))
        assert.deepStrictEqual(yield* store.claimDeliveries({ now: now + 6_000, limit: 10, leaseUntil: now + 80_000 }), [])
        yield* store.update(a.id, hooked.id, (w) => ({ ...w, webhook: { ...webhook } }))
        const resent = yield* store.claimDeliveries({ now: now + 6_000, limit: 10, leaseUntil: now + 80_000 })
        assert.deepStrictEqual(resent.map((c) => [c.job.eventId, c.job.manual]), [[second!, true]])
        yield* store.finishAttempt({ eventId: second!, attempt: 3, at: now + 6_000, durationMs: 3, statusCode: 410, error: null }, {
          _tag: "Gone",
          reason: "gone"
        })
        assert.strictEqual((yield* store.find(a.id, hooked.id))!.webhook?.state, "disabled")
        assert.isFalse(yield* store.resend(hooked.id, "msg_nosuch", now))
      })))

    privacyProperty(run, options)

    it.live("an operator's change that makes a readable listing newly fit matches; one that keeps it fitting, or a reveal, does not", () =>
      run(Effect.gen(function*() {
        const store = yield* WatchStore
        const listings = yield* ListingStore
        const discovered = Date.now() - 20 * DAY
        yield* listings.upsert([
          listingInput("NEWLYFT1", { domain: "newly-fits.net", discoveredAt: discovered }),
          listingInput("FITTED01", { domain: "fitted-before.com", discoveredAt: discovered })
        ])
        yield* sleep(5)
        const created = Date.now()
        const business = yield* store.create(watchOf((yield* account("business")).id, { query: { tld: "com" }, createdAt: created, updatedAt: created }), 10)
        yield* sleep(5)
        const matched = () => Effect.map(store.matches(business.id, undefined, 10), (rows) => rows.map((row) => row.listingId))
        yield* listings.stampAvailability("FITTED01" as ListingId, Date.now())
        yield* listings.upsert([listingInput("FITTED01", { domain: "fitted-before.com", discoveredAt: discovered, blurb: "changed" })])
        yield* round(Date.now() + 1000)
        assert.deepStrictEqual(yield* matched(), [])
        yield* listings.upsert([listingInput("NEWLYFT1", { domain: "newly-fits.com", discoveredAt: discovered })])
        yield* round(Date.now() + 1000)
        assert.deepStrictEqual(yield* matched(), ["NEWLYFT1"])
      })))

    it.live("listings readable before the watch do not match when another account reveals them", () =>
      run(Effect.gen(function*() {
        const store = yield* WatchStore
        const listings = yield* ListingStore
        const ids = ["OLDREVL1", "OLDREVL2", "OLDREVL3"]
        yield* listings.upsert(ids.map((id) => listingInput(id, { discoveredAt: Date.now() - 21 * DAY })))
        yield* sleep(5)
        const created = Date.now()
        const business = yield* store.create(watchOf((yield* account("business")).id, { createdAt: created, updatedAt: created }), 10)
        for (const id of ids) yield* listings.stampAvailability(id as ListingId, Date.now())
        yield* round(Date.now() + 1000)
        yield* round(Date.now() + 8 * DAY)
        assert.deepStrictEqual(yield* store.matches(business.id, undefined, 10), [])
      })))

    it.live("another plan's access delay ending does not match a watch whose account could read the listing before it began", () =>
      run(Effect.gen(function*() {
        const store = yield* WatchStore
        const listings = yield* ListingStore
        // A watch exists already, so the write is recorded with its follow-ups.
        yield* store.create(watchOf((yield* account("free")).id, { query: { tld: "org" } }), 10)
        const discovered = Date.now() - 12 * HOUR
        yield* listings.upsert([listingInput("PRODELAY", { discoveredAt: discovered })])
        yield* round(Date.now() + 1000)
        yield* sleep(5)
        const created = Date.now()
        const business = yield* store.create(watchOf((yield* account("business")).id, { createdAt: created, updatedAt: created }), 10)
        const pro = yield* store.create(watchOf((yield* account("pro")).id, { createdAt: created, updatedAt: created }), 10)
        yield* round(discovered + DAY)
        assert.deepStrictEqual((yield* store.matches(business.id, undefined, 10)).length, 0)
        assert.deepStrictEqual((yield* store.matches(pro.id, undefined, 10)).map((row) => row.listingId), ["PRODELAY"])
      })))

    it.live("pruning removes matches recorded before the cut with their deliveries and attempts, and older attempts", () =>
      run(Effect.gen(function*() {
        const store = yield* WatchStore
        const listings = yield* ListingStore
        const a = yield* account("business")
        const hooked = yield* store.create(watchOf(a.id, { webhook }), 10)
        yield* listings.upsert([listingInput("PRUNED01")])
        const old = Date.now() + 1000
        yield* round(old)
        const [first] = yield* store.matches(hooked.id, undefined, 10)
        yield* store.finishAttempt({ eventId: first!.id, attempt: 1, at: old, durationMs: 5, statusCode: 200, error: null }, { _tag: "Delivered" })
        yield* listings.upsert([listingInput("PRUNED02")])
        const recent = old + 10 * DAY
        yield* round(recent)
        const [, second] = yield* store.matches(hooked.id, undefined, 10)
        yield* store.finishAttempt({ eventId: second!.id, attempt: 1, at: recent - 5 * DAY, durationMs: 5, statusCode: 500, error: null }, {
          _tag: "Retry",
          at: recent
        })
        yield* store.finishAttempt({ eventId: second!.id, attempt: 2, at: recent, durationMs: 5, statusCode: 200, error: null }, { _tag: "Delivered" })
        const pruned = yield* store.prune(recent - DAY)
        assert.deepStrictEqual(pruned, { matches: 1, attempts: 2 })
        assert.deepStrictEqual((yield* store.matches(hooked.id, undefined, 10)).map((row) => row.listingId), ["PRUNED02"])
        assert.strictEqual(yield* store.findMatch(hooked.id, first!.id), undefined)
        assert.strictEqual(yield* store.findDelivery(hooked.id, first!.id), undefined)
        assert.deepStrictEqual((yield* store.attempts(hooked.id, 10)).map((x) => [x.eventId, x.attempt]), [[second!.id, 2]])
        assert.strictEqual((yield* store.findDelivery(hooked.id, second!.id))?.state, "delivered")
        assert.deepStrictEqual(yield* store.prune(recent - DAY), { matches: 0, attempts: 0 })
      })))

    it.live("removing a watch removes its matches and deliveries", () =>
      run(Effect.gen(function*() {
        const store = yield* WatchStore
        const listings = yield* ListingStore
        const a = yield* account("business")
        const hooked = yield* store.create(watchOf(a.id, { webhook }), 10)
        yield* listings.upsert([listingInput("REMOVED1")])
        const now = Date.now() + 1000
        yield* round(now)
        assert.strictEqual((yield* store.matches(hooked.id, undefined, 10)).length, 1)
        assert.isTrue(yield* store.remove(a.id, hooked.id))
        assert.deepStrictEqual(yield* store.matches(hooked.id, undefined, 10), [])
        assert.deepStrictEqual(yield* store.claimDeliveries({ now, limit: 10, leaseUntil: now + 60_000 }), [])
      })))
  })
}
