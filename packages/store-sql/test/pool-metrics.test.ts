import { PGlite } from "@electric-sql/pglite"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Semaphore } from "effect"
import fc from "fast-check"
import * as PgliteClient from "../src/PgliteClient.ts"
import { PoolMetrics } from "../src/index.ts"

/*
 * The embedded pool's figures are the permit's holders and waiters: what a statement, a
 * transaction and a dump hold, what the fibers queued behind them wait for, and nothing left
 * counted once they end, however they end.
 */

/** Polls `usage` until it equals `expected`, within two seconds of real time. */
const until = (usage: () => PgliteClient.PermitUsage, expected: PgliteClient.PermitUsage) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 400; attempt++) {
      const now = usage()
      if (now.held === expected.held && now.waiting === expected.waiting) return
      yield* Effect.sleep("5 millis")
    }
    assert.deepStrictEqual(usage(), expected)
  })

describe("embedded pool metrics: the permit's accounting", () => {
  it.live("a transaction holds the permit; statements behind it wait; an interrupted waiter and a failed statement leave nothing counted", () =>
    Effect.gen(function*() {
      const db = yield* Effect.acquireRelease(Effect.promise(() => PGlite.create()), (db) => Effect.promise(() => db.close()))
      const { client: sql, exclusive, usage } = yield* PgliteClient.makeWithExclusive(db)
      assert.deepStrictEqual(usage(), { held: 0, waiting: 0 })

      const release = yield* Deferred.make<void>()
      const transaction = yield* sql.withTransaction(Effect.andThen(sql`SELECT 1`, Deferred.await(release))).pipe(Effect.forkChild)
      yield* until(usage, { held: 1, waiting: 0 })

      const queued = yield* sql`SELECT 2 AS two`.pipe(Effect.forkChild)
      const interrupted = yield* sql`SELECT 3`.pipe(Effect.forkChild)
      const dump = yield* exclusive(Effect.succeed("dumped")).pipe(Effect.forkChild)
      yield* until(usage, { held: 1, waiting: 3 })
      yield* Fiber.interrupt(interrupted)
      yield* until(usage, { held: 1, waiting: 2 })

      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(transaction)
      assert.deepStrictEqual(yield* Fiber.join(queued), [{ two: 2 }])
      assert.strictEqual(yield* Fiber.join(dump), "dumped")
      assert.deepStrictEqual(usage(), { held: 0, waiting: 0 })

      const failed = yield* Effect.flip(sql`SELECT * FROM no_such_table`)
      assert.strictEqual(failed._tag, "SqlError")
      assert.deepStrictEqual(usage(), { held: 0, waiting: 0 })
    }).pipe(Effect.scoped))

  it.live("any mix of statements, scoped takes and interruptions: never more than one holder, and nothing counted once all end", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ scoped: fc.boolean(), work: fc.integer({ min: 0, max: 3 }), interruptAfter: fc.option(fc.integer({ min: 0, max: 4 })) }), {
            minLength: 1,
            maxLength: 8
          }),
          (takers) =>
            Effect.runPromise(Effect.gen(function*() {
              const { semaphore, usage } = PgliteClient.countingSemaphore(yield* Semaphore.make(1))
              let worst = 0
              const body = (work: number) =>
                Effect.gen(function*() {
                  worst = Math.max(worst, usage().held)
                  yield* Effect.sleep(`${work} millis`)
                })
              const fibers = yield* Effect.forEach(takers, ({ scoped, work }) =>
                (scoped ? Effect.scoped(Effect.andThen(semaphore.takeScoped(1), body(work))) : semaphore.withPermit(body(work))).pipe(
                  Effect.forkChild
                ))
              yield* Effect.forEach(takers, ({ interruptAfter }, index) =>
                interruptAfter === null
                  ? Effect.void
                  : Effect.andThen(Effect.sleep(`${interruptAfter} millis`), Fiber.interrupt(fibers[index]!)).pipe(Effect.forkChild), { discard: true })
              yield* Effect.forEach(fibers, (fiber) => Effect.exit(Fiber.join(fiber)), { discard: true })
              yield* Effect.sleep("10 millis")
              return worst <= 1 && usage().held === 0 && usage().waiting === 0
            }))
        ),
        { numRuns: 40 }
      )
    ))
})

describe("server pool metrics: names", () => {
  it("the pool is named host:port/database, never with the user or password", () => {
    assert.strictEqual(PoolMetrics.serverPoolName("postgres://app:secret@db.internal:6432/dropshelf"), "db.internal:6432/dropshelf")
    assert.strictEqual(PoolMetrics.serverPoolName("postgresql://app@db.internal"), "db.internal:5432/app")
  })

  it("each pool's application_name is its own, printable and within PostgreSQL's 63 bytes", () => {
    const names = new Set(Array.from({ length: 50 }, () => PoolMetrics.uniqueApplicationName()))
    assert.strictEqual(names.size, 50)
    for (const name of names) {
      assert.match(name, /^dropshelf [0-9a-f]{8} \d+@/)
      assert.match(name, /^[\x20-\x7e]{1,63}$/)
    }
  })
})
