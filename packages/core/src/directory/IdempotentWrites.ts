import { Clock, Deferred, Effect, Fiber } from "effect"
import {
  type EndError,
  type ExtendError,
  type HoldError,
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  type RevealError
} from "../domain/errors.ts"
import type { HoldOutcome, HoldResponse } from "../domain/Hold.ts"
import {
  type Answer,
  decodeOutcome,
  encodeOutcome,
  fingerprintOf,
  type IdempotencyKey,
  RETENTION_MS,
  type Write,
  type WriteError,
  type WriteValue
} from "../domain/Idempotency.ts"
import type { RevealedListingView } from "../domain/Listing.ts"
import type { Instant } from "../domain/Time.ts"
import { IdempotencyStore } from "../ports/IdempotencyStore.ts"
import { span as useCase } from "../Spans.ts"
import type { Caller } from "./Authentication.ts"

/*
 * `Directory.idempotent`: a write run at most once per idempotency key of an account, and the
 * pruning of keys past their 24 hours.
 */

/** How often a repeat asks the store again while its first request runs in another process. */
export const IDEMPOTENCY_POLL_MS = 100

/** The writes an idempotency key can run. */
export interface Writes {
  readonly reveal: (caller: Caller, id: string) => Effect.Effect<RevealedListingView, RevealError>
  readonly hold: (caller: Caller, id: string) => Effect.Effect<HoldResponse, HoldError>
  readonly extend: (caller: Caller, holdId: string) => Effect.Effect<HoldResponse, ExtendError>
  readonly end: (caller: Caller, holdId: string, outcome: HoldOutcome) => Effect.Effect<HoldResponse, EndError>
}

/** `idempotent` and `pruneIdempotencyKeys`; a repeat waits `idempotencyWait` ms at most. */
export const make = (idempotencyWait: number, writes: Writes) => Effect.gen(function*() {
  const idempotencyStore = yield* IdempotencyStore
  const { end, extend, hold, reveal } = writes

  const perform = <W extends Write>(caller: Caller, write: W): Effect.Effect<WriteValue<W>, WriteError<W>> => {
    const run: Write = write
    switch (run._tag) {
      case "Reveal":
        return reveal(caller, run.listingId) as Effect.Effect<WriteValue<W>, WriteError<W>>
      case "Hold":
        return hold(caller, run.listingId) as Effect.Effect<WriteValue<W>, WriteError<W>>
      case "Extend":
        return extend(caller, run.holdId) as Effect.Effect<WriteValue<W>, WriteError<W>>
      case "End":
        return end(caller, run.holdId, run.outcome) as Effect.Effect<WriteValue<W>, WriteError<W>>
    }
  }

  /*
   * Requests of this process holding a key of an account: one at a time asks the store, and
   * the one that runs the write holds the key here until the write has ended. A repeat that
   * arrives meanwhile waits for that, rather than asking the store again and again; only
   * a repeat whose first request runs in another process polls the store.
   */
  const keysHeld = new Map<string, Deferred.Deferred<void>>()

  /**
   * Runs the write and keeps its answer. A fault, in the write or in keeping its answer, keeps
   * none: the record is released, so a repeat runs the write again, and the fault is passed on.
   */
  const runAndKeep = <W extends Write>(caller: Caller, key: IdempotencyKey, write: W, startedAt: Instant) => {
    const run = { accountId: caller.accountId, key, startedAt }
    return Effect.result(perform(caller, write)).pipe(
      Effect.flatMap((result) => {
        const outcome = encodeOutcome<W>(write._tag, result)
        // Every caller gets the answer as it was kept, the first one included.
        return Effect.as(idempotencyStore.complete({ ...run, outcome }), decodeOutcome<W>(write._tag, outcome))
      }),
      Effect.onError(() => idempotencyStore.release(run))
    )
  }

  const idempotent = Effect.fnUntraced(function*<W extends Write>(caller: Caller, key: IdempotencyKey, write: W) {
    const fingerprint = fingerprintOf(write)
    const held = `${caller.accountId}\u0000${key}`
    const deadline = (yield* Clock.currentTimeMillis) + idempotencyWait
    while (true) {
      const now = yield* Clock.currentTimeMillis
      const mine = yield* Deferred.make<void>()
      const holder = keysHeld.get(held)
      if (holder !== undefined) {
        if (now >= deadline) return yield* new IdempotencyKeyInUse({ key })
        yield* Effect.timeoutOption(Deferred.await(holder), deadline - now)
        continue
      }
      keysHeld.set(held, mine)
      const letGo = Effect.suspend(() => {
        if (keysHeld.get(held) === mine) keysHeld.delete(held)
        return Deferred.succeed(mine, undefined)
      })
      // Asking the store and starting the write are one step: an abandoned request never leaves
      // a record claimed without a write running for it.
      const begun = yield* Effect.uninterruptible(Effect.gen(function*() {
        const decision = yield* Effect.onError(
          idempotencyStore.begin({ accountId: caller.accountId, key, fingerprint, now }),
          () => letGo
        )
        if (decision._tag !== "Run") {
          yield* letGo
          return { decision, runner: undefined }
        }
        // Detached: a caller that stops waiting does not cut the write short; its answer is kept.
        const runner = yield* Effect.forkDetach(runAndKeep(caller, key, write, now).pipe(Effect.ensuring(letGo)))
        return { decision, runner }
      }))
      if (begun.runner !== undefined) return { result: yield* Fiber.join(begun.runner), replayed: false } as Answer<W>
      switch (begun.decision._tag) {
        case "Replay": {
          const outcome = begun.decision.outcome
          return { result: yield* Effect.sync(() => decodeOutcome<W>(write._tag, outcome)), replayed: true } as Answer<W>
        }
        case "Reused":
          return yield* new IdempotencyKeyReused({ key })
        default:
          if (now >= deadline) return yield* new IdempotencyKeyInUse({ key })
          yield* Effect.sleep(Math.min(IDEMPOTENCY_POLL_MS, deadline - now))
      }
    }
  }, useCase("Directory.idempotent"))

  const pruneIdempotencyKeys = Effect.flatMap(
    Clock.currentTimeMillis,
    (now) => idempotencyStore.prune(now - RETENTION_MS)
  ).pipe(useCase("Directory.pruneIdempotencyKeys"))

  return { idempotent, pruneIdempotencyKeys }
})
