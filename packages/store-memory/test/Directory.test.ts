import { assert, describe, it } from "@effect/vitest"
import { ApiKey, Cursor, Directory, Errors, HoldStore, KeyStore, ListingStore, ListQuery, Operators, Plan, RevealStore } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Context, Effect, Layer, Stream, Tracer } from "effect"
import { Digest, SecureRandom } from "effect/crypto"
import { TestClock } from "effect/testing"
import { callerOn, DAY, getView, HOUR, id, listing, listView, load, T0 } from "./support.ts"

const run = <A, E>(effect: Effect.Effect<A, E, Directory.Directory | Operators.Operators | RevealStore.RevealStore>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(T0)
    return yield* effect
  }).pipe(Effect.provide(StoreMemory.layerDirectory))

const rate = { allowed: true, limit: 60, remaining: 59, resetAt: T0 + 60_000 }

describe("Directory: authentication", () => {
  it.effect("refuses a missing, malformed, unknown or revoked key", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      const operators = yield* Operators.Operators
      const { caller, secret } = yield* callerOn("pro")
      for (const bad of [undefined, "", "not-a-key", `ds_live_${"A".repeat(43)}`, secret.toLowerCase()]) {
        const error = yield* Effect.flip(directory.authenticate(bad))
        assert.instanceOf(error, Errors.Unauthorized)
      }
      yield* operators.revokeKey(caller.key.prefix)
      const revoked = yield* Effect.flip(directory.authenticate(secret))
      assert.strictEqual(revoked.message, "The API key is not known or has been revoked")
    })))

  it.effect("a key with an expiry works until it, then reads as revoked; a rotation keeps the old key through its grace only", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      const operators = yield* Operators.Operators
      const account = yield* operators.createAccount("expiring", "free")
      const expiring = yield* operators.createKey(account.id, "ci", 90 * DAY)
      assert.strictEqual(expiring.key.expiresAt, T0 + 90 * DAY)
      const lasting = yield* operators.createKey(account.id, "laptop")
      assert.strictEqual(lasting.key.expiresAt, null)

      // Free allows two live keys; the key being rotated makes room for its successor.
      const rotated = yield* operators.rotateKey(lasting.key.prefix, 24 * HOUR)
      assert.strictEqual(rotated.key.name, "laptop")
      assert.strictEqual(rotated.retired.expiresAt, T0 + 24 * HOUR)
      assert.strictEqual((yield* directory.authenticate(rotated.secret)).accountId, account.id)
      assert.strictEqual((yield* directory.authenticate(lasting.secret)).accountId, account.id)

      yield* TestClock.adjust(24 * HOUR)
      const retired = yield* Effect.flip(directory.authenticate(lasting.secret))
      assert.strictEqual(retired.message, "The API key is not known or has been revoked")
      assert.strictEqual((yield* directory.authenticate(expiring.secret)).accountId, account.id)
      assert.deepStrictEqual(
        yield* Effect.flip(operators.rotateKey(lasting.key.prefix, HOUR)),
        new Errors.KeyNotFound({ prefix: lasting.key.prefix })
      )

      yield* TestClock.adjust(90 * DAY)
      const expired = yield* Effect.flip(directory.authenticate(expiring.secret))
      assert.strictEqual(expired.message, "The API key is not known or has been revoked")
      // Expired keys leave room under the plan's ceiling.
      const keys = yield* operators.listKeys(account.id, { after: undefined, limit: 10 })
      assert.deepStrictEqual(keys.data.map((key) => ApiKey.keyStateAt(key, T0 + 91 * DAY)), ["expired", "expired", "live"])
      yield* operators.createKey(account.id, "new")
    })))

  /** The directory over memory stores whose key store records every question it is asked. */
  const withCountedKeys = <A, E>(
    body: (asked: Array<string>) => Effect.Effect<A, E, Directory.Directory | Operators.Operators | KeyStore.KeyStore | Digest.Digest | SecureRandom.SecureRandom>
  ) => {
    const asked: Array<string> = []
    const countingKeys = Layer.effect(KeyStore.KeyStore, Effect.gen(function*() {
      const keys = yield* KeyStore.KeyStore
      return KeyStore.KeyStore.of({
        ...keys,
        findByDigest: (digest) => Effect.suspend(() => (asked.push("findByDigest"), keys.findByDigest(digest)))
      })
    }))
    return Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      return yield* body(asked)
    }).pipe(Effect.provide(Layer.mergeAll(Directory.Directory.layer, Operators.Operators.layer).pipe(
      Layer.provide(countingKeys),
      Layer.provideMerge(Cursor.CursorCodec.layer.pipe(Layer.provide(StoreMemory.layerEphemeralCursorSecret))),
      Layer.provideMerge(StoreMemory.layer),
      Layer.provideMerge(StoreMemory.layerCrypto)
    )))
  }

  it.effect("a key whose checksum fails is refused without asking the key store", () =>
    withCountedKeys((asked) =>
      Effect.gen(function*() {
        const directory = yield* Directory.Directory
        const { secret } = yield* callerOn("pro")
        asked.length = 0
        const last = secret.at(-1) === "A" ? "B" : "A"
        for (const bad of [secret.slice(0, -1) + last, `dsk_${"A".repeat(49)}`, secret.toLowerCase(), "not-a-key"]) {
          const error = yield* Effect.flip(directory.authenticate(bad))
          assert.match(error.message, /malformed/)
        }
        assert.deepStrictEqual(asked, [])
      })))

  // The SQL adapter's key look-ups remember both answers (store-sql caches.test.ts); the directory remembers none.
  it.effect("an unknown key and a revoked key take one path: one look-up each time", () =>
    withCountedKeys((asked) =>
      Effect.gen(function*() {
        const directory = yield* Directory.Directory
        const operators = yield* Operators.Operators
        const { caller, secret: revoked } = yield* callerOn("pro")
        yield* operators.revokeKey(caller.key.prefix)
        const unknownKey = yield* ApiKey.generateSecret
        const lookUps: Record<string, Array<number>> = { unknown: [], revoked: [] }
        for (let round = 0; round < 3; round++) {
          for (const [name, secret] of [["unknown", unknownKey], ["revoked", revoked]] as const) {
            asked.length = 0
            const error = yield* Effect.flip(directory.authenticate(secret))
            assert.strictEqual(error.message, "The API key is not known or has been revoked")
            lookUps[name]!.push(asked.length)
          }
        }
        assert.deepStrictEqual(lookUps, { unknown: [1, 1, 1], revoked: [1, 1, 1] })
      })))

  it.effect("keys of the earlier format work, and are refused once revoked, looked up as any other key", () =>
    withCountedKeys((asked) =>
      Effect.gen(function*() {
        const directory = yield* Directory.Directory
        const operators = yield* Operators.Operators
        const keys = yield* KeyStore.KeyStore
        const account = yield* operators.createAccount("legacy", "pro")
        // Issued before the checksum: only the store can hold one now.
        const legacy = `ds_live_${"Legacy0_".repeat(5)}abc`
        yield* keys.create({
          accountId: account.id,
          name: "old",
          prefix: ApiKey.prefixOf(legacy),
          digest: yield* ApiKey.digestOf(legacy),
          liveLimit: 5,
          at: T0
        })
        const random = `ds_live_${"Random0-".repeat(5)}xyz`
        asked.length = 0
        assert.strictEqual((yield* directory.authenticate(legacy)).accountId, account.id)
        assert.strictEqual((yield* Effect.flip(directory.authenticate(random))).message, "The API key is not known or has been revoked")
        yield* operators.revokeKey("ds_live_Legacy0_")
        assert.strictEqual((yield* Effect.flip(directory.authenticate(legacy))).message, "The API key is not known or has been revoked")
        assert.deepStrictEqual(asked, ["findByDigest", "findByDigest", "findByDigest"])
      })))

  it.effect("resolves the plan on every call: an upgrade or a lapse needs no new key", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      const operators = yield* Operators.Operators
      const { account, caller, secret } = yield* callerOn("free")
      assert.strictEqual(caller.plan.name, "free")
      yield* operators.setPlan(account.id, "business")
      assert.strictEqual((yield* directory.authenticate(secret)).plan.name, "business")
      yield* operators.setPlan(account.id, "lapsed")
      assert.strictEqual((yield* directory.authenticate(secret)).plan.name, "free")
    })))

  it.effect("enforces the plan's live-key ceiling; revoking frees a slot", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators.Operators
      const { account, caller } = yield* callerOn("free")
      yield* operators.createKey(account.id, "second")
      const refused = yield* Effect.flip(operators.createKey(account.id, "third"))
      assert.deepStrictEqual(refused, new Errors.KeyLimitReached({ limit: 2 }))
      yield* operators.revokeKey(caller.key.prefix)
      yield* operators.createKey(account.id, "third")
    })))
})

describe("Directory: reading", () => {
  /*
   * A page comes back from the listing store with its anchor's existence, the running holds and
   * the caller's reveals: the directory asks nothing else for it, and the store's answers decide.
   */
  it.effect("a page is one store call: the anchor, holds and reveals come with it and decide", () => {
    const asked: Array<string> = []
    const counted = <A>(name: string, effect: Effect.Effect<A>) => Effect.suspend(() => (asked.push(name), effect))
    const countingStores = Layer.effectContext(Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      const holds = yield* HoldStore.HoldStore
      const reveals = yield* RevealStore.RevealStore
      return Context.make(ListingStore.ListingStore, ListingStore.ListingStore.of({
        ...listings,
        find: (id) => counted("find", listings.find(id))
      })).pipe(
        Context.add(HoldStore.HoldStore, HoldStore.HoldStore.of({
          ...holds,
          runningOn: (ids, at) => counted("runningOn", holds.runningOn(ids, at))
        })),
        Context.add(RevealStore.RevealStore, RevealStore.RevealStore.of({
          ...reveals,
          revealedAmong: (account, ids) => counted("revealedAmong", reveals.revealedAmong(account, ids))
        }))
      )
    }))
    return Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const directory = yield* Directory.Directory
      const cursors = yield* Cursor.CursorCodec
      yield* load(listing("HELDROW1"), listing("HELDROW2"), listing("HELDROW3"))
      const { caller: holder } = yield* callerOn("pro", "holder")
      const { caller: reader } = yield* callerOn("pro", "reader")
      yield* directory.reveal(holder, "HELDROW1")
      yield* directory.hold(holder, "HELDROW1")
      yield* directory.reveal(reader, "HELDROW2")
      asked.length = 0
      const page = yield* listView(reader, yield* ListQuery.decode({}))
      assert.deepStrictEqual(page.data.map((row) => row.status === "active" ? [row.id, row.hold_state, row.domain] : [row.id]), [
        ["HELDROW1", "other", null],
        ["HELDROW2", "none", "heldrow2shop.com"],
        ["HELDROW3", "none", null]
      ])
      const held = yield* cursors.issue({ order: "id", id: "HELDROW3" as never })
      assert.deepStrictEqual((yield* listView(reader, yield* ListQuery.decode({ cursor: held }))).data, [])
      const gone = yield* cursors.issue({ order: "id", id: "NEVERHLD" as never })
      const error = yield* Effect.flip(listView(reader, yield* ListQuery.decode({ cursor: gone })))
      assert.instanceOf(error, Errors.InvalidRequest)
      assert.strictEqual((error as Errors.InvalidRequest).parameter, "cursor")
      assert.deepStrictEqual(asked, [])
    }).pipe(Effect.provide(Layer.mergeAll(Directory.Directory.layer, Operators.Operators.layer).pipe(
      Layer.provide(countingStores),
      Layer.provideMerge(Cursor.CursorCodec.layer.pipe(Layer.provide(StoreMemory.layerEphemeralCursorSecret))),
      Layer.provideMerge(StoreMemory.layer),
      Layer.provideMerge(StoreMemory.layerCrypto)
    )))
  })

  it.effect("hides listings younger than the plan's access delay", () =>
    run(Effect.gen(function*() {
      yield* load(
        listing("OLDOLD01", { discoveredAt: T0 - 8 * DAY }),
        listing("WEEKOLD1", { discoveredAt: T0 - 2 * DAY }),
        listing("HOUROLD1", { discoveredAt: T0 - HOUR })
      )
      const visible = Effect.fnUntraced(function*(plan: Plan.PlanName) {
        const { caller } = yield* callerOn(plan)
        const page = yield* listView(caller, yield* ListQuery.decode({}))
        return page.data.map((row) => row.id)
      })
      assert.deepStrictEqual(yield* visible("free"), ["OLDOLD01"])
      assert.deepStrictEqual(yield* visible("pro"), ["OLDOLD01", "WEEKOLD1"])
      assert.deepStrictEqual(yield* visible("business"), ["HOUROLD1", "OLDOLD01", "WEEKOLD1"])
      const { caller: free } = yield* callerOn("free", "free2")
      assert.instanceOf(yield* Effect.flip(getView(free, "HOUROLD1")), Errors.ListingNotFound)
    })))

  it.effect("discloses names per the domain rules, and reading never spends a reveal", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      yield* load(listing("REGULAR1", { tier: "regular" }), listing("OPENOPEN", { tier: "open" }))
      const { caller: free } = yield* callerOn("free")
      const { caller: business } = yield* callerOn("business")
      const regular = yield* getView(free, "REGULAR1")
      assert.strictEqual(regular.domain, null)
      assert.isFalse(regular.name_disclosed)
      assert.strictEqual(regular.mask_hint, "r*******shop.com")
      assert.strictEqual((yield* getView(free, "OPENOPEN")).domain, "openopenshop.com")
      assert.strictEqual((yield* getView(business, "REGULAR1")).domain, "regular1shop.com")
      assert.strictEqual((yield* directory.me(free, rate)).reveals.used, 0)
      yield* directory.reveal(free, "REGULAR1")
      const after = yield* getView(free, "REGULAR1")
      assert.strictEqual(after.domain, "regular1shop.com")
      assert.isTrue(after.name_disclosed)
    })))

  it.effect("publishes bands and ranges, never exact figures, and names null metrics", () =>
    run(Effect.gen(function*() {
      yield* load(listing("BANDED01", { backlinks: 120, domainAuthority: 35, directoryScore: 57, ageYears: null, category: null }))
      const { caller } = yield* callerOn("business")
      const row = yield* getView(caller, "BANDED01")
      assert.strictEqual(row.backlinks, "100-249")
      assert.strictEqual(row.domain_authority, "30-39")
      assert.deepStrictEqual(row.directory_score, { low: 50, high: 59 })
      assert.deepStrictEqual(row.metrics_missing, ["age_years", "category"])
      assert.strictEqual(row.category, null)
    })))

  it.effect("refuses since below business, unknown categories and foreign cursors", () =>
    run(Effect.gen(function*() {
      yield* load(listing("AAAAAAA1"), listing("AAAAAAA2"), listing("AAAAAAA3"))
      const { caller: pro } = yield* callerOn("pro")
      const since = yield* Effect.flip(listView(pro, yield* ListQuery.decode({ since: "2026-01-01T00:00:00Z" })))
      assert.instanceOf(since, Errors.UpgradeRequired)
      const category = yield* Effect.flip(listView(pro, yield* ListQuery.decode({ category: "tech,nope" })))
      assert.deepStrictEqual(category._tag === "InvalidRequest" && category.parameter, "category")
      const page = yield* listView(pro, yield* ListQuery.decode({ limit: "2" }))
      assert.isTrue(page.has_more)
      const next = page.next_cursor!
      const rest = yield* listView(pro, yield* ListQuery.decode({ limit: "2", cursor: next }))
      assert.deepStrictEqual(rest.data.map((row) => row.id), ["AAAAAAA3"])
      assert.isFalse(rest.has_more)
      assert.strictEqual(rest.next_cursor, null)
      const lowered = yield* Effect.flip(listView(pro, yield* ListQuery.decode({ cursor: next.toLowerCase() })))
      assert.deepStrictEqual(lowered._tag === "InvalidRequest" && lowered.parameter, "cursor")
      const otherOrder = yield* Effect.flip(listView(pro, yield* ListQuery.decode({ cursor: next, sort: "latest" })))
      assert.deepStrictEqual(otherOrder._tag === "InvalidRequest" && otherOrder.parameter, "cursor")
    })))

  it.effect("an unknown category or source is refused naming the parameter and the codes listings carry", () =>
    run(Effect.gen(function*() {
      yield* load(
        listing("AAAAAAA1", { category: "tech", source: "pool" }),
        listing("AAAAAAA2", { category: "food", source: "auction" }),
        listing("AAAAAAA3", { category: "gone", source: "gone", status: "draft" })
      )
      const { caller } = yield* callerOn("pro")
      const refusal = (raw: ListQuery.RawQuery) =>
        Effect.flatMap(ListQuery.decode(raw), (query) => Effect.flip(listView(caller, query)))
      assert.deepStrictEqual(
        yield* refusal({ category: "tech,nope" }),
        new Errors.InvalidRequest({ parameter: "category", message: "category accepts the codes listings carry: food, tech; unknown: \"nope\"" })
      )
      assert.deepStrictEqual(
        yield* refusal({ source: "gone,pool,nope" }),
        new Errors.InvalidRequest({ parameter: "source", message: "source accepts the codes listings carry: auction, pool; unknown: \"gone, nope\"" })
      )
      const page = yield* listView(caller, yield* ListQuery.decode({ source: "auction" }))
      assert.deepStrictEqual(page.data.map((row) => row.id), ["AAAAAAA2"])
    })))

  it.effect("a page whose rows carry every code it filters on asks the store about none; the others are still checked", () =>
    Effect.gen(function*() {
      const asked: Array<ReadonlyArray<string>> = []
      // The memory store, its code checks recorded: Directory gets it in place of the plain one.
      const recording = Layer.effect(
        ListingStore.ListingStore,
        Effect.map(ListingStore.ListingStore, (store): ListingStore.ListingStore["Service"] => ({
          ...store,
          unknownCodes: (field, codes) => Effect.suspend(() => (asked.push([field, ...codes]), store.unknownCodes(field, codes)))
        }))
      )
      const layer = Directory.Directory.layer.pipe(
        Layer.provide(Cursor.CursorCodec.layer.pipe(Layer.provide(StoreMemory.layerEphemeralCursorSecret))),
        Layer.provide(recording),
        Layer.provideMerge(Operators.Operators.layer),
        Layer.provideMerge(StoreMemory.layer),
        Layer.provideMerge(StoreMemory.layerCrypto)
      )
      yield* Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        yield* load(
          listing("AAAAAAA1", { category: "tech", source: "pool" }),
          listing("AAAAAAA2", { category: "food", source: "auction" }),
          listing("AAAAAAA3", { category: "travel", source: "pool" })
        )
        const { caller } = yield* callerOn("pro")
        const ids = (raw: ListQuery.RawQuery) =>
          Effect.map(Effect.flatMap(ListQuery.decode(raw), (query) => listView(caller, query)), (page) => page.data.map((row) => row.id))
        assert.deepStrictEqual(yield* ids({ category: "tech,food", source: "pool,auction" }), ["AAAAAAA1", "AAAAAAA2"])
        assert.deepStrictEqual(asked, [])
        // A page of one row cannot carry both codes: the one it lacks is asked about, and only it.
        assert.deepStrictEqual(yield* ids({ category: "tech,travel", limit: "1" }), ["AAAAAAA1"])
        assert.deepStrictEqual(asked, [["category", "travel"]])
        const refused = yield* Effect.flip(ids({ category: "tech,nope" }))
        assert.deepStrictEqual(refused._tag === "InvalidRequest" && refused.parameter, "category")
        // A bad cursor with an unknown code: the code is refused first.
        const both = yield* Effect.flip(ids({ source: "nope", cursor: "not-a-cursor" }))
        assert.deepStrictEqual(both._tag === "InvalidRequest" && both.parameter, "source")
      }).pipe(Effect.provide(layer))
    }))

  it.effect("past CODES_SHOWN codes, a refusal lists those from the unknown code on, and says how to go on", () =>
    run(Effect.gen(function*() {
      const codes = Array.from({ length: 2 * Directory.CODES_SHOWN + 3 }, (_, i) => `c${String(i).padStart(3, "0")}`)
      yield* load(...codes.map((code, i) => listing(`S${String(i).padStart(7, "0")}`, { source: code })))
      const { caller } = yield* callerOn("pro")
      const messageOf = (source: string) =>
        Effect.flatMap(ListQuery.decode({ source }), (query) =>
          Effect.map(Effect.flip(listView(caller, query)), (error) => error.message))
      const listed = (message: string) => /: (c[^;]*)(?:, …)?; /.exec(message)?.[1]!.replace(", …", "").split(", ") ?? []
      const first = yield* messageOf("zzz")
      assert.include(first, `source accepts the codes listings carry, more than ${Directory.CODES_SHOWN}`)
      assert.include(first, "the first: c000, c001")
      assert.include(first, "unknown: \"zzz\"")
      // Following "the next ones" from the first refusal walks every code, each once.
      const seen: Array<string> = []
      let message = first
      for (let step = 0; step < 10; step++) {
        seen.push(...listed(message))
        const next = /the next ones: source=(\S+);/.exec(message)?.[1]
        if (next === undefined) break
        message = yield* messageOf(next)
      }
      assert.deepStrictEqual(seen, codes)
      const near = yield* messageOf("c010x")
      assert.include(near, "those from \"c010x\" on: c011, c012")
    })))

  it.effect("a since run includes tombstones and its synced_at trails the clock by 120 s", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators.Operators
      yield* load(listing("FEED0001"), listing("FEED0002"))
      yield* operators.delist([id("FEED0002")], "sold")
      const { caller } = yield* callerOn("business")
      const page = yield* listView(caller, yield* ListQuery.decode({ since: new Date(T0 - 1000).toISOString() }))
      assert.deepStrictEqual(page.data, [
        { ...(yield* getView(caller, "FEED0001")) },
        { id: "FEED0002", status: "delisted", updated_at: new Date(T0).toISOString() }
      ])
      assert.strictEqual(page.synced_at, new Date(T0 - 120_000).toISOString())
      const plain = yield* listView(caller, yield* ListQuery.decode({}))
      assert.deepStrictEqual(plain.data.map((row) => row.id), ["FEED0001"])
      assert.instanceOf(yield* Effect.flip(getView(caller, "FEED0002")), Errors.ListingNotFound)
    })))
})

describe("Directory: reveal", () => {
  it.effect("charges a capped plan once; a repeat returns the original revealed_at for free", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      yield* load(listing("REVEAL01"))
      const { caller } = yield* callerOn("pro")
      const first = yield* directory.reveal(caller, "REVEAL01")
      assert.strictEqual(first.revealed_at, new Date(T0).toISOString())
      assert.strictEqual(first.domain, "reveal01shop.com")
      assert.strictEqual(first.availability_checked_at, new Date(T0).toISOString())
      yield* TestClock.adjust(HOUR)
      const repeat = yield* directory.reveal(caller, "REVEAL01")
      assert.strictEqual(repeat.revealed_at, first.revealed_at)
      assert.strictEqual(repeat.availability_checked_at, new Date(T0 + HOUR).toISOString())
      const me = yield* directory.me(caller, rate)
      assert.deepStrictEqual(me.reveals, { limit: 500, remaining: 499, used: 1, resets_at: "2026-07-01T00:00:00.000Z" })
    })))

  it.effect("open listings and plans without a ceiling cost nothing but are still revealed", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      const ledger = yield* RevealStore.RevealStore
      yield* load(listing("OPENOPEN", { tier: "open" }), listing("REGULAR1"))
      const { caller: free } = yield* callerOn("free")
      const { caller: business } = yield* callerOn("business")
      yield* directory.reveal(free, "OPENOPEN")
      yield* directory.reveal(business, "REGULAR1")
      assert.strictEqual((yield* directory.me(free, rate)).reveals.used, 0)
      assert.deepStrictEqual((yield* directory.me(business, rate)).reveals, {
        limit: null,
        remaining: null,
        used: 0,
        resets_at: "2026-07-01T00:00:00.000Z"
      })
      assert.isDefined(yield* ledger.find(free.accountId, "OPENOPEN"))
      assert.isDefined(yield* ledger.find(business.accountId, "REGULAR1"))
    })))

  it.effect("refuses past the monthly ceiling until the next calendar month", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      const ids = Array.from({ length: 11 }, (_, i) => `QUOTA${String(i).padStart(3, "0")}`)
      yield* load(...ids.map((value) => listing(value)))
      const { caller } = yield* callerOn("free")
      for (const value of ids.slice(0, 10)) yield* directory.reveal(caller, value)
      const refused = yield* Effect.flip(directory.reveal(caller, ids[10]!))
      assert.deepStrictEqual(refused, new Errors.QuotaExhausted({ resetsAt: Date.UTC(2026, 6, 1) }))
      const repeat = yield* directory.reveal(caller, ids[0]!)
      assert.strictEqual(repeat.revealed_at, new Date(T0).toISOString())
      yield* TestClock.setTime(Date.UTC(2026, 6, 1))
      yield* directory.reveal(caller, ids[10]!)
      assert.strictEqual((yield* directory.me(caller, rate)).reveals.used, 1)
    })))

  it.effect("refuses featured on free, unknown and delisted listings", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      const operators = yield* Operators.Operators
      yield* load(listing("FEATURE1", { tier: "featured" }), listing("GONEGONE"), listing("DRAFTED1", { status: "draft" }))
      yield* operators.delist([id("GONEGONE")], "blocked")
      const { caller } = yield* callerOn("free")
      assert.deepStrictEqual(yield* Effect.flip(directory.reveal(caller, "FEATURE1")), new Errors.FeaturedRequiresPro())
      for (const value of ["GONEGONE", "DRAFTED1", "NOSUCHID", "feature1", "short"]) {
        assert.instanceOf(yield* Effect.flip(directory.reveal(caller, value)), Errors.ListingNotFound)
      }
      assert.strictEqual((yield* directory.me(caller, rate)).reveals.used, 0)
    })))
})

describe("Directory: holds", () => {
  it.effect("needs a plan with holds and a reveal of this account; a disclosed name is not a reveal", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      yield* load(listing("HOLDME01"))
      const { caller: free } = yield* callerOn("free")
      const { caller: business } = yield* callerOn("business")
      assert.deepStrictEqual(yield* Effect.flip(directory.hold(free, "HOLDME01")), new Errors.HoldsRequirePro())
      assert.strictEqual((yield* getView(business, "HOLDME01")).domain, "holdme01shop.com")
      assert.deepStrictEqual(yield* Effect.flip(directory.hold(business, "HOLDME01")), new Errors.RevealRequired())
      yield* directory.reveal(business, "HOLDME01")
      const held = yield* directory.hold(business, "HOLDME01")
      assert.deepStrictEqual(held.holds, { active: 1, hold_hours: 168, limit: 20, plan: "business" })
      assert.strictEqual(held.hold.expires_at, new Date(T0 + 168 * HOUR).toISOString())
      assert.isTrue(held.hold.can_extend)
      assert.strictEqual(held.hold.extend_hours, 168)
    })))

  it.effect("another account's hold hides the name from everyone else and refuses their first reveal", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      yield* load(listing("CONTEST1", { tier: "open" }))
      const before = yield* Effect.flatMap(callerOn("business", "reader"), ({ caller }) => getView(caller, "CONTEST1"))
      const { caller: holder } = yield* callerOn("pro", "holder")
      const { caller: earlier } = yield* callerOn("pro", "earlier")
      const { caller: later } = yield* callerOn("business", "later")
      yield* directory.reveal(earlier, "CONTEST1")
      yield* directory.reveal(holder, "CONTEST1")
      const held = yield* directory.hold(holder, "CONTEST1")
      const mine = yield* getView(holder, "CONTEST1")
      assert.strictEqual(mine.hold_state, "mine")
      assert.strictEqual(mine.domain, "contest1shop.com")
      assert.strictEqual(mine.updated_at, before.updated_at)
      const theirs = yield* getView(later, "CONTEST1")
      assert.strictEqual(theirs.hold_state, "other")
      assert.strictEqual(theirs.domain, null)
      assert.strictEqual(theirs.hold_expires_at, held.hold.expires_at)
      const refused = yield* Effect.flip(directory.reveal(later, "CONTEST1"))
      assert.deepStrictEqual(refused, new Errors.HeldByOther({ expiresAt: T0 + 48 * HOUR }))
      const unrevealed = yield* Effect.flip(directory.hold(later, "CONTEST1"))
      assert.deepStrictEqual(unrevealed, new Errors.HeldByOther({ expiresAt: T0 + 48 * HOUR }))
      const reopened = yield* directory.reveal(earlier, "CONTEST1")
      assert.strictEqual(reopened.domain, null)
      const taken = yield* Effect.flip(directory.hold(earlier, "CONTEST1"))
      assert.deepStrictEqual(taken, new Errors.HeldByOther({ expiresAt: T0 + 48 * HOUR }))
      yield* TestClock.adjust(48 * HOUR)
      assert.strictEqual((yield* getView(later, "CONTEST1")).domain, "contest1shop.com")
      assert.strictEqual((yield* directory.hold(earlier, "CONTEST1")).holds.active, 1)
    })))

  it.effect("hold again returns the same hold; extend once; end; cooldown; the holds list", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      yield* load(listing("LIFECYC1"))
      const { caller } = yield* callerOn("pro")
      yield* directory.reveal(caller, "LIFECYC1")
      const first = yield* directory.hold(caller, "LIFECYC1")
      yield* TestClock.adjust(HOUR)
      assert.deepStrictEqual((yield* directory.hold(caller, "LIFECYC1")).hold, first.hold)
      const extended = yield* directory.extend(caller, first.hold.id)
      assert.strictEqual(extended.hold.expires_at, new Date(T0 + 72 * HOUR).toISOString())
      assert.isFalse(extended.hold.can_extend)
      assert.deepStrictEqual(yield* Effect.flip(directory.extend(caller, first.hold.id)), new Errors.AlreadyExtended())
      const ended = yield* directory.end(caller, first.hold.id, "registered")
      assert.strictEqual(ended.hold.state, "registered")
      assert.strictEqual(ended.holds.active, 0)
      assert.deepStrictEqual(yield* Effect.flip(directory.end(caller, first.hold.id, "released")), new Errors.HoldOver({ state: "registered" }))
      assert.deepStrictEqual(yield* Effect.flip(directory.extend(caller, first.hold.id)), new Errors.HoldOver({ state: "registered" }))
      const cooldown = yield* Effect.flip(directory.hold(caller, "LIFECYC1"))
      assert.deepStrictEqual(cooldown, new Errors.HoldCooldown({ availableAt: T0 + HOUR + 30 * DAY }))
      const list = yield* directory.holds(caller)
      assert.deepStrictEqual(list.data.map((hold) => [hold.id, hold.state, hold.ended_at]), [
        [first.hold.id, "registered", new Date(T0 + HOUR).toISOString()]
      ])
      const { caller: stranger } = yield* callerOn("pro", "stranger")
      assert.deepStrictEqual(yield* Effect.flip(directory.end(stranger, first.hold.id, "released")), new Errors.HoldNotFound({ holdId: first.hold.id }))
      yield* TestClock.adjust(31 * DAY)
      assert.deepStrictEqual((yield* directory.holds(caller)).data, [])
    })))
})

describe("Directory: tracing", () => {
  it.effect("runs each use case in a span of its name, for an embedder's tracer", () => {
    const spans: Array<Tracer.NativeSpan> = []
    const tracer = Tracer.make({
      span(options) {
        const span = new Tracer.NativeSpan(options)
        spans.push(span)
        return span
      }
    })
    return run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      yield* load(listing("Aa000001"))
      const { caller, secret } = yield* callerOn("pro")
      spans.length = 0
      yield* directory.authenticate(secret)
      yield* directory.list(caller, yield* ListQuery.decode({}))
      yield* directory.get(caller, "Aa000001")
      const names = spans.map((span) => span.name)
      assert.includeMembers(names, ["Directory.authenticate", "Directory.list", "Directory.get"])
      const page = spans.find((span) => span.name === "Directory.list")!
      assert.strictEqual(page.status._tag, "Ended")
    }).pipe(Effect.provideService(Tracer.Tracer, tracer)))
  })
})

describe("Directory: bulk snapshot", () => {
  /** The directory over memory stores whose listing store hands over `chunks` chunks and counts them. */
  const withCountedSnapshot = (chunks: number) => {
    const progress = { emitted: 0 }
    const counting = Layer.effect(ListingStore.ListingStore, Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      return ListingStore.ListingStore.of({
        ...listings,
        snapshot: (_request, emit) =>
          Effect.gen(function*() {
            for (let i = 0; i < chunks; i++) {
              yield* emit({ rows: [{ ...listing(`SNAPC${String(i).padStart(3, "0")}`), updatedAt: T0 } as never], running: new Map(), revealed: new Set() })
              progress.emitted++
            }
          })
      })
    }))
    const layer = Layer.mergeAll(Directory.Directory.layer, Operators.Operators.layer).pipe(
      Layer.provide(counting),
      Layer.provideMerge(Cursor.CursorCodec.layer.pipe(Layer.provide(StoreMemory.layerEphemeralCursorSecret))),
      Layer.provideMerge(StoreMemory.layer),
      Layer.provideMerge(StoreMemory.layerCrypto)
    )
    return { progress, layer }
  }

  it.effect("reads at most a chunk or two ahead of a consumer that is slower than the store", () => {
    const { layer, progress } = withCountedSnapshot(40)
    return Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const directory = yield* Directory.Directory
      const { caller } = yield* callerOn("business")
      let consumed = 0
      let mostAhead = 0
      let end: Directory.SnapshotItem | undefined
      yield* Stream.runForEach(yield* directory.snapshot(caller), (item) =>
        Effect.gen(function*() {
          if (item._tag === "End") end = item
          else consumed++
          // A slow consumer: the store gets every chance to run ahead.
          for (let i = 0; i < 20; i++) yield* Effect.yieldNow
          mostAhead = Math.max(mostAhead, progress.emitted - consumed)
        }))
      assert.strictEqual(consumed, 40)
      assert.strictEqual(end?._tag, "End")
      assert.isAtMost(mostAhead, 2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("is for plans with the since feed; free and pro are refused UpgradeRequired naming snapshot", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      for (const plan of ["free", "pro"] as const) {
        const { caller } = yield* callerOn(plan, `snap-${plan}`)
        const error = yield* Effect.flip(directory.snapshot(caller))
        assert.instanceOf(error, Errors.UpgradeRequired)
        assert.strictEqual(error.feature, "snapshot")
      }
    })))
})
