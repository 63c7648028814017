import { Context, type Effect } from "effect"
import type { WatchLimitReached } from "../domain/errors.ts"
import type { StoredPlan } from "../domain/Plan.ts"
import type { Instant } from "../domain/Time.ts"
import type { DueListing, QueryText, RoundPlan } from "../domain/Watch.ts"
import type { AttemptOutcome } from "../domain/Webhook.ts"

export type WebhookState = "active" | "paused" | "disabled"

export interface WebhookRecord {
  readonly url: string
  readonly secret: string
  /** The secret rotated out, which keeps signing beside `secret` until `previousSecretUntil`. */
  readonly previousSecret: string | null
  readonly previousSecretUntil: Instant | null
  readonly state: WebhookState
  /** Why the webhook is paused or disabled; null while active. */
  readonly stateReason: string | null
}

export interface WatchRecord {
  readonly id: string
  readonly accountId: string
  readonly name: string
  readonly query: QueryText
  readonly webhook: WebhookRecord | null
  /** Set by the owner: a paused watch records no matches and delivers nothing. */
  readonly paused: boolean
  readonly createdAt: Instant
  readonly updatedAt: Instant
}

export interface MatchRecord {
  /** The match's id, which is also its event's `webhook-id`. */
  readonly id: string
  /** The store's order of matches: increasing in the order they were recorded. */
  readonly seq: number
  readonly watchId: string
  readonly listingId: string
  readonly matchedAt: Instant
}

export type DeliveryState = "pending" | "delivered" | "failed"

export interface DeliveryJob {
  readonly eventId: string
  readonly watchId: string
  readonly listingId: string
  readonly matchedAt: Instant
  /** Attempts made so far. */
  readonly attempts: number
  readonly state: DeliveryState
  readonly nextAttemptAt: Instant
  /** A re-send the owner asked for: one attempt, and its failure does not pause the webhook. */
  readonly manual: boolean
}

export interface AttemptRecord {
  readonly eventId: string
  readonly attempt: number
  readonly at: Instant
  readonly durationMs: number
  readonly statusCode: number | null
  readonly error: string | null
}

/** A delivery taken by one worker until `leaseUntil`: no other worker takes it meanwhile. */
export interface ClaimedDelivery {
  readonly job: DeliveryJob
  readonly watch: WatchRecord
  readonly accountPlan: StoredPlan
}

/** What a round of matching reads of each watch that is not paused. */
export interface CandidateRow {
  readonly watchId: string
  readonly accountId: string
  readonly plan: StoredPlan
  readonly query: QueryText
  readonly createdAt: Instant
}

/**
 * Watches, their matches and the outbox of their deliveries. The guarantees that need the
 * store's own atomicity live here: the plan's watch limit per account; a listing matches a
 * watch once per listing generation; a match and its delivery job are written in one step with
 * the events that made them; a due event or delivery is taken by one worker at a time.
 *
 * Every write of a listing (upsert, delist, availability stamp) records an event: `insert` for a
 * new row, `update` with the row's previous version for an existing one (`Watch.DueEvent`); the
 * memory store as part of the write, the SQL store with a trigger on `listings` (so an import
 * by COPY is seen too). The stores only record; `Watch.isMatch` decides. A listing that comes
 * back from sold, blocked or delisted (to active or draft) starts its next generation.
 */
export class WatchStore extends Context.Service<WatchStore, {
  /** Adds the watch unless the account already has `limit` watches. */
  readonly create: (watch: WatchRecord, limit: number) => Effect.Effect<WatchRecord, WatchLimitReached>
  /** The account's watches, oldest first. */
  readonly forAccount: (accountId: string) => Effect.Effect<ReadonlyArray<WatchRecord>>
  readonly find: (accountId: string, watchId: string) => Effect.Effect<WatchRecord | undefined>
  /** Replaces the watch with `change(current)`, atomically; undefined when the account has no such watch. */
  readonly update: (
    accountId: string,
    watchId: string,
    change: (current: WatchRecord) => WatchRecord
  ) => Effect.Effect<WatchRecord | undefined>
  /** Removes the watch with its matches and deliveries; whether it was there. */
  readonly remove: (accountId: string, watchId: string) => Effect.Effect<boolean>
  /** Up to `limit` matches of the watch after `afterSeq` (from the first when undefined), oldest first. */
  readonly matches: (watchId: string, afterSeq: number | undefined, limit: number) => Effect.Effect<ReadonlyArray<MatchRecord>>
  readonly findMatch: (watchId: string, matchId: string) => Effect.Effect<MatchRecord | undefined>
  /** The watch's latest delivery attempts, newest first. */
  readonly attempts: (watchId: string, limit: number) => Effect.Effect<ReadonlyArray<AttemptRecord>>
  readonly findDelivery: (watchId: string, eventId: string) => Effect.Effect<DeliveryJob | undefined>
  /** Makes the delivery due at `at` as a one-attempt re-send; whether the watch has it. */
  readonly resend: (watchId: string, eventId: string, at: Instant) => Effect.Effect<boolean>

  /**
   * One round of matching, in one transaction: takes up to `limit` events due at `now` (oldest
   * first; events another worker holds are skipped), hands them with their listings and the
   * candidates to `plan`, records the matches it names (a repeat within a generation is
   * ignored) with a delivery job, due at once, for each new match of a watch with a webhook,
   * schedules its follow-ups and removes the events. Returns how many events and new matches.
   */
  readonly matchRound: (request: {
    readonly now: Instant
    readonly limit: number
    readonly plan: (due: ReadonlyArray<DueListing>, candidates: ReadonlyArray<CandidateRow>) => RoundPlan
  }) => Effect.Effect<{ readonly events: number; readonly matches: number }>
  /** Events waiting, and the earliest due of them (for an operator's view and the worker's sleep). */
  readonly pendingEvents: Effect.Effect<{ readonly count: number; readonly nextDueAt: Instant | null }>
  /** Webhook deliveries not yet acknowledged (retries included), and the oldest match among them. */
  readonly pendingDeliveries: Effect.Effect<{ readonly count: number; readonly oldestMatchedAt: Instant | null }>

  /**
   * Takes up to `limit` pending deliveries due at `now` of watches with an active webhook that
   * are not paused, whose lease is free, and leases them until `leaseUntil`. A worker that dies
   * holding one leaves it to be taken again when the lease ends.
   */
  readonly claimDeliveries: (request: {
    readonly now: Instant
    readonly limit: number
    readonly leaseUntil: Instant
  }) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
  /**
   * Frees every delivery's lease: for a process that knows no other worker runs (the embedded
   * database admits one process), so deliveries a killed predecessor held go out at once.
   */
  readonly releaseLeases: Effect.Effect<number>
  /**
   * Records an attempt and its outcome: delivered; due again; failed, pausing the webhook
   * (`Exhausted`) or disabling it (`Gone`) with the reason; or failed alone (`Failed`).
   */
  readonly finishAttempt: (attempt: AttemptRecord, outcome: AttemptOutcome) => Effect.Effect<void>
  /**
   * Deletes matches recorded before `before`, with their deliveries and attempts, and delivery
   * attempts made before it; returns how many matches and attempts went.
   */
  readonly prune: (before: Instant) => Effect.Effect<{ readonly matches: number; readonly attempts: number }>
}>()("@dropshelf/core/WatchStore") {}
