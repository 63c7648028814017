/**
 * What counting the embedded pool costs a statement: `node bench/pool-permit.ts` takes the PGlite
 * client's permit 200 000 times, plain and counting (PgliteClient.countingSemaphore), three
 * rounds, then runs 5 000 statements through the client on an in-memory PGlite; CPU time each.
 */
import { PGlite } from "@electric-sql/pglite"
import { Effect, Semaphore } from "effect"
import * as PgliteClient from "../packages/store-sql/src/PgliteClient.ts"

const TAKES = 200_000
const STATEMENTS = 5_000

const cpuMicros = async (run: () => Promise<unknown>) => {
  const start = process.cpuUsage()
  await run()
  const used = process.cpuUsage(start)
  return used.user + used.system
}

const takes = (withPermit: (effect: Effect.Effect<void>) => Effect.Effect<void>) =>
  Effect.runPromise(Effect.gen(function*() {
    for (let i = 0; i < TAKES; i++) yield* withPermit(Effect.void)
  }))

const plain = Semaphore.makeUnsafe(1)
const { semaphore: counting } = PgliteClient.countingSemaphore(Semaphore.makeUnsafe(1))
for (let round = 1; round <= 3; round++) {
  const before = await cpuMicros(() => takes((effect) => plain.withPermit(effect))) / TAKES
  const after = await cpuMicros(() => takes((effect) => counting.withPermit(effect))) / TAKES
  console.log(`round ${round}: a permit ${before.toFixed(2)} µs plain, ${after.toFixed(2)} µs counting (+${(after - before).toFixed(2)} µs)`)
}

const db = await PGlite.create()
const { client: sql } = await Effect.runPromise(PgliteClient.makeWithExclusive(db))
const statement = await cpuMicros(() =>
  Effect.runPromise(Effect.gen(function*() {
    for (let i = 0; i < STATEMENTS; i++) yield* sql`SELECT ${i}::int AS n`
  }))
) / STATEMENTS
console.log(`a statement through the PGlite client: ${statement.toFixed(0)} µs`)
await db.close()
