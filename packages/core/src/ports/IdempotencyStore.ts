import { Context, type Effect } from "effect"
import type { BeginDecision, IdempotencyRecord } from "../domain/Idempotency.ts"
import type { Instant } from "../domain/Time.ts"

export interface BeginRequest {
  readonly accountId: string
  readonly key: string
  readonly fingerprint: string
  readonly now: Instant
}

/** A run of a write under a key, named by its account, its key and the instant it started. */
export interface RunOf {
  readonly accountId: string
  readonly key: string
  readonly startedAt: Instant
}

/**
 * The records of idempotency keys, one per account and key, with the atomicity their rules
 * (`Idempotency.decideBegin`) assume. Every method is one short step: none waits for a write to
 * end, so a store on a single connection cannot be held by a waiting request.
 */
export class IdempotencyStore extends Context.Service<IdempotencyStore, {
  /**
   * Atomically: reads the account's record of the key, decides with `Idempotency.decideBegin`,
   * and on `Run` puts the record `{fingerprint, startedAt: now, outcome: null}` in its place.
   * Of concurrent begins on one record, at most one is answered `Run`.
   */
  readonly begin: (request: BeginRequest) => Effect.Effect<BeginDecision>
  /** Keeps the answer of `run`, if the record is still that run's and has none; whether it did. */
  readonly complete: (run: RunOf & { readonly outcome: string }) => Effect.Effect<boolean>
  /**
   * Deletes the record of `run` while it has no answer: the write ended without one (a fault),
   * so a repeat runs it again. A record another run took over, or one with an answer, stays.
   */
  readonly release: (run: RunOf) => Effect.Effect<void>
  readonly find: (accountId: string, key: string) => Effect.Effect<IdempotencyRecord | undefined>
  /** Deletes every record started before `before`, answered or not; returns how many. */
  readonly prune: (before: Instant) => Effect.Effect<number>
}>()("@dropshelf/core/IdempotencyStore") {}
