import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import fc from "fast-check"
import * as SharedReads from "../src/SharedReads.ts"

/*
 * SharedReads' promise: a read is answered by a statement that started after it arrived (never
 * by one already running), reads of one key that wait together share the next statement, and
 * each gets its own answer. The statements here are held open until the test lets them end.
 */

interface Statement {
  readonly key: string
  readonly requests: ReadonlyArray<number>
  readonly finish: Deferred.Deferred<void>
}

/** A SharedReads whose statements answer `request * 10` once the test finishes them. */
const harness = Effect.gen(function*() {
  const scope = yield* Scope.make()
  const started: Array<Statement> = []
  const shared = SharedReads.make(scope, (batch: ReadonlyArray<{ key: string; n: number }>) =>
    Effect.gen(function*() {
      const finish = yield* Deferred.make<void>()
      started.push({ key: batch[0]!.key, requests: batch.map((request) => request.n), finish })
      yield* Deferred.await(finish)
      if (batch.some((request) => request.n < 0)) return yield* Effect.die(new Error("statement failed"))
      return batch.map((request) => request.n * 10)
    }))
  const read = (key: string, n: number) => Effect.forkDetach(shared.read(key, { key, n }))
  return { scope, started, shared, read }
})

/** Lets every fiber that can move do so (the statements wait on nothing but the test). */
const settle = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve))).pipe(Effect.repeat({ times: 3 }))

describe("SharedReads", () => {
  it("a shared statement runs at the latest clock among its requests", () => {
    fc.assert(fc.property(fc.array(fc.integer(), { minLength: 1, maxLength: 20 }), (clocks) => {
      const batch = clocks.map((now, index) => ({ now, index }))
      const chosen = SharedReads.latest(batch, (request) => request.now)
      assert.strictEqual(chosen.now, Math.max(...clocks))
    }))
  })

  it.live("a read that arrives while its key's statement runs waits for the next one, which answers every such read", () =>
    Effect.gen(function*() {
      const { read, started } = yield* harness
      const first = yield* read("page", 1)
      yield* settle
      const second = yield* read("page", 2)
      const third = yield* read("page", 3)
      yield* settle
      assert.deepStrictEqual(started.map((s) => s.requests), [[1]])
      yield* Deferred.succeed(started[0]!.finish, undefined)
      assert.strictEqual(yield* Fiber.join(first), 10)
      yield* settle
      assert.deepStrictEqual(started.map((s) => s.requests), [[1], [2, 3]])
      yield* Deferred.succeed(started[1]!.finish, undefined)
      assert.deepStrictEqual([yield* Fiber.join(second), yield* Fiber.join(third)], [20, 30])
    }))

  it.live("reads of different keys never share a statement and run side by side", () =>
    Effect.gen(function*() {
      const { read, shared, started } = yield* harness
      const a = yield* read("a", 1)
      const b = yield* read("b", 2)
      yield* settle
      assert.deepStrictEqual(started.map((s) => [s.key, s.requests]), [["a", [1]], ["b", [2]]])
      assert.strictEqual(shared.running(), 2)
      for (const statement of started) yield* Deferred.succeed(statement.finish, undefined)
      assert.deepStrictEqual([yield* Fiber.join(a), yield* Fiber.join(b)], [10, 20])
      yield* settle
      assert.strictEqual(shared.running(), 0)
    }))

  it.live("a failed statement fails each read it answered, and the reads waiting behind it still get theirs", () =>
    Effect.gen(function*() {
      const { read, started } = yield* harness
      const failing = yield* read("page", -1)
      yield* settle
      const waiting = yield* read("page", 4)
      yield* settle
      yield* Deferred.succeed(started[0]!.finish, undefined)
      const exit = yield* Fiber.await(failing)
      assert.isTrue(Exit.hasDies(exit))
      yield* settle
      yield* Deferred.succeed(started[1]!.finish, undefined)
      assert.strictEqual(yield* Fiber.join(waiting), 40)
    }))

  it.live("a caller that goes away does not cancel the statement the others wait on", () =>
    Effect.gen(function*() {
      const { read, started } = yield* harness
      const leaving = yield* read("page", 1)
      yield* settle
      const staying = yield* read("page", 2)
      yield* settle
      yield* Fiber.interrupt(leaving)
      yield* Deferred.succeed(started[0]!.finish, undefined)
      yield* settle
      assert.deepStrictEqual(started.map((s) => s.requests), [[1], [2]])
      yield* Deferred.succeed(started[1]!.finish, undefined)
      assert.strictEqual(yield* Fiber.join(staying), 20)
    }))

  it.live("under any interleaving of arrivals and statement ends: batches are exactly what arrived while the key was busy", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(fc.oneof(
            fc.record({ arrive: fc.constantFrom("a", "b") }),
            fc.record({ finish: fc.constantFrom("a", "b") })
          ), { maxLength: 60 }),
          (commands) =>
            Effect.runPromise(Effect.gen(function*() {
              const { read, started } = yield* harness
              // The model: per key, the statement running (if any) and the reads waiting for the next.
              const model = new Map<string, { running: Array<number> | undefined; waiting: Array<number> }>()
              const expected: Array<[string, Array<number>]> = []
              const fibers = new Map<number, Fiber.Fiber<number>>()
              let n = 0
              for (const command of commands) {
                if ("arrive" in command) {
                  const key = command.arrive
                  const state = model.get(key) ?? { running: undefined, waiting: [] }
                  model.set(key, state)
                  n += 1
                  fibers.set(n, yield* read(key, n))
                  if (state.running === undefined) {
                    state.running = [n]
                    expected.push([key, [n]])
                  } else {
                    state.waiting.push(n)
                  }
                } else {
                  const key = command.finish
                  const state = model.get(key)
                  if (state?.running === undefined) continue
                  const statement = [...started].reverse().find((s) => s.key === key)!
                  yield* Deferred.succeed(statement.finish, undefined)
                  for (const done of state.running) assert.strictEqual(yield* Fiber.join(fibers.get(done)!), done * 10)
                  state.running = state.waiting.length === 0 ? undefined : state.waiting
                  if (state.running !== undefined) expected.push([key, state.running])
                  state.waiting = []
                }
                yield* settle
                assert.deepStrictEqual(started.map((s) => [s.key, s.requests]), expected)
              }
            }))
        ),
        { numRuns: 100 }
      )
    ))
})
