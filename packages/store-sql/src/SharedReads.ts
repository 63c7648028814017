import { Deferred, Effect, Exit, Option, type Scope } from "effect"
import type { SqlClient } from "effect/sql"

/*
 * Concurrent identical reads share one statement. Under load most page requests ask the same
 * few questions (the default page above all), and each statement costs a round trip and
 * Postgres' own work whatever its result.
 *
 * A read never joins a statement already running: that statement's snapshot may be older than
 * the read, and a caller who has just revealed or held a listing must see it. It waits for the
 * next statement of its key instead, which starts as soon as the running one ends and answers
 * every read that arrived meanwhile, so each answer still reflects the directory at an instant
 * between that read's start and its end. With nothing running, a read starts its statement at
 * once: sharing costs no latency when there is nothing to share.
 *
 * Effect's RequestResolver batches too, but a batch there starts after a delay that does not
 * depend on the key; here a batch starts exactly when the previous one for its key ends.
 */

export interface SharedReads<R, A> {
  /** Reads `request` in a batch of reads with the same `key`; the batch sees every request. */
  readonly read: (key: string, request: R) => Effect.Effect<A>
  /** Keys with a statement running; for tests and diagnostics. */
  readonly running: () => number
}

interface Waiting<R, A> {
  readonly request: R
  readonly done: Deferred.Deferred<A>
}

/**
 * `run` answers a batch of requests (one answer per request, in order). It runs in `scope`,
 * not in a caller's fiber: a caller that goes away does not cancel the others' statement.
 * With `shared` false (StoreCaches.sharedReads) every read runs a statement of its own.
 */
export const make = <R, A>(
  scope: Scope.Scope,
  run: (batch: ReadonlyArray<R>) => Effect.Effect<ReadonlyArray<A>>,
  shared = true
): SharedReads<R, A> => {
  if (!shared) return { read: (_key, request) => Effect.map(run([request]), (answers) => answers[0]!), running: () => 0 }
  // A key is present while a statement for it runs; its array holds the reads for the next one.
  const next = new Map<string, Array<Waiting<R, A>>>()

  const settle = (batch: ReadonlyArray<Waiting<R, A>>, exit: Exit.Exit<ReadonlyArray<A>>) =>
    Effect.sync(() => {
      batch.forEach((waiting, index) => {
        Deferred.doneUnsafe(
          waiting.done,
          Exit.isSuccess(exit) ? Effect.succeed(exit.value[index]!) : Effect.failCause(exit.cause)
        )
      })
    })

  const runFrom = (key: string, batch: ReadonlyArray<Waiting<R, A>>): Effect.Effect<void> =>
    run(batch.map((waiting) => waiting.request)).pipe(
      Effect.exit,
      Effect.flatMap((exit) => settle(batch, exit)),
      Effect.andThen(Effect.suspend(() => {
        const waiting = next.get(key)!
        if (waiting.length === 0) {
          next.delete(key)
          return Effect.void
        }
        next.set(key, [])
        return runFrom(key, waiting)
      }))
    )

  const read = (key: string, request: R) =>
    Effect.suspend(() => {
      const done = Deferred.makeUnsafe<A>()
      const waiting = next.get(key)
      if (waiting !== undefined) {
        waiting.push({ request, done })
        return Deferred.await(done)
      }
      next.set(key, [])
      return runFrom(key, [{ request, done }]).pipe(
        Effect.uninterruptible,
        Effect.forkIn(scope),
        Effect.andThen(Deferred.await(done))
      )
    })

  return { read, running: () => next.size }
}

/**
 * The request of `batch` with the latest clock, at which a shared statement runs: every
 * request in the batch started before it, so the answer is the store at an instant inside each
 * request's own call (the ports allow a later instant than asked, never an earlier one).
 */
export const latest = <R>(batch: ReadonlyArray<R>, clockOf: (request: R) => number): R => {
  let found: R = batch[0]!
  for (const request of batch) if (clockOf(request) > clockOf(found)) found = request
  return found
}

/**
 * `shared` unless the caller is inside a transaction, then `own`. A read inside a transaction
 * belongs to it (its snapshot, its own uncommitted rows, its connection) and is never shared;
 * sharing it could also deadlock, the shared statement waiting for the connection the
 * transaction holds.
 */
export const unlessInTransaction = <A>(sql: SqlClient.SqlClient, shared: Effect.Effect<A>, own: Effect.Effect<A>) =>
  Effect.flatMap(Effect.serviceOption(sql.transactionService), (transaction) => Option.isSome(transaction) ? own : shared)

/**
 * Reads shared by key as `make` shares them, except inside the caller's transaction, where a
 * read runs `run` as a batch of its own (`unlessInTransaction`).
 */
export const makeOutsideTransactions = <R, A>(
  sql: SqlClient.SqlClient,
  scope: Scope.Scope,
  run: (batch: ReadonlyArray<R>) => Effect.Effect<ReadonlyArray<A>>,
  sharing = true
) => {
  const shared = make(scope, run, sharing)
  return (key: string, request: R): Effect.Effect<A> =>
    unlessInTransaction(sql, shared.read(key, request), Effect.map(run([request]), (answers) => answers[0]!))
}
