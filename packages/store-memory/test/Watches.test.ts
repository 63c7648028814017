import { assert, describe, it } from "@effect/vitest"
import { Cursor, Directory, DirectoryMetrics, ListQuery, Operators, WatchStore, Watches, Webhook, WebhookSender } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Effect, Layer, Metric } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { callerOn, DAY, getView, HOUR, id, listing, listView, load, T0 } from "./support.ts"

/*
 * The watch use cases over the memory stores, with the clock under test control and a webhook
 * sender that records what it is asked to send and answers as scripted.
 */

interface Sent {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

type Answer = Webhook.AttemptResult

const senderLayer = (sent: Array<Sent>, answers: Array<Answer>) =>
  Layer.succeed(WebhookSender.WebhookSender, WebhookSender.WebhookSender.of({
    send: (request) =>
      Effect.sync(() => {
        sent.push(request)
        return { result: answers.shift() ?? { _tag: "Answered", status: 204, retryAfterMs: undefined }, durationMs: 3 }
      }),
    // The resolver of the tests: names under .internal resolve to a private address.
    vet: (url) => Effect.succeed(new URL(url).hostname.endsWith(".internal") ? "must name a public host; it resolves to 10.0.0.7" : undefined)
  }))

type Services = Directory.Directory | Operators.Operators | Watches.Watches | WatchStore.WatchStore

const run = <A, E>(
  effect: Effect.Effect<A, E, Services>,
  options: { readonly sent?: Array<Sent>; readonly answers?: Array<Answer>; readonly allowPrivate?: boolean } = {}
) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(T0)
    return yield* effect
  }).pipe(
    Effect.provide(
      Layer.mergeAll(Directory.Directory.layer, Operators.Operators.layer, Watches.Watches.layer).pipe(
        Layer.provide(senderLayer(options.sent ?? [], options.answers ?? [])),
        Layer.provide(Layer.succeed(Watches.WatchSettingsRef, { ...Watches.DEFAULT_SETTINGS, allowPrivate: options.allowPrivate ?? false })),
        Layer.provide(Cursor.CursorCodec.layer.pipe(Layer.provide(StoreMemory.layerEphemeralCursorSecret))),
        Layer.provideMerge(StoreMemory.layer),
        Layer.provideMerge(StoreMemory.layerCrypto)
      )
    )
  )

/**
 * Verifies as a receiver would at the moment of delivery: the package compares the timestamp
 * with its own clock (5 minutes' tolerance), and the deliveries here carry the test clock's time.
 */
const verify = (secret: string, request: Sent): any => {
  const realNow = Date.now
  Date.now = () => Number(request.headers["webhook-timestamp"]) * 1000
  try {
    return new StandardWebhook(secret).verify(request.body, request.headers)
  } finally {
    Date.now = realNow
  }
}

const drain = Watches.Watches.use(Watches.Watches.drain)

describe("Watches: the resource", () => {
  it.effect("reads a query with the GET /domains schema and its messages, without cursor, since, sort or limit", () =>
    run(Effect.gen(function*() {
      const watches = yield* Watches.Watches
      const { caller } = yield* callerOn("business")
      const bad = yield* Effect.flip(watches.create(caller, { name: "w", query: { tld: ".com" } }))
      const listRefusal = ListQuery.decodeListQuery({ tld: ".com" })
      assert.strictEqual(bad._tag, "InvalidRequest")
      assert.strictEqual(bad._tag === "InvalidRequest" && bad.parameter, "query.tld")
      assert.strictEqual(bad._tag === "InvalidRequest" && bad.message, listRefusal._tag === "Failure" ? listRefusal.failure.message : "")
      for (const excluded of ["cursor", "since", "sort", "limit"]) {
        const refused = yield* Effect.flip(watches.create(caller, { name: "w", query: { [excluded]: "x" } }))
        assert.strictEqual(refused._tag === "InvalidRequest" && refused.parameter, `query.${excluded}`)
      }
      const created = yield* watches.create(caller, { name: " Cheap .com ", query: { tld: "COM", rsMin: 40, featured: false, category: ["tech", "food"] } })
      assert.deepStrictEqual(created.query, { category: "tech,food", featured: "false", rsMin: "40", tld: "com" })
      assert.strictEqual(created.name, "Cheap .com")
      assert.strictEqual(created.webhook, null)
      assert.isUndefined(created.webhook_secret)
      assert.deepStrictEqual((yield* watches.list(caller)).data, [created])
    })))

  it.effect("holds each plan to its number of watches", () =>
    run(Effect.gen(function*() {
      const watches = yield* Watches.Watches
      for (const [plan, limit] of [["free", 1], ["pro", 10], ["lapsed", 1]] as const) {
        const { caller } = yield* callerOn(plan)
        for (let i = 0; i < limit; i++) yield* watches.create(caller, { name: `w${i}` })
        const refused = yield* Effect.flip(watches.create(caller, { name: "one too many" }))
        assert.deepStrictEqual([refused._tag, refused._tag === "WatchLimitReached" && refused.limit], ["WatchLimitReached", limit])
      }
    })))

  it.effect("a webhook URL must be https and public unless private receivers are allowed; its secret is shown once", () =>
    Effect.gen(function*() {
      for (const url of ["https://hooks.internal/x", "http://example.com/hook", "https://127.0.0.1/hook", "https://[::1]/hook", "https://10.1.2.3/", "https://localhost/x", "https://u:p@example.com/", "ftp://example.com"]) {
        const refused = yield* Effect.flip(run(Effect.gen(function*() {
          const { caller } = yield* callerOn("pro")
          return yield* (yield* Watches.Watches).create(caller, { name: "w", webhook_url: url })
        })))
        assert.strictEqual(refused._tag === "InvalidRequest" && refused.parameter, "webhook_url", url)
      }
      yield* run(Effect.gen(function*() {
        const watches = yield* Watches.Watches
        const { caller } = yield* callerOn("pro")
        const created = yield* watches.create(caller, { name: "w", webhook_url: "http://127.0.0.1:9/hook" })
        assert.match(created.webhook_secret!, /^whsec_[A-Za-z0-9+/]{43}=$/)
        const shown = yield* watches.get(caller, created.id)
        assert.notProperty(shown, "webhook_secret")
        assert.deepStrictEqual(shown.webhook, { url: "http://127.0.0.1:9/hook", state: "active", state_reason: null, previous_secret_expires_at: null })
      }), { allowPrivate: true })
    }))

  it.effect("another account's watch is not found, and cannot be changed, deleted or read", () =>
    run(Effect.gen(function*() {
      const watches = yield* Watches.Watches
      const { caller: owner } = yield* callerOn("pro", "owner")
      const { caller: other } = yield* callerOn("pro", "other")
      const watch = yield* watches.create(owner, { name: "mine" })
      const attempts: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
        watches.get(other, watch.id),
        watches.update(other, watch.id, { name: "x" }),
        watches.remove(other, watch.id),
        watches.matches(other, watch.id, {})
      ]
      for (const attempt of attempts) {
        assert.strictEqual((yield* Effect.flip(attempt))._tag, "WatchNotFound")
      }
      const patched = yield* watches.update(owner, watch.id, { name: "renamed", query: { tld: "io" }, paused: true })
      assert.deepStrictEqual([patched.name, patched.query, patched.paused], ["renamed", { tld: "io" }, true])
      yield* watches.remove(owner, watch.id)
      assert.strictEqual((yield* Effect.flip(watches.get(owner, watch.id)))._tag, "WatchNotFound")
    })))
})

describe("Watches: matching", () => {
  it.effect("a free account's watch never hears of a listing before a free account could list it", () =>
    run(Effect.gen(function*() {
      const watches = yield* Watches.Watches
      const { caller: free } = yield* callerOn("free")
      const { caller: pro } = yield* callerOn("pro")
      const freeWatch = yield* watches.create(free, { name: "all" })
      const proWatch = yield* watches.create(pro, { name: "all" })
      yield* TestClock.adjust(1000)
      yield* load(listing("FRESHLS1", { discoveredAt: T0 + 1000 }))
      const listable = (caller: Directory.Caller) =>
        Effect.map(listView(caller, { limit: 50, order: "id", cursor: undefined, since: undefined, filters: {} }), (page) => page.data.length)
      const matched = (caller: Directory.Caller, watchId: string) => Effect.map(watches.matches(caller, watchId, {}), (page) => page.data.length)
      for (const step of [HOUR, DAY - HOUR - 1, 1, 6 * DAY - 1, 1]) {
        yield* TestClock.adjust(step)
        yield* drain
        assert.strictEqual(yield* matched(free, freeWatch.id), Math.min(1, yield* listable(free)))
        assert.strictEqual(yield* matched(pro, proWatch.id), Math.min(1, yield* listable(pro)))
      }
      assert.strictEqual(yield* matched(free, freeWatch.id), 1)
    })))

  it.effect("a match shows its listing as the account reads it now: the name only once disclosed", () =>
    run(Effect.gen(function*() {
      const watches = yield* Watches.Watches
      const directory = yield* Directory.Directory
      const { caller } = yield* callerOn("pro")
      const watch = yield* watches.create(caller, { name: "all" })
      yield* TestClock.adjust(1000)
      yield* load(listing("SECRETN1", { domain: "secretname.com", tier: "regular" }))
      yield* drain
      const before = (yield* watches.matches(caller, watch.id, {})).data[0]!
      assert.strictEqual(before.listing?.domain, null)
      assert.isFalse(before.listing?.name_disclosed)
      yield* directory.reveal(caller, "SECRETN1")
      const after = (yield* watches.matches(caller, watch.id, {})).data[0]!
      assert.strictEqual(after.listing?.domain, "secretname.com")
      assert.strictEqual(after.id, before.id)
    })))

  it.effect("a page of matches shows each listing as GET /domains/{id} shows it to the account, held and revealed alike", () =>
    run(Effect.gen(function*() {
      const watches = yield* Watches.Watches
      const directory = yield* Directory.Directory
      const operators = yield* Operators.Operators
      const { caller } = yield* callerOn("pro")
      const { caller: other } = yield* callerOn("pro", "other")
      const watch = yield* watches.create(caller, { name: "all" })
      yield* TestClock.adjust(1000)
      const ids = ["VIEWREV1", "VIEWOTH1", "VIEWMINE", "VIEWPLN1", "VIEWOPEN", "VIEWGONE"]
      yield* load(...ids.map((listingId) => listing(listingId, { tier: listingId === "VIEWOPEN" ? "open" : "regular" })))
      yield* drain
      yield* directory.reveal(caller, "VIEWREV1")
      yield* directory.reveal(other, "VIEWOTH1")
      yield* directory.hold(other, "VIEWOTH1")
      yield* directory.reveal(caller, "VIEWMINE")
      yield* directory.hold(caller, "VIEWMINE")
      yield* operators.delist([id("VIEWGONE")], "sold")
      const page = yield* watches.matches(caller, watch.id, {})
      assert.deepStrictEqual(page.data.map((match) => match.listing?.id ?? null), [...ids.slice(0, 5), null])
      for (const [index, match] of page.data.entries()) {
        const read = yield* Effect.result(getView(caller, ids[index]!))
        assert.deepStrictEqual(match.listing, read._tag === "Success" ? read.success : null)
      }
      assert.deepStrictEqual(page.data.map((match) => match.listing?.hold_state), ["none", "other", "mine", "none", "none", undefined])
    })))

  it.effect("pages matches oldest first by an opaque cursor", () =>
    run(Effect.gen(function*() {
      const watches = yield* Watches.Watches
      const { caller } = yield* callerOn("business")
      const watch = yield* watches.create(caller, { name: "all" })
      yield* TestClock.adjust(1000)
      const ids = ["PAGEDLS1", "PAGEDLS2", "PAGEDLS3", "PAGEDLS4", "PAGEDLS5"]
      for (const listingId of ids) {
        yield* load(listing(listingId))
        yield* drain
      }
      const seen: Array<string> = []
      let cursor: string | undefined
      do {
        const page = yield* watches.matches(caller, watch.id, { cursor, limit: 2 })
        seen.push(...page.data.map((match) => match.listing!.id))
        cursor = page.next_cursor ?? undefined
      } while (cursor !== undefined)
      assert.deepStrictEqual(seen, ids)
      const refused = yield* Effect.flip(watches.matches(caller, watch.id, { cursor: "bm90LWEtY3Vyc29y" }))
      assert.strictEqual(refused._tag === "InvalidRequest" && refused.parameter, "cursor")
    })))

  it.effect("the last page's cursor, kept, asks later for only the newer matches", () =>
    run(Effect.gen(function*() {
      const watches = yield* Watches.Watches
      const { caller } = yield* callerOn("business")
      const watch = yield* watches.create(caller, { name: "all" })
      yield* TestClock.adjust(1000)
      yield* load(listing("KEPTCUR1"), listing("KEPTCUR2"), listing("KEPTCUR3"))
      yield* drain
      const first = yield* watches.matches(caller, watch.id, { limit: 2 })
      const last = yield* watches.matches(caller, watch.id, { cursor: first.next_cursor!, limit: 2 })
      assert.deepStrictEqual([last.data.map((match) => match.listing!.id), last.has_more], [["KEPTCUR3"], false])
      const kept = last.next_cursor!
      assert.deepStrictEqual(yield* watches.matches(caller, watch.id, { cursor: kept }), { data: [], next_cursor: null, has_more: false })
      yield* load(listing("KEPTCUR4"))
      yield* drain
      const later = yield* watches.matches(caller, watch.id, { cursor: kept })
      assert.deepStrictEqual(later.data.map((match) => match.listing!.id), ["KEPTCUR4"])
    })))

  it("each listing matches a watch once per generation in which a round saw it active (property)", async () => {
    type Op =
      | { readonly kind: "upsert"; readonly listing: number; readonly active: boolean }
      | { readonly kind: "delist"; readonly listing: number }
      | { readonly kind: "round" }
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant("upsert" as const), listing: fc.integer({ min: 0, max: 2 }), active: fc.boolean() }),
      fc.record({ kind: fc.constant("delist" as const), listing: fc.integer({ min: 0, max: 2 }) }),
      fc.constant({ kind: "round" as const })
    )
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), (ops) =>
        Effect.runPromise(run(Effect.gen(function*() {
          const watches = yield* Watches.Watches
          const operators = yield* Operators.Operators
          const store = yield* WatchStore.WatchStore
          const { caller } = yield* callerOn("business")
          const watch = yield* watches.create(caller, { name: "all" })
          const ids = ["PROPLST0", "PROPLST1", "PROPLST2"]
          // The model: each listing's status, and how many of its generations a round saw active.
          const model = ids.map(() => ({ status: "none" as "none" | "active" | "draft" | "gone", seenThisGeneration: false, expected: 0 }))
          for (const step of [...ops, { kind: "round" } as const]) {
            yield* TestClock.adjust(1000)
            if (step.kind === "upsert") {
              const state = model[step.listing]!
              if (state.status === "gone") state.seenThisGeneration = false
              state.status = step.active ? "active" : "draft"
              yield* operators.upsertListings([listing(ids[step.listing]!, { status: step.active ? "active" : "draft" })])
            } else if (step.kind === "delist") {
              const state = model[step.listing]!
              if (state.status !== "none") state.status = "gone"
              yield* operators.delist([id(ids[step.listing]!)], "delisted")
            } else {
              yield* drain
              for (const state of model) {
                if (state.status === "active" && !state.seenThisGeneration) {
                  state.seenThisGeneration = true
                  state.expected++
                }
              }
            }
          }
          const matches = yield* store.matches(watch.id, undefined, 1000)
          assert.deepStrictEqual(ids.map((listingId) => matches.filter((match) => match.listingId === listingId).length), model.map((state) => state.expected))
        })).pipe(Effect.provide(TestClock.layer())))
      ),
      {
        numRuns: 60,
        // Listed, matched, delisted, listed again: a second match.
        examples: [[[{ kind: "upsert", listing: 0, active: true }, { kind: "round" }, { kind: "delist", listing: 0 }, { kind: "upsert", listing: 0, active: true }]]]
      }
    )
  })
})

describe("Watches: webhook delivery (Standard Webhooks v1)", () => {
  const withHook = (body: (sent: Array<Sent>) => Effect.Effect<void, unknown, Services>, answers: Array<Answer> = []) => {
    const sent: Array<Sent> = []
    return run(body(sent), { sent, answers, allowPrivate: true })
  }

  const setUp = Effect.gen(function*() {
    const watches = yield* Watches.Watches
    const { caller } = yield* callerOn("business")
    const created = yield* watches.create(caller, { name: "all", webhook_url: "http://127.0.0.1:1/hook" })
    yield* TestClock.adjust(1000)
    return { watches, caller, created }
  })

  it.effect("signs each delivery so the standardwebhooks package verifies it; webhook-id is the match id", () =>
    withHook((sent) =>
      Effect.gen(function*() {
        const { caller, created, watches } = yield* setUp
        yield* load(listing("SIGNEDL1", { tier: "open", domain: "opendomain.com" }))
        yield* drain
        assert.strictEqual(sent.length, 1)
        const request = sent[0]!
        const payload = verify(created.webhook_secret!, request) as any
        const [match] = (yield* watches.matches(caller, created.id, {})).data
        assert.strictEqual(request.headers["webhook-id"], match!.id)
        assert.strictEqual(payload.type, "watch.match")
        assert.strictEqual(payload.data.watch_id, created.id)
        assert.deepStrictEqual(payload.data.match, match)
        assert.strictEqual(Number(request.headers["webhook-timestamp"]), Math.floor((T0 + 1000) / 1000))
        assert.throws(() => verify(Webhook.secretFrom(new Uint8Array(32)), request))
        const attempts = (yield* watches.deliveries(caller, created.id)).data
        assert.deepStrictEqual(attempts.map((a) => [a.event_id, a.attempt, a.status_code, a.error]), [[match!.id, 1, 204, null]])
      })))

  it.effect("retries on the specification's schedule with jitter, honours Retry-After, and keeps webhook-id", () =>
    withHook(
      (sent) =>
        Effect.gen(function*() {
          const { caller, created, watches } = yield* setUp
          yield* load(listing("RETRIED1"))
          yield* drain
          assert.strictEqual(sent.length, 1)
          // 5 s ± 10 %: not before 4.5 s, by 5.5 s.
          yield* TestClock.adjust(4_499)
          yield* drain
          assert.strictEqual(sent.length, 1)
          yield* TestClock.adjust(1_001)
          yield* drain
          assert.strictEqual(sent.length, 2)
          // 429 with Retry-After: 3600 s, longer than the 5 minutes the schedule asks.
          yield* TestClock.adjust(10 * 60_000)
          yield* drain
          assert.strictEqual(sent.length, 2)
          yield* TestClock.adjust(HOUR)
          yield* drain
          assert.strictEqual(sent.length, 3)
          assert.deepStrictEqual(new Set(sent.map((s) => s.headers["webhook-id"])).size, 1)
          for (const request of sent) verify(created.webhook_secret!, request)
          const attempts = (yield* watches.deliveries(caller, created.id)).data
          assert.deepStrictEqual(attempts.map((a) => [a.attempt, a.status_code, a.error]), [[3, 200, null], [2, 429, null], [1, null, "connect ECONNREFUSED"]])
        }),
      [
        { _tag: "Failed", error: "connect ECONNREFUSED" },
        { _tag: "Answered", status: 429, retryAfterMs: 3_600_000 },
        { _tag: "Answered", status: 200, retryAfterMs: undefined }
      ]
    ))

  it.effect("the delivery queue's gauges: how many deliveries wait, and for how long the oldest has", () =>
    withHook(
      (sent) =>
        Effect.gen(function*() {
          const { watches } = yield* setUp
          const gauges = Effect.all([Metric.value(DirectoryMetrics.pendingDeliveries), Metric.value(DirectoryMetrics.oldestPendingAge)]).pipe(
            Effect.map(([pending, age]) => [pending.value, age.value])
          )
          yield* load(listing("QUEUED01"))
          yield* drain
          assert.strictEqual(sent.length, 1)
          yield* TestClock.adjust(3_000)
          yield* watches.sampleQueue
          assert.deepStrictEqual(yield* gauges, [1, 3])
          yield* TestClock.adjust(3_000)
          yield* drain
          assert.strictEqual(sent.length, 2)
          yield* watches.sampleQueue
          assert.deepStrictEqual(yield* gauges, [0, 0])
        }),
      [{ _tag: "Answered", status: 503, retryAfterMs: undefined }]
    ))

  it.effect("410 Gone disables the webhook at once; the pull endpoint still has the match", () =>
    withHook(
      (sent) =>
        Effect.gen(function*() {
          const { caller, created, watches } = yield* setUp
          yield* load(listing("GONELST1"))
          yield* drain
          assert.strictEqual(sent.length, 1)
          yield* load(listing("GONELST2"))
          yield* drain
          assert.strictEqual(sent.length, 1)
          const watch = yield* watches.get(caller, created.id)
          assert.strictEqual(watch.webhook?.state, "disabled")
          assert.match(watch.webhook?.state_reason ?? "", /410/)
          yield* TestClock.adjust(DAY)
          yield* drain
          assert.strictEqual(sent.length, 1)
          assert.strictEqual((yield* watches.matches(caller, created.id, {})).data.length, 2)
          // Setting the URL again re-enables it; the waiting delivery goes out.
          yield* watches.update(caller, created.id, { webhook_url: "http://127.0.0.1:1/hook" })
          yield* drain
          assert.strictEqual(sent.length, 2)
        }),
      [{ _tag: "Answered", status: 410, retryAfterMs: undefined }]
    ))

  it.effect("after the schedule is spent the webhook is paused with a reason; a re-send is one attempt", () =>
    withHook(
      (sent) =>
        Effect.gen(function*() {
          const { caller, created, watches } = yield* setUp
          yield* load(listing("FAILING1"))
          for (let hour = 0; hour < 4 * 24 && sent.length < Webhook.RETRY_SCHEDULE_MS.length; hour++) {
            yield* drain
            yield* TestClock.adjust(HOUR)
          }
          yield* drain
          assert.strictEqual(sent.length, 10)
          const watch = yield* watches.get(caller, created.id)
          assert.strictEqual(watch.webhook?.state, "paused")
          assert.match(watch.webhook?.state_reason ?? "", /10 attempts failed \(last: HTTP 500\)/)
          yield* TestClock.adjust(2 * DAY)
          yield* drain
          assert.strictEqual(sent.length, 10)
          const [match] = (yield* watches.matches(caller, created.id, {})).data
          yield* watches.update(caller, created.id, { paused: false })
          yield* watches.resend(caller, created.id, match!.id)
          yield* drain
          assert.strictEqual(sent.length, 11)
          assert.strictEqual((yield* watches.get(caller, created.id)).webhook?.state, "active")
          assert.strictEqual((yield* Effect.flip(watches.resend(caller, created.id, "msg_nosuch")))._tag, "DeliveryNotFound")
        }),
      Array.from({ length: 12 }, () => ({ _tag: "Answered", status: 500, retryAfterMs: undefined }) as const)
    ))

  it.effect("a rotated secret signs beside the new one for 24 hours", () =>
    withHook((sent) =>
      Effect.gen(function*() {
        const { caller, created, watches } = yield* setUp
        const rotated = yield* watches.rotateSecret(caller, created.id)
        assert.strictEqual(rotated.previous_secret_expires_at, new Date(T0 + 1000 + DAY).toISOString())
        yield* load(listing("ROTATED1"))
        yield* drain
        const during = sent[0]!
        assert.strictEqual(during.headers["webhook-signature"]!.split(" ").length, 2)
        verify(created.webhook_secret!, during)
        verify(rotated.webhook_secret, during)
        yield* TestClock.adjust(DAY)
        yield* load(listing("ROTATED2"))
        yield* drain
        const afterwards = sent[1]!
        assert.strictEqual(afterwards.headers["webhook-signature"]!.split(" ").length, 1)
        verify(rotated.webhook_secret, afterwards)
        assert.throws(() => verify(created.webhook_secret!, afterwards))
      })))
})

describe("Watches: retention", () => {
  it.effect("prune deletes the matches and attempts older than the retention's days, and keeps the others", () =>
    run(Effect.gen(function*() {
      const watches = yield* Watches.Watches
      const { caller } = yield* callerOn("business")
      const watch = yield* watches.create(caller, { name: "all", webhook_url: "https://receiver.example/hook" })
      yield* TestClock.adjust(1000)
      yield* load(listing("RETAINED"))
      yield* drain
      assert.strictEqual((yield* watches.deliveries(caller, watch.id)).data.length, 1)
      yield* TestClock.adjust(Watches.DEFAULT_SETTINGS.retentionDays * DAY - 2000)
      yield* load(listing("RETAINE2"))
      yield* drain
      assert.deepStrictEqual(yield* watches.prune, { matches: 0, attempts: 0 })
      yield* TestClock.adjust(3000)
      assert.deepStrictEqual(yield* watches.prune, { matches: 1, attempts: 1 })
      assert.deepStrictEqual((yield* watches.matches(caller, watch.id, {})).data.map((match) => match.listing?.id), ["RETAINE2"])
      assert.strictEqual((yield* watches.deliveries(caller, watch.id)).data.length, 1)
    })))
})

describe("Watches: input", () => {
  it.effect("create and change refuse unknown fields and query names, wrong types, and text that cannot be stored, naming each", () =>
    run(Effect.gen(function*() {
      const watches = yield* Watches.Watches
      const { caller } = yield* callerOn("pro")
      const refused = (effect: Effect.Effect<unknown, { readonly _tag: string }>) =>
        Effect.map(Effect.flip(effect), (error) => (error as { readonly parameter?: string }).parameter)
      assert.strictEqual(yield* refused(watches.create(caller, { name: "a\u0000b" })), "name")
      assert.strictEqual(yield* refused(watches.create(caller, { name: "lone \ud800" })), "name")
      assert.strictEqual(yield* refused(watches.create(caller, { name: "x", query: { q: "cof\u0000fee" } })), "query.q")
      assert.strictEqual(yield* refused(watches.create(caller, { name: "x", query: { category: ["tech", "\udc00"] } })), "query.category")
      assert.strictEqual(yield* refused(watches.create(caller, { name: "x", webhook_url: "https://a.example/\u0000" })), "webhook_url")
      assert.strictEqual(yield* refused(watches.create(caller, { name: "x", query: { tldd: "io" } })), "query.tldd")
      assert.strictEqual(yield* refused(watches.create(caller, { name: "x", query: { checkedDays: 7 } })), "query.checkedDays")
      assert.strictEqual(yield* refused(watches.create(caller, { name: 5 })), "name")
      assert.strictEqual(yield* refused(watches.create(caller, { name: "x", query: [] })), "query")
      assert.strictEqual(yield* refused(watches.create(caller, { name: "x", paused: false })), "paused")
      assert.strictEqual(yield* refused(watches.create(caller, { name: "x", extra: 1 })), "extra")
      const watch = yield* watches.create(caller, { name: "x" })
      assert.strictEqual(yield* refused(watches.update(caller, watch.id, { paused: "yes" })), "paused")
      assert.strictEqual(yield* refused(watches.update(caller, watch.id, { name: "a\u0000" })), "name")
      assert.strictEqual(yield* refused(watches.update(caller, watch.id, { query: { tld: "i\u0000o" } })), "query.tld")
      assert.strictEqual(yield* refused(watches.update(caller, watch.id, { nmae: "y" })), "nmae")
      assert.strictEqual((yield* watches.get(caller, watch.id)).name, "x")
    })))
})
