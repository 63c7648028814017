import { AccountStore, ApiKey, AvailabilityCheck, Cursor, Directory, HoldStore, KeyStore, ListingStore, Operators, Plan, RevealStore, WatchStore } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { Digest, Mac, SecureRandom } from "effect/crypto"
import { SqlClient, Statement } from "effect/sql"
import * as KeyLookups from "../src/KeyLookups.ts"
import * as StoreCaches from "../src/StoreCaches.ts"
import { StoreSql } from "../src/index.ts"
import { closePglite, describeOnServer, pgliteStores, serverStores } from "./support.ts"

/*
 * The adapter keeps decoded listings by (id, updated_at) and key look-ups for a few seconds
 * (docs/performance.md). Neither may ever show a caller something the database no longer says.
 */

const T0 = Date.UTC(2026, 5, 1, 12)

const pageRequest = (now: number): ListingStore.PageRequest => ({
  order: "id",
  after: undefined,
  limit: 50,
  filters: {},
  visibleBefore: now,
  since: undefined,
  now,
  reader: { at: now, revealsOf: undefined }
})

/**
 * `inside` run in a transaction that is then rolled back, while six fibers ask `plain` over and
 * over (a shared statement running or waiting throughout): what `inside` answered, flipped out
 * of the rollback as `{ rolledBack }`, and every distinct answer the plain asks got.
 */
const duringPlainAsks = <P, I, E>(plain: Effect.Effect<P, never, StoreSql.Services>, inside: Effect.Effect<I, E, StoreSql.Services>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const seen = new Set<P>()
    const asking = yield* Effect.forkChild(Effect.forEach(
      [1, 2, 3, 4, 5, 6],
      () => Effect.forever(Effect.map(plain, (answer) => seen.add(answer))),
      { concurrency: "unbounded" }
    ))
    yield* Effect.sleep("20 millis")
    const rolledBack = yield* sql.withTransaction(Effect.flatMap(inside, (answer) => Effect.fail({ rolledBack: answer }))).pipe(
      Effect.flip,
      Effect.timeout("10 seconds")
    )
    yield* Effect.sleep("20 millis")
    yield* Fiber.interrupt(asking)
    return { inside: rolledBack, seen: [...seen] }
  })

const caches = (layer: () => Layer.Layer<StoreSql.Services>) => {
  const run = <A, E>(effect: Effect.Effect<A, E, StoreSql.Services>) => Effect.provide(effect, layer())

  it.live("a page read before a write never hides the write: upsert, availability stamp and delisting", () =>
    run(Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      const now = Date.now()
      yield* listings.upsert([Fixtures.listingInput("CACHE001"), Fixtures.listingInput("CACHE002")])
      const first = yield* listings.page(pageRequest(now))
      assert.deepStrictEqual(first.rows.map((row) => row.blurb), ["A name with history", "A name with history"])
      // Read again: served from the cache, the same objects.
      const again = yield* listings.page(pageRequest(now))
      assert.strictEqual(again.rows[0], first.rows[0])

      yield* listings.upsert([Fixtures.listingInput("CACHE001", { blurb: "Rewritten", backlinks: 9_999 })])
      const rewritten = yield* listings.page(pageRequest(now))
      assert.strictEqual(rewritten.rows[0]!.blurb, "Rewritten")
      assert.strictEqual(rewritten.rows[0]!.backlinks, 9_999)
      assert.strictEqual(rewritten.rows[1], first.rows[1])

      yield* listings.stampAvailability("CACHE002" as never, T0 + 5)
      const stamped = yield* listings.page(pageRequest(now))
      assert.strictEqual(stamped.rows[1]!.availabilityCheckedAt, T0 + 5)

      yield* listings.delist(["CACHE001" as never], "sold")
      const afterDelist = yield* listings.page(pageRequest(now))
      assert.deepStrictEqual(afterDelist.rows.map((row) => row.id), ["CACHE002"])
      assert.strictEqual((yield* listings.find("CACHE001" as never))!.status, "sold")
    })))

  it.live("with every cache switched off (StoreCaches) the stores answer the same, each read a statement of its own", () =>
    Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      const accounts = yield* AccountStore.AccountStore
      const keys = yield* KeyStore.KeyStore
      const account = yield* accounts.create({ name: "Uncached", plan: "free", at: T0 })
      yield* keys.create({ accountId: account.id, name: "k", prefix: "dsk_uncache01", digest: "uncached-digest", liveLimit: 2, at: T0 })
      yield* listings.upsert(["NOCACHE1", "NOCACHE2"].map((id) => Fixtures.listingInput(id)))
      let statements = 0
      const counting: Statement.Transformer = (self) => Effect.sync(() => (statements++, self))
      const counted = <A>(read: Effect.Effect<A>) => {
        statements = 0
        return Effect.map(read.pipe(Effect.provideService(Statement.CurrentTransformer, counting)), (answer) => ({ answer, statements }))
      }
      const lookUps = [yield* counted(keys.findByDigest("uncached-digest")), yield* counted(keys.findByDigest("uncached-digest"))]
      assert.deepStrictEqual(lookUps.map((lookUp) => [lookUp.answer?.key.prefix, lookUp.statements]), [["dsk_uncache01", 1], ["dsk_uncache01", 1]])
      const now = Date.now()
      const first = yield* listings.page(pageRequest(now))
      const again = yield* listings.page(pageRequest(now))
      assert.deepStrictEqual(again.rows.map((row) => row.id), ["NOCACHE1", "NOCACHE2"])
      // No record kept: the same row is decoded into a new object.
      assert.notStrictEqual(again.rows[0], first.rows[0])
      assert.deepStrictEqual(again.rows[0], first.rows[0])
      // No statement shared: eight concurrent reads of one page run eight page statements.
      const concurrent = yield* counted(Effect.all(Array.from({ length: 8 }, () => listings.page(pageRequest(now))), { concurrency: "unbounded" }))
      assert.isAtLeast(concurrent.statements, 8)
    }).pipe(Effect.provide(layer().pipe(Layer.provide(Layer.succeed(StoreCaches.StoreCaches, {
      keyLookups: false,
      listingRecords: false,
      sharedReads: false,
      syncedAt: false,
      sinceReadAhead: false,
      filterColumns: false
    }))))))

  it.live("a page answers for its reader in the same statement: running holds and the reader's reveals", () =>
    run(Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      const holds = yield* HoldStore.HoldStore
      const reveals = yield* RevealStore.RevealStore
      const now = Date.now()
      yield* listings.upsert([Fixtures.listingInput("READER01"), Fixtures.listingInput("READER02")])
      const { hold } = yield* holds.acquire({ accountId: "holder", listingId: "READER01", plan: Plan.Plans.pro, now })
      yield* reveals.record({ accountId: "reader", listingId: "READER02", at: now, charge: undefined })
      const page = yield* listings.page({ ...pageRequest(now + 1), reader: { at: now + 1, revealsOf: "reader" } })
      assert.deepStrictEqual(page.running, new Map([["READER01", hold]]))
      assert.deepStrictEqual(page.revealed, new Set(["READER02"]))
      const unlimited = yield* listings.page({ ...pageRequest(now + 1), reader: { at: now + 1, revealsOf: undefined } })
      assert.deepStrictEqual(unlimited.running, new Map([["READER01", hold]]))
      assert.deepStrictEqual(unlimited.revealed, new Set())
    })))

  it.live("reads of one page by several readers at once share statements, and each gets its own reveals", () =>
    run(Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      const reveals = yield* RevealStore.RevealStore
      const holds = yield* HoldStore.HoldStore
      const now = Date.now()
      yield* listings.upsert(["SHARED01", "SHARED02", "SHARED03"].map((id) => Fixtures.listingInput(id)))
      yield* reveals.record({ accountId: "ann", listingId: "SHARED01", at: now, charge: undefined })
      yield* reveals.record({ accountId: "bob", listingId: "SHARED02", at: now, charge: undefined })
      yield* reveals.record({ accountId: "bob", listingId: "SHARED03", at: now, charge: undefined })
      const { hold } = yield* holds.acquire({ accountId: "ann", listingId: "SHARED03", plan: Plan.Plans.pro, now })
      const readers = ["ann", "bob", "cid", undefined, "ann", "bob", "cid", undefined].flatMap((reader) => [reader, reader, reader])
      // Forked together: the first read's statement runs while the others arrive, so they share the next.
      const pages = yield* Effect.all(
        readers.map((revealsOf, index) =>
          listings.page({ ...pageRequest(now + 1 + (index % 3)), reader: { at: now + 1 + (index % 3), revealsOf } })),
        { concurrency: "unbounded" }
      )
      const expected: Record<string, ReadonlyArray<string>> = { ann: ["SHARED01"], bob: ["SHARED02", "SHARED03"], cid: [] }
      pages.forEach((page, index) => {
        const reader = readers[index]
        assert.deepStrictEqual(page.rows.map((row) => row.id), ["SHARED01", "SHARED02", "SHARED03"])
        assert.deepStrictEqual(page.running, new Map([["SHARED03", hold]]))
        assert.deepStrictEqual(page.revealed, new Set(reader === undefined ? [] : expected[reader]))
      })
    })))

  it.live("concurrent asks for one listing's running hold share statements, and each sees a hold taken before it asked", () =>
    run(Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      const holds = yield* HoldStore.HoldStore
      yield* listings.upsert([Fixtures.listingInput("HOLDASK1"), Fixtures.listingInput("HOLDASK2")])
      const ask = (id: string) => Effect.suspend(() => holds.runningOn([id], Date.now()))
      const before = yield* Effect.all(Array.from({ length: 12 }, () => ask("HOLDASK1")), { concurrency: "unbounded" })
      assert.deepStrictEqual(before.map((running) => running.size), Array.from({ length: 12 }, () => 0))
      const { hold } = yield* holds.acquire({ accountId: "holder", listingId: "HOLDASK1", plan: Plan.Plans.pro, now: Date.now() })
      const after = yield* Effect.all(
        Array.from({ length: 24 }, (_, index) => ask(index % 2 === 0 ? "HOLDASK1" : "HOLDASK2")),
        { concurrency: "unbounded" }
      )
      after.forEach((running, index) => {
        assert.deepStrictEqual(running, index % 2 === 0 ? new Map([["HOLDASK1", hold]]) : new Map())
      })
    })))

  it.live("concurrent asks for accounts' holds share statements: each gets its account's holds, ended ones within its own window", () =>
    run(Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      const holds = yield* HoldStore.HoldStore
      yield* listings.upsert(["ACCTHLD1", "ACCTHLD2", "ACCTHLD3"].map((id) => Fixtures.listingInput(id)))
      const start = Date.now()
      const acquire = (accountId: string, listingId: string, now: number) =>
        Effect.map(holds.acquire({ accountId, listingId, plan: Plan.Plans.pro, now }), ({ hold }) => hold)
      const annFirst = yield* acquire("ann", "ACCTHLD1", start)
      const bobFirst = yield* acquire("bob", "ACCTHLD2", start)
      const bobEnded = yield* holds.end({ accountId: "bob", holdId: bobFirst.id, now: start + 1, outcome: "released" })
      // Bob asks twice, with windows either side of his hold's end; both asks go in the same batches.
      const asks = [["ann", start - 60_000], ["bob", start], ["bob", start + 2], ["cid", 0]] as const
      const ask = (index: number) => {
        const [accountId, endedSince] = asks[index % asks.length]!
        return Effect.suspend(() => holds.forAccount(accountId, endedSince, Date.now()))
      }
      const before = yield* Effect.all(Array.from({ length: 24 }, (_, index) => ask(index)), { concurrency: "unbounded" })
      assert.deepStrictEqual(before, Array.from({ length: 24 }, (_, index) => [[annFirst], [bobEnded], [], []][index % 4]))
      const annSecond = yield* acquire("ann", "ACCTHLD3", start + 5)
      const after = yield* Effect.all(Array.from({ length: 24 }, (_, index) => ask(index)), { concurrency: "unbounded" })
      assert.deepStrictEqual(after, Array.from({ length: 24 }, (_, index) => [[annSecond, annFirst], [bobEnded], [], []][index % 4]))
      // Inside a transaction the holds are its own, an uncommitted one included, while plain asks
      // never see that hold, rolled back.
      const { inside, seen } = yield* duringPlainAsks(
        Effect.suspend(() => Effect.map(holds.forAccount("ann", 0, Date.now()), (found) => found.length)),
        Effect.gen(function*() {
          yield* acquire("ann", "ACCTHLD2", Date.now())
          return (yield* holds.forAccount("ann", 0, Date.now())).map((hold) => hold.listingId)
        })
      )
      assert.deepStrictEqual(inside, { rolledBack: ["ACCTHLD2", "ACCTHLD3", "ACCTHLD1"] })
      assert.deepStrictEqual(seen, [2])
    })))

  it.live("concurrent asks for accounts' watches share statements, and each gets its account's watches, oldest first", () =>
    run(Effect.gen(function*() {
      const accounts = yield* AccountStore.AccountStore
      const watches = yield* WatchStore.WatchStore
      const [ann, bob, cid] = yield* Effect.forEach(["ann", "bob", "cid"], (name) => accounts.create({ name, plan: "business", at: Date.now() }))
      const start = Date.now()
      const create = (accountId: string, name: string, createdAt: number) =>
        watches.create({ id: `wch_${name}`, accountId, name, query: {}, webhook: null, paused: false, createdAt, updatedAt: createdAt }, 10)
      yield* create(ann!.id, "annsecond", start - 1_000)
      yield* create(bob!.id, "bobonly", start - 1_500)
      yield* create(ann!.id, "annfirst", start - 2_000)
      const names = (accountId: string) => Effect.map(watches.forAccount(accountId), (found) => found.map((watch) => watch.name))
      const askers = [ann!.id, bob!.id, cid!.id]
      const answers = yield* Effect.all(Array.from({ length: 24 }, (_, index) => names(askers[index % 3]!)), { concurrency: "unbounded" })
      assert.deepStrictEqual(answers, Array.from({ length: 24 }, (_, index) => [["annfirst", "annsecond"], ["bobonly"], []][index % 3]))
      // Inside a transaction the watches are its own, an uncommitted one included, while plain
      // asks never see that watch, rolled back.
      const { inside, seen } = yield* duringPlainAsks(
        Effect.map(names(ann!.id), (found) => found.join()),
        Effect.andThen(create(ann!.id, "annthird", start), names(ann!.id))
      )
      assert.deepStrictEqual(inside, { rolledBack: ["annfirst", "annsecond", "annthird"] })
      assert.deepStrictEqual(seen, ["annfirst,annsecond"])
    })))

  it.live("concurrent asks for months' reveal counts share statements, and each sees a charged reveal made before it asked", () =>
    run(Effect.gen(function*() {
      const reveals = yield* RevealStore.RevealStore
      const listings = yield* ListingStore.ListingStore
      yield* listings.upsert([Fixtures.listingInput("COUNTED1"), Fixtures.listingInput("COUNTED2")])
      const charge = (accountId: string, listingId: string, month: string) =>
        reveals.record({ accountId, listingId, at: Date.now(), charge: { month, limit: 10 } })
      yield* charge("ann", "COUNTED1", "2026-06")
      const asks = [["ann", "2026-06"], ["ann", "2026-07"], ["bob", "2026-06"]] as const
      const ask = (index: number) => {
        const [accountId, month] = asks[index % asks.length]!
        return Effect.suspend(() => reveals.usedIn(accountId, month))
      }
      const before = yield* Effect.all(Array.from({ length: 24 }, (_, index) => ask(index)), { concurrency: "unbounded" })
      assert.deepStrictEqual(before, Array.from({ length: 24 }, (_, index) => [1, 0, 0][index % 3]))
      yield* charge("ann", "COUNTED2", "2026-06")
      yield* charge("bob", "COUNTED1", "2026-06")
      const after = yield* Effect.all(Array.from({ length: 24 }, (_, index) => ask(index)), { concurrency: "unbounded" })
      assert.deepStrictEqual(after, Array.from({ length: 24 }, (_, index) => [2, 0, 1][index % 3]))
      // Inside a transaction the count is its own, uncommitted charge included, while plain asks
      // never see that charge, rolled back.
      const { inside, seen } = yield* duringPlainAsks(
        reveals.usedIn("cid", "2026-06"),
        Effect.andThen(charge("cid", "COUNTED1", "2026-06"), reveals.usedIn("cid", "2026-06"))
      )
      assert.deepStrictEqual(inside, { rolledBack: 1 })
      assert.deepStrictEqual(seen, [0])
    })))

  it.live("a read inside a transaction is never shared: it sees the transaction's own rows and never waits on its connection", () =>
    run(Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      const sql = yield* SqlClient.SqlClient
      const now = Date.now()
      yield* listings.upsert([Fixtures.listingInput("TXREAD01")])
      // Plain reads of the same page keep a shared statement running or waiting throughout.
      const plain = yield* Effect.forkChild(Effect.forEach(
        [1, 2, 3, 4, 5, 6, 7, 8],
        () => Effect.forever(listings.page(pageRequest(now + 1))),
        { concurrency: "unbounded" }
      ))
      yield* Effect.sleep("20 millis")
      const inside = yield* sql.withTransaction(Effect.gen(function*() {
        yield* listings.upsert([Fixtures.listingInput("TXREAD02")])
        const page = yield* listings.page(pageRequest(now + 1))
        const found = yield* listings.find("TXREAD02" as never)
        return { ids: page.rows.map((row): string => row.id), found: found?.id as string | undefined }
      })).pipe(Effect.timeout("10 seconds"))
      yield* Fiber.interrupt(plain)
      assert.deepStrictEqual(inside, { ids: ["TXREAD01", "TXREAD02"] as Array<string>, found: "TXREAD02" as string | undefined })
    })))

  it.live("a since run read ahead: every row once, a hold taken meanwhile is seen, a delisting reaches the next run", () =>
    run(Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      const holds = yield* HoldStore.HoldStore
      const ids = ["SINCE001", "SINCE002", "SINCE003", "SINCE004", "SINCE005", "SINCE006", "SINCE007"]
      yield* listings.upsert(ids.map((id) => Fixtures.listingInput(id)))
      const sinceRequest = (after: string | undefined, now: number): ListingStore.PageRequest => ({
        ...pageRequest(now),
        limit: 2,
        since: 0,
        after: after === undefined ? undefined : { order: "id", id: after as never },
        reader: { at: now, revealsOf: undefined }
      })
      const syncedAt = yield* listings.syncedAt
      const first = yield* listings.page(sinceRequest(undefined, Date.now()))
      const second = yield* listings.page(sinceRequest("SINCE002", Date.now()))
      assert.deepStrictEqual([...first.rows, ...second.rows].map((row) => row.id), ids.slice(0, 4))
      // Page three is being read ahead now; meanwhile a hold is taken on it and a row is delisted.
      const { hold } = yield* holds.acquire({ accountId: "holder", listingId: "SINCE005", plan: Plan.Plans.pro, now: Date.now() })
      yield* listings.delist(["SINCE006" as never], "sold")
      const seen = [...first.rows, ...second.rows].map((row) => row.id)
      let after: string | undefined = "SINCE004"
      while (after !== undefined) {
        const now = Date.now()
        const next: ListingStore.PageResult = yield* listings.page(sinceRequest(after, now))
        if (next.rows.some((row) => row.id === "SINCE005")) {
          // Who holds what is never read ahead: it is answered when the page is served.
          assert.deepStrictEqual(next.running.get("SINCE005"), hold)
        }
        seen.push(...next.rows.map((row) => row.id))
        after = next.hasMore ? next.rows[next.rows.length - 1]!.id : undefined
      }
      assert.deepStrictEqual(seen, ids)
      const nextRun = yield* listings.page({ ...sinceRequest(undefined, Date.now()), since: syncedAt, limit: 50 })
      assert.strictEqual(nextRun.rows.find((row) => row.id === "SINCE006")?.status, "sold")
    })))

  it.live("a page read ahead is never served to a request with other filters", () =>
    run(Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      yield* listings.upsert(["AHEAD001", "AHEAD002", "AHEAD003", "AHEAD004", "AHEAD005", "AHEAD006"].map((id) => Fixtures.listingInput(id)))
      const now = Date.now()
      const request = { ...pageRequest(now), limit: 2, since: 0 }
      yield* listings.page(request)
      const second = yield* listings.page({ ...request, after: { order: "id", id: "AHEAD002" as never } })
      assert.isTrue(second.hasMore)
      // The spec lets a run change filters mid-way: it continues under the new ones.
      const filtered = yield* listings.page({ ...request, after: { order: "id", id: "AHEAD004" as never }, filters: { tld: "net" } })
      assert.deepStrictEqual(filtered.rows, [])
    })))

  it.live("updated_at is a row version: every write moves it, even several in one millisecond", () =>
    run(Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      const versions: Array<number> = []
      for (let write = 0; write < 25; write++) {
        yield* listings.upsert([Fixtures.listingInput("VERSION1", { backlinks: write })])
        versions.push((yield* listings.find("VERSION1" as never))!.updatedAt)
      }
      for (let index = 1; index < versions.length; index++) {
        assert.isAbove(versions[index]!, versions[index - 1]!, `write ${index}`)
      }
    })))

  it.live("a key revoked or a plan changed in this process is seen by the very next look-up", () =>
    run(Effect.gen(function*() {
      const accounts = yield* AccountStore.AccountStore
      const keys = yield* KeyStore.KeyStore
      const account = yield* accounts.create({ name: "Cached", plan: "free", at: T0 })
      yield* keys.create({ accountId: account.id, name: "k", prefix: "ds_live_cache001", digest: "cache-digest", liveLimit: 2, at: T0 })
      assert.strictEqual((yield* keys.findByDigest("cache-digest"))!.account.plan, "free")
      yield* accounts.setPlan(account.id, "business")
      assert.strictEqual((yield* keys.findByDigest("cache-digest"))!.account.plan, "business")
      yield* keys.touch((yield* keys.findByDigest("cache-digest"))!.key.id, T0 + 60_000)
      assert.strictEqual((yield* keys.findByDigest("cache-digest"))!.key.lastUsedAt, T0 + 60_000)
      yield* keys.revoke("ds_live_cache001", T0 + 1)
      assert.strictEqual((yield* keys.findByDigest("cache-digest"))!.key.revokedAt, T0 + 1)
    })))

  it.live("the store reuses every look-up, a key or none, until a key is created: then a digest asked before is read again", () =>
    run(Effect.gen(function*() {
      const accounts = yield* AccountStore.AccountStore
      const keys = yield* KeyStore.KeyStore
      const account = yield* accounts.create({ name: "Reuse", plan: "free", at: T0 })
      yield* keys.create({ accountId: account.id, name: "k", prefix: "dsk_reuse001", digest: "live-digest", liveLimit: 2, at: T0 })
      yield* keys.create({ accountId: account.id, name: "k", prefix: "dsk_reuse002", digest: "revoked-digest", liveLimit: 2, at: T0 })
      yield* keys.revoke("dsk_reuse002", T0 + 1)
      let statements = 0
      const counting: Statement.Transformer = (self) => Effect.sync(() => (statements++, self))
      const costs: Record<string, Array<number>> = {}
      for (const digest of ["live-digest", "revoked-digest", "unknown-digest"]) {
        costs[digest] = []
        for (let round = 0; round < 3; round++) {
          statements = 0
          yield* keys.findByDigest(digest).pipe(Effect.provideService(Statement.CurrentTransformer, counting))
          costs[digest]!.push(statements)
        }
      }
      assert.deepStrictEqual(costs, { "live-digest": [1, 0, 0], "revoked-digest": [1, 0, 0], "unknown-digest": [1, 0, 0] })
      yield* keys.create({ accountId: account.id, name: "k", prefix: "dsk_reuse003", digest: "unknown-digest", liveLimit: 2, at: T0 })
      assert.strictEqual((yield* keys.findByDigest("unknown-digest"))?.key.prefix, "dsk_reuse003")
    })))

  it.live("an unknown key and a revoked key cost the same statements: one the first time, none after", () =>
    Effect.gen(function*() {
      const operators = yield* Operators.Operators
      const directory = yield* Directory.Directory
      const account = yield* operators.createAccount("Dead keys", "pro")
      const { key, secret: revoked } = yield* operators.createKey(account.id, "k")
      yield* directory.authenticate(revoked)
      yield* operators.revokeKey(key.prefix)
      const unknown = yield* ApiKey.generateSecret
      let statements = 0
      const counting: Statement.Transformer = (self) => Effect.sync(() => (statements++, self))
      const costs: Record<string, Array<number>> = { unknown: [], revoked: [] }
      for (let round = 0; round < 3; round++) {
        for (const [name, secret] of [["unknown", unknown], ["revoked", revoked]] as const) {
          statements = 0
          yield* Effect.flip(directory.authenticate(secret)).pipe(Effect.provideService(Statement.CurrentTransformer, counting))
          costs[name]!.push(statements)
        }
      }
      assert.deepStrictEqual(costs, { unknown: [1, 0, 0], revoked: [1, 0, 0] })
    }).pipe(Effect.provide(directoryOn(layer()))))
}

/** `Directory` and `Operators` over the SQL stores, as a server runs them. */
const directoryOn = (stores: Layer.Layer<StoreSql.Services>) =>
  Layer.mergeAll(Directory.Directory.layer, Operators.Operators.layer).pipe(
    Layer.provide(Cursor.CursorCodec.layer.pipe(Layer.provide(Layer.succeed(Cursor.CursorSecret, new Uint8Array(32))))),
    Layer.provide(AvailabilityCheck.AvailabilityCheck.layerStampOnly),
    Layer.provideMerge(stores),
    Layer.provideMerge(Layer.mergeAll(Digest.layerWebCrypto, Mac.layerWebCrypto).pipe(Layer.provideMerge(SecureRandom.layerWebCrypto)))
  )

describe("sql (pglite) caches", () => {
  afterAll(closePglite)
  caches(() => pgliteStores)
})

describe("KeyLookups", () => {
  const found = (plan: "free" | "pro") => ({
    key: { id: "k1", accountId: "a1", name: "k", prefix: "p", digest: "d", createdAt: 0, lastUsedAt: null, revokedAt: null },
    account: { id: "a1", name: "a", plan, createdAt: 0 }
  }) as unknown as KeyLookups.Found

  it("forgets a look-up after its TTL, and never stores one read before an invalidation", () => {
    let clock = 0
    const cache = KeyLookups.make(() => clock)
    cache.set("d", found("free"), cache.generation())
    cache.set("unknown", undefined, cache.generation())
    clock = KeyLookups.TTL_MS - 1
    assert.strictEqual(cache.get("d")?.found?.account.plan, "free")
    assert.deepStrictEqual(cache.get("unknown"), { found: undefined })
    clock = KeyLookups.TTL_MS
    assert.isUndefined(cache.get("d"))
    assert.isUndefined(cache.get("unknown"))

    const readBefore = cache.generation()
    cache.invalidate()
    cache.set("d", found("free"), readBefore)
    assert.isUndefined(cache.get("d"))
  })
})

describeOnServer("sql (server) caches", (databaseUrl) => {
    caches(() => serverStores(databaseUrl))

    it.live("a plan changed or a key revoked by another process reaches a cached look-up at once (dropshelf_auth)", () =>
      Effect.gen(function*() {
        const url = databaseUrl()
        yield* Effect.provide(StoreSql.migrate, StoreSql.layerServer({ url }))
        // Two deployments on one database: `operator` writes, `server` has the look-up cached.
        const operator = yield* Layer.build(Layer.fresh(StoreSql.layerServer({ url })))
        const server = yield* Layer.build(Layer.fresh(StoreSql.layerServer({ url })))
        const onOperator = <A, E>(effect: Effect.Effect<A, E, StoreSql.Services>) => Effect.provide(effect, operator)
        const lookUp = Effect.provide(KeyStore.KeyStore.use((keys) => keys.findByDigest("notify-digest")), server)

        const account = yield* onOperator(AccountStore.AccountStore.use((accounts) => accounts.create({ name: "N", plan: "free", at: T0 })))
        yield* onOperator(KeyStore.KeyStore.use((keys) =>
          keys.create({ accountId: account.id, name: "k", prefix: "ds_live_notify01", digest: "notify-digest", liveLimit: 2, at: T0 })
        ))
        assert.strictEqual((yield* lookUp)!.account.plan, "free")

        // Well inside the cache's TTL: only the notification can make the server read again.
        const seen = <A>(read: Effect.Effect<A>, done: (value: A) => boolean) =>
          Effect.gen(function*() {
            for (let attempt = 0; attempt < 40; attempt++) {
              if (done(yield* read)) return true
              yield* Effect.sleep("50 millis")
            }
            return false
          })
        yield* onOperator(AccountStore.AccountStore.use((accounts) => accounts.setPlan(account.id, "pro")))
        assert.isTrue(yield* seen(lookUp, (found) => found?.account.plan === "pro"), "the plan change was not seen within 2 s")
        // A rotation brings the old key's expiry forward: a cached look-up must not keep it live past it.
        yield* onOperator(KeyStore.KeyStore.use((keys) =>
          keys.rotate({
            prefix: "ds_live_notify01",
            successor: { name: "k", prefix: "dsk_notify002", digest: "notify-digest-2", expiresAt: null },
            liveLimit: 2,
            retireAt: T0 + 3_600_000,
            at: T0
          })
        ))
        assert.isTrue(yield* seen(lookUp, (found) => found?.key.expiresAt === T0 + 3_600_000), "the rotation was not seen within 2 s")
        yield* onOperator(KeyStore.KeyStore.use((keys) => keys.revoke("ds_live_notify01", T0 + 1)))
        assert.isTrue(yield* seen(lookUp, (found) => found?.key.revokedAt === T0 + 1), "the revocation was not seen within 2 s")
      }).pipe(Effect.scoped))
})
