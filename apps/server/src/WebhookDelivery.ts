import { Config, Effect, Layer } from "effect"
import { Watches, Webhook, WebhookSender } from "@dropshelf/core"
import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import { request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP, type LookupFunction } from "node:net"
import * as RememberedWatchFilters from "./RememberedWatchFilters.ts"
import { wholeNumberBetween } from "./Settings.ts"

/*
 * The webhook sender on node:http(s): one POST, no redirect followed (a 3xx is an answer that
 * does not acknowledge), a 15 s deadline for the whole exchange, at most RESPONSE_BYTES_KEPT of
 * the answer read. Unless private receivers are allowed, every address a host name resolves to
 * must be public, checked in the connection's own look-up, so a name that rebinds to a private
 * address between the owner's request and the delivery is refused when delivering.
 */

const refusedAddress = (host: string, address: string) =>
  new Error(`refused: ${host} resolves to ${address}, not a public address (DROPSHELF_WEBHOOKS_ALLOW_PRIVATE is not set)`)

/** dns.lookup, refusing any answer that holds a non-public address. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error !== null) return callback(error, "", 0)
    const all = addresses as unknown as ReadonlyArray<LookupAddress>
    const bad = all.find((entry) => !Webhook.isPublicAddress(entry.address))
    if (bad !== undefined) return callback(Object.assign(refusedAddress(hostname, bad.address), { code: "EADDRNOTPUBLIC" }), "", 0)
    if ((options as { all?: boolean }).all === true) return (callback as unknown as (e: null, a: ReadonlyArray<LookupAddress>) => void)(null, all)
    callback(null, all[0]!.address, all[0]!.family)
  })
}

const describe = (error: unknown): string => {
  const e = error as { code?: string; message?: string }
  return (e.message ?? String(error)).replace(/\s+/g, " ").trim().slice(0, 300)
}

export const send = (allowPrivate: boolean) => (request: WebhookSender.WebhookRequest) =>
  Effect.callback<{ readonly result: Webhook.AttemptResult; readonly durationMs: number }>((resume, signal) => {
    const started = performance.now()
    const done = (result: Webhook.AttemptResult) => resume(Effect.succeed({ result, durationMs: Math.round(performance.now() - started) }))
    let url: URL
    try {
      url = new URL(request.url)
    } catch {
      return done({ _tag: "Failed", error: "invalid URL" })
    }
    const host = url.hostname.replace(/^\[|\]$/g, "")
    if (!allowPrivate && (url.protocol !== "https:" || (isIP(host) !== 0 && !Webhook.isPublicAddress(host)))) {
      return done({ _tag: "Failed", error: url.protocol !== "https:" ? "refused: not https" : refusedAddress(host, host).message })
    }
    const body = Buffer.from(request.body)
    const make = url.protocol === "https:" ? httpsRequest : httpRequest
    let settled = false
    const finish = (result: Webhook.AttemptResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      done(result)
    }
    const outgoing = make(url, {
      method: "POST",
      headers: { ...request.headers, "content-length": String(body.length) },
      ...(allowPrivate ? {} : { lookup: publicOnlyLookup }),
      signal
    }, (response) => {
      let read = 0
      response.on("data", (chunk: Buffer) => {
        read += chunk.length
        // The answer's body is not needed: read a little, then let the socket go.
        if (read > Webhook.RESPONSE_BYTES_KEPT) response.destroy()
      })
      const answered = () =>
        finish({
          _tag: "Answered",
          status: response.statusCode ?? 0,
          retryAfterMs: Webhook.parseRetryAfter(response.headers["retry-after"], Date.now())
        })
      response.on("end", answered)
      response.on("close", answered)
      response.on("error", answered)
    })
    const timer = setTimeout(() => {
      finish({ _tag: "Failed", error: `timeout: no answer within ${Webhook.ATTEMPT_TIMEOUT_MS / 1000} s` })
      outgoing.destroy()
    }, Webhook.ATTEMPT_TIMEOUT_MS)
    outgoing.on("error", (error) => finish({ _tag: "Failed", error: describe(error) }))
    outgoing.end(body)
  })

/** Why `url`'s host may not receive webhooks: it does not resolve, or not only to public addresses. */
export const vet = (url: string): Effect.Effect<string | undefined> =>
  Effect.callback<string | undefined>((resume) => {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "")
    if (isIP(host) !== 0) return resume(Effect.succeed(Webhook.isPublicAddress(host) ? undefined : `must name a public host; ${host} is not a public address`))
    dnsLookup(host, { all: true }, (error, addresses) => {
      if (error !== null) return resume(Effect.succeed(`must name a host that resolves; ${host} does not (${error.code ?? error.message})`))
      const bad = addresses.find((entry) => !Webhook.isPublicAddress(entry.address))
      resume(Effect.succeed(bad === undefined ? undefined : `must name a public host; ${host} resolves to ${bad.address}`))
    })
  })

/** The sender, allowing private receivers or not. */
export const layer = (allowPrivate: boolean): Layer.Layer<WebhookSender.WebhookSender> =>
  Layer.succeed(WebhookSender.WebhookSender, WebhookSender.WebhookSender.of({ send: send(allowPrivate), vet }))

/** `DROPSHELF_WEBHOOKS_ALLOW_PRIVATE`: `true` allows http and private or loopback receivers; default false. */
export const allowPrivateFromEnv: Config.Config<boolean> = Config.Boolean("DROPSHELF_WEBHOOKS_ALLOW_PRIVATE").pipe(Config.withDefault(false))

/** `DROPSHELF_WATCH_WORKER`: whether `serve` runs the watch worker in its own process; default true. */
export const workerFromEnv: Config.Config<boolean> = Config.Boolean("DROPSHELF_WATCH_WORKER").pipe(Config.withDefault(true))

/**
 * The worker's settings from the environment (docs/operations.md). A lease shorter than one
 * attempt's deadline lets a second worker send an event the first still waits on: allowed (a
 * receiver dedupes on webhook-id, and tests want a short one), but below a second is a mistake.
 */
export const settingsFromEnv: Config.Config<Watches.WatchSettings> = Config.all({
  allowPrivate: allowPrivateFromEnv,
  pollMs: wholeNumberBetween("DROPSHELF_WATCH_POLL_MS", 10, 60_000, Watches.DEFAULT_SETTINGS.pollMs),
  batch: wholeNumberBetween("DROPSHELF_WATCH_BATCH", 1, 10_000, Watches.DEFAULT_SETTINGS.batch),
  leaseMs: wholeNumberBetween("DROPSHELF_WATCH_LEASE_MS", 1_000, 3_600_000, Watches.DEFAULT_SETTINGS.leaseMs),
  concurrency: wholeNumberBetween("DROPSHELF_WATCH_CONCURRENCY", 1, 256, Watches.DEFAULT_SETTINGS.concurrency),
  retentionDays: wholeNumberBetween("DROPSHELF_WATCH_RETENTION_DAYS", 1, 3650, Watches.DEFAULT_SETTINGS.retentionDays)
})

/** `Watches` with these settings and the node:http(s) sender; needs the stores, `SecureRandom` and `Mac`. */
export const layerWith = (settings: Watches.WatchSettings, rememberWatchFilters = true) =>
  Watches.Watches.layer.pipe(
    Layer.provide(layer(settings.allowPrivate)),
    Layer.provide(RememberedWatchFilters.layer(rememberWatchFilters)),
    Layer.provide(Layer.succeed(Watches.WatchSettingsRef, settings))
  )
