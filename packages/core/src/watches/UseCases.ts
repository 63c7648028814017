import { Clock, Effect, Result } from "effect"
import { SecureRandom } from "effect/crypto"
import { Base64Url } from "effect/encoding"
import type { Caller } from "../Directory.ts"
import { DeliveryNotFound, InvalidRequest, WatchNotFound } from "../domain/errors.ts"
import { type Instant, toIso } from "../domain/Time.ts"
import { decodeCreate, decodePatch } from "../domain/Watch.ts"
import type {
  AttemptList,
  CreatedWatchView,
  MatchPage,
  ResendView,
  RotatedSecretView,
  WatchList,
  WatchView
} from "../domain/WatchView.ts"
import { checkUrl, ROTATION_OVERLAP_MS, SECRET_BYTES, secretFrom } from "../domain/Webhook.ts"
import type { WatchRecord, WebhookRecord } from "../ports/WatchStore.ts"
import { WatchStore } from "../ports/WatchStore.ts"
import { WebhookSender } from "../ports/WebhookSender.ts"
import type { MatchViewOf } from "./MatchViews.ts"
import type { WatchSettings } from "./WatchSettings.ts"

/*
 * The owner's use cases (REST and MCP): create, read, change and remove watches, rotate a
 * webhook's secret, page through matches, read and resend deliveries; and an operator's view
 * of an account's watches.
 */

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

const cursorOf = (seq: number) => Base64Url.encode(`m${seq}`)
const seqOf = (cursor: string): number | undefined => {
  const decoded = Base64Url.decodeString(cursor)
  if (Result.isFailure(decoded) || !/^m\d{1,15}$/.test(decoded.success)) return undefined
  return Number(decoded.success.slice(1))
}

export const make = (settings: WatchSettings, matchView: MatchViewOf) => Effect.gen(function*() {
  const store = yield* WatchStore
  const sender = yield* WebhookSender
  const random = yield* SecureRandom.SecureRandom

  const newId = (prefix: string) => Effect.map(Effect.orDie(random.randomBytes(20)), (bytes) => idFrom(prefix, bytes))
  const newSecret = Effect.map(Effect.orDie(random.randomBytes(SECRET_BYTES)), secretFrom)

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

  return { create, list, get, update, remove, rotateSecret, matches, deliveries, resend, ofAccount }
})
