import { Clock, Context, Deferred, Effect, Exit, Layer, Metric, Result, Schedule } from "effect"
import { Mac, SecureRandom } from "effect/crypto"
import { Base64Url } from "effect/encoding"
import type { Caller } from "./Directory.ts"
import * as DirectoryMetrics from "./DirectoryMetrics.ts"
import { isReadableAt, readerViewOf, revealsOfReader } from "./domain/Disclosure.ts"
import { DeliveryNotFound, InvalidRequest, type WatchLimitReached, WatchNotFound } from "./domain/errors.ts"
import { isListingId } from "./domain/Ids.ts"
import { type ListingView, toListingView } from "./domain/Listing.ts"
import type { ListFilters } from "./domain/ListQuery.ts"
import { effectivePlan, type PlanLimits } from "./domain/Plan.ts"
import { DAY, HOUR, type Instant, toIso } from "./domain/Time.ts"
import { type Candidate, decodeCreate, decodePatch, filtersOf, type NewMatch, planRound, type QueryText } from "./domain/Watch.ts"
import type {
  AttemptList,
  CreatedWatchView,
  MatchEvent,
  MatchPage,
  MatchView,
  ResendView,
  RotatedSecretView,
  WatchList,
  WatchView
} from "./domain/WatchView.ts"
import {
  checkUrl,
  decideAfterAttempt,
  ROTATION_OVERLAP_MS,
  SECRET_BYTES,
  secretFrom,
  signatureHeader
} from "./domain/Webhook.ts"
import { ListingStore } from "./ports/ListingStore.ts"
import type { CandidateRow, ClaimedDelivery, MatchRecord, WatchRecord, WebhookRecord } from "./ports/WatchStore.ts"
import { WatchStore } from "./ports/WatchStore.ts"
import { WebhookSender } from "./ports/WebhookSender.ts"

/** How the watch worker runs; the server reads them from the environment (docs/operations.md). */
export interface WatchSettings {
  /** `DROPSHELF_WEBHOOKS_ALLOW_PRIVATE`: http and loopback or private receivers allowed. */
  readonly allowPrivate: boolean
  /** How often the worker looks for due events and deliveries when it found none. */
  readonly pollMs: number
  /** Events per matching round, deliveries per delivery round. */
  readonly batch: number
  /** How long a worker holds a delivery it took; past it another worker may take it. Must exceed 15 s. */
  readonly leaseMs: number
  /** Deliveries in flight at once per worker. */
  readonly concurrency: number
  /** `DROPSHELF_WATCH_RETENTION_DAYS`: matches (with their deliveries) and attempts older than this are pruned. */
  readonly retentionDays: number
}

export const DEFAULT_SETTINGS: WatchSettings = {
  allowPrivate: false,
  pollMs: 1_000,
  batch: 500,
  leaseMs: 60_000,
  concurrency: 16,
  retentionDays: 90
}

export const WatchSettingsRef = Context.Reference<WatchSettings>("@dropshelf/core/WatchSettings", {
  defaultValue: () => DEFAULT_SETTINGS
})

/** Page size of `GET /watches/{id}/matches`, and its ceiling. */
export const DEFAULT_MATCH_PAGE = 50
export const MAX_MATCH_PAGE = 250
/** Attempts `GET /watches/{id}/deliveries` shows. */
export const ATTEMPTS_SHOWN = 100

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const idFrom = (prefix: string, bytes: Uint8Array) => prefix + Array.from(bytes, (byte) => ALPHABET[byte % 62]).join("")

const webhookView = (webhook: WebhookRecord | null, now: Instant): WatchView["webhook"] =>
  webhook === null ? null : {
    url: webhook.url,
    state: webhook.state,
    state_reason: webhook.stateReason,
    previous_secret_expires_at: webhook.previousSecretUntil !== null && webhook.previousSecretUntil > now
      ? toIso(webhook.previousSecretUntil)
      : null
  }

export const toWatchView = (watch: WatchRecord, now: Instant): WatchView => ({
  id: watch.id,
  name: watch.name,
  query: { ...watch.query },
  webhook: webhookView(watch.webhook, now),
  paused: watch.paused,
  created_at: toIso(watch.createdAt),
  updated_at: toIso(watch.updatedAt)
})

/** The secrets that sign at `now`: the current one, and the rotated-out one during its overlap. */
export const signingSecrets = (webhook: WebhookRecord, now: Instant): ReadonlyArray<string> =>
  webhook.previousSecret !== null && webhook.previousSecretUntil !== null && webhook.previousSecretUntil > now
    ? [webhook.secret, webhook.previousSecret]
    : [webhook.secret]

const cursorOf = (seq: number) => Base64Url.encode(`m${seq}`)
const seqOf = (cursor: string): number | undefined => {
  const decoded = Base64Url.decodeString(cursor)
  if (Result.isFailure(decoded) || !/^m\d{1,15}$/.test(decoded.success)) return undefined
  return Number(decoded.success.slice(1))
}

/**
 * Watches: the owner's use cases (REST and MCP), the worker's rounds, and an operator's view.
 * A match's listing is rendered when it is read or delivered, as the account reads it then.
 */
export class Watches extends Context.Service<Watches, {
  /** A new watch from a JSON body or a tool's arguments, read by `Watch.decodeCreate`. */
  readonly create: (caller: Caller, body: unknown) => Effect.Effect<CreatedWatchView, InvalidRequest | WatchLimitReached>
  readonly list: (caller: Caller) => Effect.Effect<WatchList>
  readonly get: (caller: Caller, watchId: string) => Effect.Effect<WatchView, WatchNotFound>
  /** The watch as changed; with `webhook_secret` when the change gave it a webhook (and so a secret) it did not have. */
  readonly update: (caller: Caller, watchId: string, body: unknown) => Effect.Effect<CreatedWatchView, InvalidRequest | WatchNotFound>
  readonly remove: (caller: Caller, watchId: string) => Effect.Effect<void, WatchNotFound>
  readonly rotateSecret: (caller: Caller, watchId: string) => Effect.Effect<RotatedSecretView, WatchNotFound | InvalidRequest>
  readonly matches: (
    caller: Caller,
    watchId: string,
    page: { readonly cursor?: string | undefined; readonly limit?: number | undefined }
  ) => Effect.Effect<MatchPage, WatchNotFound | InvalidRequest>
  readonly deliveries: (caller: Caller, watchId: string) => Effect.Effect<AttemptList, WatchNotFound>
  readonly resend: (caller: Caller, watchId: string, eventId: string) => Effect.Effect<ResendView, WatchNotFound | DeliveryNotFound>
  /** An operator's view of an account's watches (`dropshelf watches list`). */
  readonly ofAccount: (accountId: string) => Effect.Effect<ReadonlyArray<WatchView>>
  /** One matching round; how many events it took and matches it recorded. */
  readonly matchRound: Effect.Effect<{ readonly events: number; readonly matches: number }>
  /**
   * The same round, each new match given the id `idOf` names for it, if any (`dropshelf demo`
   * names the match its documented example is; the store makes the others' ids).
   */
  readonly matchRoundNaming: (
    idOf: (match: NewMatch) => string | undefined
  ) => Effect.Effect<{ readonly events: number; readonly matches: number }>
  /** One delivery round; how many deliveries it attempted. */
  readonly deliverRound: Effect.Effect<number>
  /** The settings the service was built with (the worker's poll interval). */
  readonly settings: WatchSettings
  /** Frees the leases of deliveries, where this process is the only worker (the embedded database). */
  readonly releaseLeases: Effect.Effect<number>
  /** Samples the delivery queue into the `dropshelf.webhooks.*` gauges. */
  readonly sampleQueue: Effect.Effect<void>
  /** Deletes matches (with their deliveries and attempts) and attempts older than the retention. */
  readonly prune: Effect.Effect<{ readonly matches: number; readonly attempts: number }>
}>()("@dropshelf/core/Watches") {
  /**
   * The worker: matching and delivery rounds, back to back while they find work, then every
   * `pollMs`, for as long as the layer lives; and the pruning of matches and attempts past the
   * retention, once at start and then hourly, as `Directory.layerPruning` prunes tombstones. A
   * failed round is logged and the next one runs.
   */
  static readonly layerWorker: Layer.Layer<never, never, Watches> = Layer.effectDiscard(Effect.gen(function*() {
    const watches = yield* Watches
    const settings = watches.settings
    // A matching round that recorded matches wakes the delivery loop, so a delivery waits for no poll.
    let wake = Deferred.makeUnsafe<void>()
    const loop = (round: Effect.Effect<number>, name: string, idle: Effect.Effect<void>) =>
      Effect.gen(function*() {
        while (true) {
          const done = yield* round.pipe(
            Effect.catchCause((cause) => Effect.as(Effect.logWarning(`dropshelf: watch ${name} round failed`, cause), 0))
          )
          if (done === 0) yield* idle
        }
      }).pipe(Effect.forkScoped)
    const matching = Effect.map(watches.matchRound, (round) => {
      if (round.matches > 0) Deferred.doneUnsafe(wake, Exit.void)
      return round.events
    })
    yield* loop(matching, "matching", Effect.sleep(settings.pollMs))
    yield* loop(Effect.as(watches.sampleQueue, 0), "queue sampling", Effect.sleep(settings.pollMs))
    yield* watches.prune.pipe(
      Effect.asVoid,
      Effect.catchCause((cause) => Effect.logWarning("dropshelf: pruning watch matches failed", cause)),
      Effect.repeat(Schedule.spaced(HOUR)),
      Effect.forkScoped
    )
    yield* loop(
      watches.deliverRound,
      "delivery",
      Effect.suspend(() => {
        const woken = wake
        return Effect.raceFirst(Effect.sleep(settings.pollMs), Deferred.await(woken)).pipe(
          Effect.ensuring(Effect.sync(() => {
            if (wake === woken) wake = Deferred.makeUnsafe<void>()
          }))
        )
      })
    )
  }))

  static readonly layer = Layer.effect(
    Watches,
    Effect.gen(function*() {
      const store = yield* WatchStore
      const listings = yield* ListingStore
      const sender = yield* WebhookSender
      const random = yield* SecureRandom.SecureRandom
      const mac = yield* Mac.Mac
      const settings = yield* WatchSettingsRef

      const newId = (prefix: string) => Effect.map(Effect.orDie(random.randomBytes(20)), (bytes) => idFrom(prefix, bytes))
      const newSecret = Effect.map(Effect.orDie(random.randomBytes(SECRET_BYTES)), secretFrom)
      const jitter = Effect.map(Effect.orDie(random.randomBytes(4)), (bytes) => (((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0) / 2 ** 32)

      const own = Effect.fnUntraced(function*(caller: Caller, watchId: string) {
        const watch = yield* store.find(caller.accountId, watchId)
        if (watch === undefined) return yield* new WatchNotFound({ watchId })
        return watch
      })

      const webhookFor = Effect.fnUntraced(function*(raw: unknown) {
        const url = yield* Effect.fromResult(checkUrl(raw, settings.allowPrivate))
        const refused = settings.allowPrivate ? undefined : yield* sender.vet(url)
        if (refused !== undefined) return yield* new InvalidRequest({ parameter: "webhook_url", message: `webhook_url ${refused}` })
        return { url, secret: yield* newSecret, previousSecret: null, previousSecretUntil: null, state: "active", stateReason: null } satisfies WebhookRecord
      })

      const create = Effect.fnUntraced(function*(caller: Caller, body: unknown) {
        const input = yield* Effect.fromResult(decodeCreate(body))
        const name = input.name
        const queryText = input.query?.text ?? {}
        const webhook = input.webhookUrl === undefined || input.webhookUrl === null ? null : yield* webhookFor(input.webhookUrl)
        const now = yield* Clock.currentTimeMillis
        const watch: WatchRecord = {
          id: yield* newId("wch_"),
          accountId: caller.accountId,
          name,
          query: queryText,
          webhook,
          paused: false,
          createdAt: now,
          updatedAt: now
        }
        const created = yield* store.create(watch, caller.plan.watches)
        const view: CreatedWatchView = toWatchView(created, now)
        return webhook === null ? view : { ...view, webhook_secret: webhook.secret }
      }, Effect.withSpan("Watches.create"))

      const list = Effect.fnUntraced(function*(caller: Caller) {
        const now = yield* Clock.currentTimeMillis
        return { data: (yield* store.forAccount(caller.accountId)).map((watch) => toWatchView(watch, now)) } satisfies WatchList
      })

      const get = Effect.fnUntraced(function*(caller: Caller, watchId: string) {
        return toWatchView(yield* own(caller, watchId), yield* Clock.currentTimeMillis)
      })

      const update = Effect.fnUntraced(function*(caller: Caller, watchId: string, body: unknown) {
        yield* own(caller, watchId)
        const patch = yield* Effect.fromResult(decodePatch(body))
        const { name, query } = patch
        const newWebhook = patch.webhookUrl === undefined || patch.webhookUrl === null ? undefined : yield* webhookFor(patch.webhookUrl)
        const now = yield* Clock.currentTimeMillis
        let issued: string | undefined
        const updated = yield* store.update(caller.accountId, watchId, (current) => {
          let webhook = current.webhook
          issued = undefined
          if (patch.webhookUrl === null) webhook = null
          else if (newWebhook !== undefined) {
            // A new URL keeps the secret the owner already holds; it re-enables the webhook.
            if (current.webhook === null) issued = newWebhook.secret
            webhook = current.webhook === null
              ? newWebhook
              : { ...current.webhook, url: newWebhook.url, state: "active", stateReason: null }
          }
          if (patch.paused === false && webhook !== null && webhook.state === "paused") {
            webhook = { ...webhook, state: "active", stateReason: null }
          }
          return {
            ...current,
            ...(name === undefined ? {} : { name }),
            ...(query === undefined ? {} : { query: query.text }),
            ...(patch.paused === undefined ? {} : { paused: patch.paused }),
            webhook,
            updatedAt: now
          }
        })
        if (updated === undefined) return yield* new WatchNotFound({ watchId })
        const view: CreatedWatchView = toWatchView(updated, now)
        return issued === undefined ? view : { ...view, webhook_secret: issued }
      }, Effect.withSpan("Watches.update"))

      const remove = Effect.fnUntraced(function*(caller: Caller, watchId: string) {
        if (!(yield* store.remove(caller.accountId, watchId))) return yield* new WatchNotFound({ watchId })
      })

      const rotateSecret = Effect.fnUntraced(function*(caller: Caller, watchId: string) {
        const watch = yield* own(caller, watchId)
        if (watch.webhook === null) {
          return yield* new InvalidRequest({ parameter: "webhook_url", message: "The watch has no webhook, so no secret to rotate; PATCH webhook_url first" })
        }
        const secret = yield* newSecret
        const now = yield* Clock.currentTimeMillis
        const until = now + ROTATION_OVERLAP_MS
        const updated = yield* store.update(caller.accountId, watchId, (current) =>
          current.webhook === null ? current : {
            ...current,
            webhook: { ...current.webhook, secret, previousSecret: current.webhook.secret, previousSecretUntil: until },
            updatedAt: now
          })
        if (updated === undefined || updated.webhook === null) return yield* new WatchNotFound({ watchId })
        return { webhook_secret: secret, previous_secret_expires_at: toIso(until) } satisfies RotatedSecretView
      }, Effect.withSpan("Watches.rotateSecret"))

      /**
       * The listing as an account on `plan` reads it at `now`: null when it cannot (gone,
       * inactive, inside the delay). The row, its running hold and the account's reveal in one
       * look-up, a single read's.
       */
      const readAs = Effect.fnUntraced(function*(accountId: string, plan: PlanLimits, listingId: string, now: Instant) {
        if (!isListingId(listingId)) return null
        const found = yield* listings.findForReader(listingId, { at: now, revealsOf: revealsOfReader(plan, accountId) })
        if (found === undefined) return null
        const { listing } = found
        if (!isReadableAt(listing, plan, now)) return null
        return toListingView(
          listing,
          readerViewOf({ plan, accountId, tier: listing.tier, hold: found.running, revealed: found.revealed })
        ) satisfies ListingView
      })

      const matchView = (accountId: string, plan: PlanLimits, match: Pick<MatchRecord, "id" | "listingId" | "matchedAt">, now: Instant) =>
        Effect.map(readAs(accountId, plan, match.listingId, now), (listing): MatchView => ({
          id: match.id,
          matched_at: toIso(match.matchedAt),
          listing
        }))

      const matches = Effect.fnUntraced(function*(
        caller: Caller,
        watchId: string,
        page: { readonly cursor?: string | undefined; readonly limit?: number | undefined }
      ) {
        const watch = yield* own(caller, watchId)
        const after = page.cursor === undefined ? undefined : seqOf(page.cursor)
        if (page.cursor !== undefined && after === undefined) {
          return yield* new InvalidRequest({ parameter: "cursor", message: "cursor accepts only a next_cursor value issued by this endpoint" })
        }
        const limit = Math.min(MAX_MATCH_PAGE, Math.max(1, page.limit ?? DEFAULT_MATCH_PAGE))
        const rows = yield* store.matches(watch.id, after, limit + 1)
        const now = yield* Clock.currentTimeMillis
        const shown = rows.slice(0, limit)
        // All at once: the store answers concurrent single reads together (a page in one or two statements).
        const data = yield* Effect.forEach(shown, (match) => matchView(caller.accountId, caller.plan, match, now), { concurrency: "unbounded" })
        const hasMore = rows.length > limit
        // The cursor after the last match even on the last page: kept, it asks later for only newer matches.
        const last = shown[shown.length - 1]
        return { data, next_cursor: last === undefined ? null : cursorOf(last.seq), has_more: hasMore } satisfies MatchPage
      }, Effect.withSpan("Watches.matches"))

      const deliveries = Effect.fnUntraced(function*(caller: Caller, watchId: string) {
        const watch = yield* own(caller, watchId)
        const attempts = yield* store.attempts(watch.id, 100)
        return {
          data: attempts.map((attempt) => ({
            event_id: attempt.eventId,
            attempt: attempt.attempt,
            attempted_at: toIso(attempt.at),
            duration_ms: Math.round(attempt.durationMs),
            status_code: attempt.statusCode,
            error: attempt.error
          }))
        } satisfies AttemptList
      })

      const resend = Effect.fnUntraced(function*(caller: Caller, watchId: string, eventId: string) {
        const watch = yield* own(caller, watchId)
        if (watch.webhook === null) return yield* new DeliveryNotFound({ eventId })
        const now = yield* Clock.currentTimeMillis
        if (!(yield* store.resend(watch.id, eventId, now))) return yield* new DeliveryNotFound({ eventId })
        return { event_id: eventId, state: "pending", next_attempt_at: toIso(now) } satisfies ResendView
      }, Effect.withSpan("Watches.resend"))

      const ofAccount = (accountId: string) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.map(store.forAccount(accountId), (all) => all.map((watch) => toWatchView(watch, now))))

      // Decoded filters by their stored text: a round reads every watch, but decodes each query once.
      const decoded = new Map<string, ListFilters>()
      const filtersFor = (query: QueryText) => {
        const key = JSON.stringify(query)
        let filters = decoded.get(key)
        if (filters === undefined) {
          if (decoded.size > 50_000) decoded.clear()
          filters = filtersOf(query)
          decoded.set(key, filters)
        }
        return filters
      }
      const toCandidate = (row: CandidateRow): Candidate => ({
        watchId: row.watchId,
        accountId: row.accountId,
        plan: row.plan,
        filters: filtersFor(row.query),
        createdAt: row.createdAt
      })

      const matchRoundNaming = (idOf: (match: NewMatch) => string | undefined) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          store.matchRound({
            now,
            limit: settings.batch,
            plan: (due, candidates) => {
              const round = planRound(due, candidates.map(toCandidate), now)
              return { ...round, matches: round.matches.map((match) => ({ ...match, id: idOf(match) })) }
            }
          })).pipe(Effect.withSpan("Watches.matchRound"))
      const matchRound = matchRoundNaming(() => undefined)

      const deliverOne = Effect.fnUntraced(function*(claimed: ClaimedDelivery) {
        const { job, watch } = claimed
        const webhook = watch.webhook!
        const plan = effectivePlan(claimed.accountPlan)
        const startedAt = yield* Clock.currentTimeMillis
        const match = yield* matchView(watch.accountId, plan, { id: job.eventId, listingId: job.listingId, matchedAt: job.matchedAt }, startedAt)
        const event: MatchEvent = { type: "watch.match", timestamp: toIso(startedAt), data: { watch_id: watch.id, match } }
        const body = JSON.stringify(event)
        const timestamp = Math.floor(startedAt / 1000)
        const signature = yield* signatureHeader(signingSecrets(webhook, startedAt), job.eventId, timestamp, body).pipe(
          Effect.provideService(Mac.Mac, mac)
        )
        const { durationMs, result } = yield* sender.send({
          url: webhook.url,
          headers: {
            "content-type": "application/json",
            "user-agent": "dropshelf-webhooks/1",
            "webhook-id": job.eventId,
            "webhook-timestamp": String(timestamp),
            "webhook-signature": signature
          },
          body
        })
        const now = yield* Clock.currentTimeMillis
        const attempt = job.attempts + 1
        const outcome = decideAfterAttempt({ attempt, result, now, jitter: yield* jitter, manual: job.manual })
        yield* store.finishAttempt(
          {
            eventId: job.eventId,
            attempt,
            at: startedAt,
            durationMs,
            statusCode: result._tag === "Answered" ? result.status : null,
            error: result._tag === "Failed" ? result.error : null
          },
          outcome
        )
      })

      const sampleQueue = Effect.gen(function*() {
        const queue = yield* store.pendingDeliveries
        const now = yield* Clock.currentTimeMillis
        yield* Metric.update(DirectoryMetrics.pendingDeliveries, queue.count)
        yield* Metric.update(DirectoryMetrics.oldestPendingAge, queue.oldestMatchedAt === null ? 0 : Math.max(0, now - queue.oldestMatchedAt) / 1000)
      })

      const deliverRound = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const claimed = yield* store.claimDeliveries({ now, limit: settings.batch, leaseUntil: now + settings.leaseMs })
        yield* Effect.forEach(claimed, deliverOne, { concurrency: settings.concurrency, discard: true })
        return claimed.length
      }).pipe(Effect.withSpan("Watches.deliverRound"))

      return Watches.of({
        create,
        list,
        get,
        update,
        remove,
        rotateSecret,
        matches,
        deliveries,
        resend,
        ofAccount,
        matchRound,
        matchRoundNaming,
        deliverRound,
        settings,
        releaseLeases: store.releaseLeases,
        sampleQueue,
        prune: Effect.flatMap(Clock.currentTimeMillis, (now) => store.prune(now - settings.retentionDays * DAY)).pipe(
          Effect.withSpan("Watches.prune")
        )
      })
    })
  )

  /** Matching rounds, then delivery rounds, until neither finds work: for tests that drive the worker by hand. */
  static readonly drain = (watches: Watches["Service"]) =>
    Effect.gen(function*() {
      while ((yield* watches.matchRound).events > 0) {}
      while ((yield* watches.deliverRound) > 0) {}
    })
}
