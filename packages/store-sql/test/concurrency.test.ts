import { AccountStore, Errors, HoldStore, KeyStore, ListingStore, Plan, RevealStore, Time } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Result } from "effect"
import { SqlClient } from "effect/sql"
import * as SqlListingStore from "../src/SqlListingStore.ts"
import { StoreSql } from "../src/index.ts"
import { closePglite, describeOnServer, pgliteStores, serverClient, serverClientIn } from "./support.ts"

/*
 * The guarantees that need the database's own atomicity, checked with real parallel
 * connections: N attempts at once, exactly the allowed number succeed.
 */

const T0 = Date.UTC(2026, 5, 1, 12)
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(8 - prefix.length, "0")}`)

/** The races every deployment must win, run against `layer` (built fresh for each test). */
const races = (layer: () => Layer.Layer<StoreSql.Services>) => {
    const run = <A, E>(effect: Effect.Effect<A, E, StoreSql.Services>) => Effect.provide(effect, layer())

    it.live("200 concurrent charged reveals with one unit left charge exactly one", () =>
      run(Effect.gen(function*() {
        const ledger = yield* RevealStore.RevealStore
        const allowance = { month: "2026-06", limit: 10 }
        for (const listingId of ids("PRE", 9)) {
          yield* ledger.record({ accountId: "acct", listingId, at: T0, charge: allowance })
        }
        assert.strictEqual(yield* ledger.usedIn("acct", "2026-06"), 9)
        const outcomes = yield* Effect.forEach(
          ids("RACE", 200),
          (listingId) => ledger.record({ accountId: "acct", listingId, at: T0, charge: allowance }),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(outcomes.filter((outcome) => outcome._tag === "Recorded").length, 1)
        assert.strictEqual(outcomes.filter((outcome) => outcome._tag === "AllowanceSpent").length, 199)
        assert.strictEqual(yield* ledger.usedIn("acct", "2026-06"), 10)
        const revealed = yield* ledger.revealedAmong("acct", ids("RACE", 200))
        assert.strictEqual(revealed.size, 1)
      })))

    it.live("100 concurrent charged reveals in a month with nothing spent yet charge exactly the limit", () =>
      run(Effect.gen(function*() {
        const ledger = yield* RevealStore.RevealStore
        const allowance = { month: "2026-06", limit: 3 }
        const outcomes = yield* Effect.forEach(
          ids("NEW", 100),
          (listingId) => ledger.record({ accountId: "acct", listingId, at: T0, charge: allowance }),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(outcomes.filter((outcome) => outcome._tag === "Recorded").length, 3)
        assert.strictEqual(yield* ledger.usedIn("acct", "2026-06"), 3)
        assert.strictEqual((yield* ledger.revealedAmong("acct", ids("NEW", 100))).size, 3)
      })))

    it.live("50 concurrent reveals of one listing write one entry and charge once", () =>
      run(Effect.gen(function*() {
        const ledger = yield* RevealStore.RevealStore
        const allowance = { month: "2026-06", limit: 10 }
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          (i) => ledger.record({ accountId: "acct", listingId: "SAMESAME", at: T0 + i, charge: allowance }),
          { concurrency: "unbounded" }
        )
        const fresh = outcomes.filter((outcome) => outcome._tag === "Recorded" && outcome.fresh)
        assert.strictEqual(fresh.length, 1)
        const revealedAt = fresh[0]!._tag === "Recorded" ? fresh[0]!.entry.revealedAt : -1
        for (const outcome of outcomes) {
          assert.isTrue(outcome._tag === "Recorded" && outcome.entry.revealedAt === revealedAt)
        }
        assert.strictEqual(yield* ledger.usedIn("acct", "2026-06"), 1)
      })))

    it.live("50 accounts holding one listing at once: exactly one hold, the others see its expiry", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore.HoldStore
        const exits = yield* Effect.forEach(
          ids("acct", 50),
          (accountId) => Effect.result(holds.acquire({ accountId, listingId: "CONTEST1", plan: Plan.Plans.pro, now: T0 })),
          { concurrency: "unbounded" }
        )
        const won = exits.filter(Result.isSuccess)
        assert.strictEqual(won.length, 1)
        const expiresAt = won[0]!.success.hold.expiresAt
        for (const exit of exits.filter(Result.isFailure)) {
          assert.deepStrictEqual(exit.failure, new Errors.HeldByOther({ expiresAt }))
        }
        const running = yield* holds.runningOn(["CONTEST1"], T0 + 1)
        assert.strictEqual(running.size, 1)
      })))

    it.live("20 concurrent holds by one pro account: exactly the plan's 3", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore.HoldStore
        const exits = yield* Effect.forEach(
          ids("CAP", 20),
          (listingId) => Effect.result(holds.acquire({ accountId: "pro-acct", listingId, plan: Plan.Plans.pro, now: T0 })),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(exits.filter(Result.isSuccess).length, Plan.Plans.pro.concurrentHolds)
        for (const exit of exits.filter(Result.isFailure)) {
          assert.deepStrictEqual(exit.failure, new Errors.HoldCapReached({ limit: 3 }))
        }
        assert.strictEqual(yield* holds.countRunning("pro-acct", T0 + 1), 3)
      })))

    it.live("one extension however many are sent at once", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore.HoldStore
        const { hold } = yield* holds.acquire({ accountId: "a1", listingId: "EXTRACE1", plan: Plan.Plans.pro, now: T0 })
        const exits = yield* Effect.forEach(
          Array.from({ length: 20 }, () => 0),
          () => Effect.exit(holds.extend({ accountId: "a1", holdId: hold.id, now: T0 + 1, extensionMs: 24 * Time.HOUR })),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(exits.filter(Exit.isSuccess).length, 1)
        assert.strictEqual((yield* holds.findOwn("a1", hold.id))!.expiresAt, hold.expiresAt + 24 * Time.HOUR)
      })))

    it.live("the live-key ceiling holds under concurrent creation", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore.AccountStore
        const keys = yield* KeyStore.KeyStore
        const account = yield* accounts.create({ name: "Race", plan: "free", at: T0 })
        const exits = yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) =>
            Effect.exit(keys.create({
              accountId: account.id,
              name: `k${i}`,
              prefix: `ds_live_race${String(i).padStart(4, "0")}`,
              digest: `race-digest-${i}`,
              liveLimit: 2,
              at: T0
            })),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(exits.filter(Exit.isSuccess).length, 2)
      })))

}

// PGlite has one backend: the races still run, serialised by the client's single permit.
describe("sql (pglite) concurrency", () => {
  afterAll(closePglite)
  races(() => pgliteStores)
})

describeOnServer("sql (server) concurrency", (databaseUrl) => {
    races(() => StoreSql.layerStores.pipe(Layer.provideMerge(serverClient(databaseUrl, 40))))

    it.live("a slow writer's row is not lost: synced_at never passes an open writer's start", () =>
      Effect.gen(function*() {
        // A second pool in the same schema plays the slow importer; the reader's store has no
        // lag at all, so only the open-writer rule keeps the watermark behind the write.
        const sql = yield* SqlClient.SqlClient
        const schema = (yield* sql<{ schema: string }>`SELECT current_schema() AS schema`)[0]!.schema
        const writer = yield* serverClientIn(databaseUrl(), schema, 2)
        const listings = yield* ListingStore.ListingStore
        yield* listings.upsert([Fixtures.listingInput("SLOWROW1"), Fixtures.listingInput("OTHER001")])
        yield* Effect.sleep("20 millis")

        const stamped = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const slow = yield* writer.withTransaction(Effect.gen(function*() {
          yield* writer`UPDATE listings SET blurb = 'written slowly' WHERE id = 'SLOWROW1'`
          yield* Deferred.succeed(stamped, undefined)
          yield* Deferred.await(release)
          yield* Effect.sleep("300 millis")
        })).pipe(Effect.orDie, Effect.forkChild)
        yield* Deferred.await(stamped)
        yield* Effect.sleep("50 millis")

        const readerClock = Date.now()
        const syncedAt = yield* listings.syncedAt
        const request = {
          order: "id",
          after: undefined,
          limit: 100,
          filters: {},
          visibleBefore: T0 + 365 * Time.DAY,
          since: syncedAt,
          now: T0,
          reader: { at: T0, revealsOf: undefined }
        } as const
        const during = yield* listings.page(request)
        assert.notInclude(during.rows.map((row) => row.blurb), "written slowly")

        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(slow)

        const next = yield* listings.page(request)
        const row = next.rows.find((candidate) => candidate.id === "SLOWROW1")
        assert.isDefined(row)
        assert.strictEqual(row!.blurb, "written slowly")
        // Stamped before the reader's clock: a clock-only watermark would have skipped it.
        assert.isBelow(row!.updatedAt, readerClock)
        assert.isAtMost(syncedAt, row!.updatedAt)
      }).pipe(
        Effect.provide(
          Layer.mergeAll(SqlListingStore.layerWith({ syncLagSeconds: 0 })).pipe(
            Layer.provideMerge(serverClient(databaseUrl, 5))
          )
        )
      ))
})
