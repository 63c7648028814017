import { assert, describe, it } from "@effect/vitest"
import {
  AvailabilityCheck,
  Cursor,
  Directory,
  Errors,
  Idempotency,
  IdempotencyStore,
  Operators,
  Plan,
  RevealStore,
  Time
} from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Deferred, Effect, Fiber, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import { callerOn, DAY, HOUR, listing, load, T0 } from "./support.ts"

/*
 * Directory.idempotent on the memory adapter, with the test clock: what a retried write with
 * an idempotency key may and may not do. The black-box tests in apps/server run the same over
 * HTTP on every adapter.
 */

type Services = Directory.Directory | Operators.Operators | RevealStore.RevealStore | IdempotencyStore.IdempotencyStore

const run = <A, E>(effect: Effect.Effect<A, E, Services>, layer: Layer.Layer<Services> = StoreMemory.layerDirectory) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(T0)
    return yield* effect
  }).pipe(Effect.provide(layer))

/** The directory with an availability check that waits for `gate` before answering, or dies once. */
const withAvailability = (check: AvailabilityCheck.AvailabilityCheck["Service"]): Layer.Layer<Services> =>
  Layer.mergeAll(Directory.Directory.layer, Operators.Operators.layer).pipe(
    Layer.provideMerge(Cursor.CursorCodec.layer.pipe(Layer.provide(StoreMemory.layerEphemeralCursorSecret))),
    Layer.provideMerge(StoreMemory.layerStores),
    Layer.provideMerge(Layer.succeed(AvailabilityCheck.AvailabilityCheck, check)),
    Layer.provideMerge(StoreMemory.layerCrypto)
  )

const key = (text: string) => text as Idempotency.IdempotencyKey
const month = Time.monthOf(T0)

describe("Directory.idempotent", () => {
  it.effect("a repeat gives the first answer back, marked replayed, and charges nothing", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      const operators = yield* Operators.Operators
      const reveals = yield* RevealStore.RevealStore
      yield* load(listing("IDEMREV1"))
      const { caller } = yield* callerOn("pro")
      const first = yield* directory.idempotent(caller, key("reveal-1"), { _tag: "Reveal", listingId: "IDEMREV1" })
      assert.isFalse(first.replayed)
      assert.isTrue(Result.isSuccess(first.result))
      assert.strictEqual(yield* reveals.usedIn(caller.accountId, month), 1)
      // The listing leaves the directory: the repeat still answers what the first request did.
      yield* operators.delist(["IDEMREV1" as never], "sold")
      yield* TestClock.adjust(HOUR)
      const repeat = yield* directory.idempotent(caller, key("reveal-1"), { _tag: "Reveal", listingId: "IDEMREV1" })
      assert.deepStrictEqual(repeat, { ...first, replayed: true })
      assert.strictEqual(yield* reveals.usedIn(caller.accountId, month), 1)
    })))

  it.effect("a refusal is kept and replayed too, even when the request would now succeed", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      yield* load(listing("IDEMFEA1", { tier: "featured" }))
      const { caller } = yield* callerOn("free")
      const first = yield* directory.idempotent(caller, key("featured"), { _tag: "Reveal", listingId: "IDEMFEA1" })
      assert.deepStrictEqual(first, { result: Result.fail(new Errors.FeaturedRequiresPro()), replayed: false })
      const upgraded = { ...caller, plan: Plan.Plans.pro }
      assert.isTrue(Result.isSuccess(yield* Effect.result(directory.reveal(upgraded, "IDEMFEA1"))))
      const repeat = yield* directory.idempotent(upgraded, key("featured"), { _tag: "Reveal", listingId: "IDEMFEA1" })
      assert.deepStrictEqual(repeat, { result: Result.fail(new Errors.FeaturedRequiresPro()), replayed: true })
    })))

  it.effect("the key sent with another request is refused; an end without an outcome is an end as released", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      yield* load(listing("IDEMHLD1"), listing("IDEMHLD2"))
      const { caller } = yield* callerOn("pro")
      yield* directory.reveal(caller, "IDEMHLD1")
      yield* directory.reveal(caller, "IDEMHLD2")
      const held = yield* directory.idempotent(caller, key("k"), { _tag: "Hold", listingId: "IDEMHLD1" })
      assert.isTrue(Result.isSuccess(held.result))
      const other = yield* Effect.flip(directory.idempotent(caller, key("k"), { _tag: "Hold", listingId: "IDEMHLD2" }))
      assert.deepStrictEqual(other, new Errors.IdempotencyKeyReused({ key: "k" }))
      const reveal = yield* Effect.flip(directory.idempotent(caller, key("k"), { _tag: "Reveal", listingId: "IDEMHLD1" }))
      assert.instanceOf(reveal, Errors.IdempotencyKeyReused)
      assert.strictEqual((yield* directory.holds(caller)).data.length, 1)

      const holdId = Result.getOrThrow(held.result).hold.id
      const ended = yield* directory.idempotent(caller, key("end"), { _tag: "End", holdId, outcome: "released" })
      assert.isTrue(Result.isSuccess(ended.result))
      const again = yield* directory.idempotent(caller, key("end"), { _tag: "End", holdId, outcome: "released" })
      assert.deepStrictEqual(again, { ...ended, replayed: true })
      const registered = yield* Effect.flip(directory.idempotent(caller, key("end"), { _tag: "End", holdId, outcome: "registered" }))
      assert.instanceOf(registered, Errors.IdempotencyKeyReused)
    })))

  it.effect("keys belong to the account: another account's same key runs its own write", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      const reveals = yield* RevealStore.RevealStore
      yield* load(listing("IDEMACC1"))
      const { caller: first } = yield* callerOn("pro", "first")
      const { caller: second } = yield* callerOn("pro", "second")
      const a = yield* directory.idempotent(first, key("shared"), { _tag: "Reveal", listingId: "IDEMACC1" })
      const b = yield* directory.idempotent(second, key("shared"), { _tag: "Reveal", listingId: "IDEMACC1" })
      assert.isFalse(a.replayed)
      assert.isFalse(b.replayed)
      assert.strictEqual(yield* reveals.usedIn(first.accountId, month), 1)
      assert.strictEqual(yield* reveals.usedIn(second.accountId, month), 1)
    })))

  it.effect("of 50 concurrent repeats, one holds and the others wait and replay its answer", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      yield* load(listing("IDEMCON1"))
      const { caller } = yield* callerOn("pro")
      yield* directory.reveal(caller, "IDEMCON1")
      const answers = yield* Effect.forEach(
        Array.from({ length: 50 }, (_, i) => i),
        () => directory.idempotent(caller, key("fifty"), { _tag: "Hold", listingId: "IDEMCON1" }),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(answers.filter((answer) => !answer.replayed).length, 1)
      for (const answer of answers) assert.deepStrictEqual(answer.result, answers[0]!.result)
      assert.strictEqual((yield* directory.holds(caller)).data.length, 1)
    })))

  it.effect("a repeat waits for a first request that is still running, and past the wait is refused IdempotencyKeyInUse", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const layer = withAvailability({
        check: () => Effect.as(Deferred.await(gate), { _tag: "Unregistered", checkedAt: T0 } as const)
      })
      yield* run(Effect.gen(function*() {
        const directory = yield* Directory.Directory
        const reveals = yield* RevealStore.RevealStore
        yield* load(listing("IDEMSLO1"))
        const { caller } = yield* callerOn("pro")
        const write = { _tag: "Reveal", listingId: "IDEMSLO1" } as const
        const first = yield* Effect.forkChild(directory.idempotent(caller, key("slow"), write))
        yield* Effect.yieldNow
        const waiting = yield* Effect.forkChild(directory.idempotent(caller, key("slow"), write))
        yield* Effect.yieldNow
        yield* TestClock.adjust(Idempotency.DEFAULT_WAIT_MS)
        assert.deepStrictEqual(yield* Effect.flip(Fiber.join(waiting)), new Errors.IdempotencyKeyInUse({ key: "slow" }))
        const patient = yield* Effect.forkChild(directory.idempotent(caller, key("slow"), write))
        yield* Effect.yieldNow
        yield* Deferred.succeed(gate, undefined)
        const answer = yield* Fiber.join(first)
        assert.deepStrictEqual(yield* Fiber.join(patient), { ...answer, replayed: true })
        assert.strictEqual(yield* reveals.usedIn(caller.accountId, month), 1)
      }), layer)
    }))

  it.effect("a write runs to its end when its caller stops waiting; the repeat replays it", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const layer = withAvailability({
        check: () => Effect.as(Deferred.await(gate), { _tag: "Unregistered", checkedAt: T0 } as const)
      })
      yield* run(Effect.gen(function*() {
        const directory = yield* Directory.Directory
        const reveals = yield* RevealStore.RevealStore
        yield* load(listing("IDEMDRP1"))
        const { caller } = yield* callerOn("pro")
        const write = { _tag: "Reveal", listingId: "IDEMDRP1" } as const
        const dropped = yield* Effect.forkChild(directory.idempotent(caller, key("dropped"), write))
        yield* Effect.yieldNow
        yield* Fiber.interrupt(dropped)
        yield* Deferred.succeed(gate, undefined)
        const retry = yield* directory.idempotent(caller, key("dropped"), write)
        assert.isTrue(retry.replayed)
        assert.isTrue(Result.isSuccess(retry.result))
        assert.strictEqual(yield* reveals.usedIn(caller.accountId, month), 1)
      }), layer)
    }))

  it.effect("a write that ends in a fault keeps no answer: the repeat runs it, and charges once", () =>
    Effect.gen(function*() {
      let calls = 0
      const layer = withAvailability({
        check: () => (++calls === 1 ? Effect.die(new Error("registry fault")) : Effect.succeed({ _tag: "Unknown" } as const))
      })
      yield* run(Effect.gen(function*() {
        const directory = yield* Directory.Directory
        const reveals = yield* RevealStore.RevealStore
        const store = yield* IdempotencyStore.IdempotencyStore
        yield* load(listing("IDEMFLT1"))
        const { caller } = yield* callerOn("pro")
        const write = { _tag: "Reveal", listingId: "IDEMFLT1" } as const
        const fault = yield* Effect.exit(directory.idempotent(caller, key("fault"), write))
        assert.isTrue(fault._tag === "Failure")
        assert.strictEqual(yield* store.find(caller.accountId, "fault"), undefined)
        const retry = yield* directory.idempotent(caller, key("fault"), write)
        assert.isFalse(retry.replayed)
        assert.isTrue(Result.isSuccess(retry.result))
        assert.strictEqual(yield* reveals.usedIn(caller.accountId, month), 1)
      }), layer)
    }))

  it.effect("a fault while keeping the answer keeps none either: the repeat runs the write again", () =>
    Effect.gen(function*() {
      let completes = 0
      const failingOnce = Layer.effect(IdempotencyStore.IdempotencyStore, Effect.gen(function*() {
        const store = yield* IdempotencyStore.IdempotencyStore
        return IdempotencyStore.IdempotencyStore.of({
          ...store,
          complete: (run) => (++completes === 1 ? Effect.die(new Error("connection lost")) : store.complete(run))
        })
      }))
      const layer = Layer.mergeAll(Directory.Directory.layer, Operators.Operators.layer).pipe(
        Layer.provide(failingOnce),
        Layer.provideMerge(Cursor.CursorCodec.layer.pipe(Layer.provide(StoreMemory.layerEphemeralCursorSecret))),
        Layer.provideMerge(StoreMemory.layer),
        Layer.provideMerge(StoreMemory.layerCrypto)
      )
      yield* run(Effect.gen(function*() {
        const directory = yield* Directory.Directory
        const reveals = yield* RevealStore.RevealStore
        yield* load(listing("IDEMKPT1"))
        const { caller } = yield* callerOn("pro")
        const write = { _tag: "Reveal", listingId: "IDEMKPT1" } as const
        assert.strictEqual((yield* Effect.exit(directory.idempotent(caller, key("kept"), write)))._tag, "Failure")
        const retry = yield* directory.idempotent(caller, key("kept"), write)
        assert.isFalse(retry.replayed)
        assert.isTrue(Result.isSuccess(retry.result))
        assert.strictEqual(yield* reveals.usedIn(caller.accountId, month), 1)
      }), layer)
    }))

  it.effect("a first request running in another process is waited for, then taken over once abandoned", () =>
    run(Effect.gen(function*() {
      const directory = yield* Directory.Directory
      const store = yield* IdempotencyStore.IdempotencyStore
      yield* load(listing("IDEMELS1"))
      const { caller } = yield* callerOn("pro")
      const write = { _tag: "Reveal", listingId: "IDEMELS1" } as const
      yield* store.begin({ accountId: caller.accountId, key: "elsewhere", fingerprint: Idempotency.fingerprintOf(write), now: T0 })
      const waiting = yield* Effect.forkChild(directory.idempotent(caller, key("elsewhere"), write))
      yield* TestClock.adjust(Idempotency.DEFAULT_WAIT_MS)
      assert.instanceOf(yield* Effect.flip(Fiber.join(waiting)), Errors.IdempotencyKeyInUse)
      yield* TestClock.adjust(Idempotency.ABANDONED_AFTER_MS)
      const takenOver = yield* directory.idempotent(caller, key("elsewhere"), write)
      assert.isFalse(takenOver.replayed)
      assert.isTrue(Result.isSuccess(takenOver.result))
    })))

  it.effect("records are pruned once past their 24 hours, at start and every hour after", () =>
    Effect.gen(function*() {
      // The clock is set before the layer starts pruning, so its hours count from T0.
      yield* TestClock.setTime(T0)
      const layer = Directory.Directory.layerPruning().pipe(Layer.provideMerge(StoreMemory.layerDirectory))
      yield* Effect.provide(Effect.gen(function*() {
        const directory = yield* Directory.Directory
        const store = yield* IdempotencyStore.IdempotencyStore
        yield* load(listing("IDEMPRN1"))
        const { caller } = yield* callerOn("pro")
        yield* directory.idempotent(caller, key("old"), { _tag: "Reveal", listingId: "IDEMPRN1" })
        yield* TestClock.adjust(12 * HOUR)
        yield* directory.idempotent(caller, key("newer"), { _tag: "Reveal", listingId: "IDEMPRN1" })
        yield* TestClock.adjust(12 * HOUR)
        assert.isDefined(yield* store.find(caller.accountId, "old"))
        yield* TestClock.adjust(HOUR)
        assert.strictEqual(yield* store.find(caller.accountId, "old"), undefined)
        assert.isDefined(yield* store.find(caller.accountId, "newer"))
        yield* TestClock.adjust(DAY)
        assert.strictEqual(yield* store.find(caller.accountId, "newer"), undefined)
        assert.strictEqual(yield* directory.pruneIdempotencyKeys, 0)
      }), layer)
    }))
})
