import { Clock, Effect, Metric } from "effect"
import { Mac, SecureRandom } from "effect/crypto"
import * as DirectoryMetrics from "../DirectoryMetrics.ts"
import { effectivePlan } from "../domain/Plan.ts"
import { type Instant, toIso } from "../domain/Time.ts"
import type { MatchEvent } from "../domain/WatchView.ts"
import { decideAfterAttempt, signatureHeader } from "../domain/Webhook.ts"
import type { ClaimedDelivery, WebhookRecord } from "../ports/WatchStore.ts"
import { WatchStore } from "../ports/WatchStore.ts"
import { WebhookSender } from "../ports/WebhookSender.ts"
import type { MatchViewOf } from "./MatchViews.ts"
import type { WatchSettings } from "./WatchSettings.ts"

/*
 * The worker's delivery round: deliveries claimed under a lease, each sent signed (Standard
 * Webhooks) and its attempt recorded with the next one's schedule; and the queue's gauges.
 */

/** The secrets that sign at `now`: the current one, and the rotated-out one during its overlap. */
export const signingSecrets = (webhook: WebhookRecord, now: Instant): ReadonlyArray<string> =>
  webhook.previousSecret !== null && webhook.previousSecretUntil !== null && webhook.previousSecretUntil > now
    ? [webhook.secret, webhook.previousSecret]
    : [webhook.secret]

export const make = (settings: WatchSettings, matchView: MatchViewOf) => Effect.gen(function*() {
  const store = yield* WatchStore
  const sender = yield* WebhookSender
  const random = yield* SecureRandom.SecureRandom
  const mac = yield* Mac.Mac

  const jitter = Effect.map(Effect.orDie(random.randomBytes(4)), (bytes) => (((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0) / 2 ** 32)

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

  return { deliverRound, sampleQueue }
})
