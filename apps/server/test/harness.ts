/**
 * Starts the real server on a random loopback port over a given storage adapter, and talks to
 * it with plain `fetch`. Every exchange is recorded so a test can check it against the served
 * OpenAPI document afterwards.
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import { type IncomingMessage, request } from "node:http"
import { Effect, Layer, Logger, ManagedRuntime } from "effect"
import { HttpServer } from "effect/http"
import {
  type AccountStore,
  AvailabilityCheck,
  Cursor,
  Directory,
  EmailSignIn,
  type HoldStore,
  type IdempotencyStore,
  type KeyStore,
  ListingStore,
  Masking,
  Operators,
  type AuthorizationStore,
  type PasskeyStore,
  type RateLimiter,
  type RevealStore,
  type SecurityLogStore,
  Sessions,
  type SessionStore,
  UseCases,
  Watches,
  type WatchStore
} from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { RememberedCursors, Server, SmtpMail, WebAuthnSimple, WebhookDelivery } from "@dropshelf/server"

export type Ports =
  | ListingStore.ListingStore
  | RevealStore.RevealStore
  | HoldStore.HoldStore
  | AccountStore.AccountStore
  | KeyStore.KeyStore
  | IdempotencyStore.IdempotencyStore
  | WatchStore.WatchStore
  | SessionStore.SessionStore
  | SecurityLogStore.SecurityLogStore
  | PasskeyStore.PasskeyStore
  | AuthorizationStore.AuthorizationStore
  | RateLimiter.RateLimiter

/**
 * A storage adapter under test: its layer provides the six stores and the rate limiter (and
 * may provide an availability check, which the harness overrides).
 */
export interface Adapter {
  readonly name: string
  readonly layer: () => Layer.Layer<Ports, unknown>
  /** Why this adapter cannot run here, when it cannot. */
  readonly skip?: string | undefined
}

export const memoryAdapter: Adapter = {
  name: "memory",
  layer: () => StoreMemory.layer
}

export interface Exchange {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
}

export interface Running {
  readonly base: string
  readonly exchanges: Array<Exchange>
  readonly logs: Array<Record<string, unknown>>
  readonly run: <A, E>(
    effect: Effect.Effect<A, E, Operators.Operators | Directory.Directory | Watches.Watches | Sessions.Sessions | Ports>
  ) => Promise<A>
  readonly close: () => Promise<void>
}

export interface StartOptions {
  readonly availability?: Layer.Layer<AvailabilityCheck.AvailabilityCheck> | undefined
  readonly requestTimeoutMs?: number | undefined
  /**
   * Refused keys per address and minute. Every test talks from 127.0.0.1, and suites about other
   * things send more refused keys a minute than a client would, so the default here is generous.
   */
  readonly authFailuresPerMinute?: number | undefined
  readonly trustedProxies?: Server.Options["trustedProxies"]
  /** How long a repeat with an idempotency key waits for its first request (default: the core's). */
  readonly idempotencyWaitMs?: number | undefined
  /** How many days back the since feed reaches (default: the core's, 30). */
  readonly sinceHorizonDays?: number | undefined
  /**
   * The watch worker's settings; private receivers are allowed here (every receiver in a test
   * is on loopback). The worker runs only when `watchWorker` is true.
   */
  readonly watchSettings?: Partial<Watches.WatchSettings> | undefined
  readonly watchWorker?: boolean | undefined
  /** How long a snapshot's client may leave bytes unread before it is cut off (default: the server's, 60 s). */
  readonly snapshotIdleTimeoutMs?: number | undefined
  /** How long a snapshot's connection may last (default: the server's, 30 minutes). */
  readonly snapshotMaxMs?: number | undefined
  /** How long each step of the drain may last once `close` is called (default 5 s). */
  readonly shutdownTimeoutMs?: number | undefined
  /** The account area's upgrade link (DROPSHELF_UPGRADE_URL); default none. */
  readonly upgradeUrl?: string | undefined
  /** The account area's public origin (DROPSHELF_PUBLIC_URL); default none: the request's `Host`. */
  readonly publicUrl?: string | undefined
  /** Where sign-in links are mailed (DROPSHELF_SMTP_URL, DROPSHELF_MAIL_FROM); default no mail. */
  readonly mail?: SmtpMail.MailSettings | undefined
  /** OAuth client registrations per address and minute; default here: any number (every test is on 127.0.0.1). */
  readonly oauthRegistrationsPerMinute?: number | undefined
  /** DROPSHELF_SIGNUP; default `invite`. */
  readonly signUp?: EmailSignIn.SignUpMode | undefined
  /**
   * The sign-in attempt limits. Every test talks from 127.0.0.1, so the default here admits
   * any number; a test of the limits sets them.
   */
  readonly signInLimits?: Partial<EmailSignIn.AttemptLimits> | undefined
}

const UNLIMITED_ATTEMPTS: EmailSignIn.AttemptLimits = {
  ...EmailSignIn.DEFAULT_ATTEMPT_LIMITS,
  requestsPerAddress: 1_000_000,
  requestsPerEmail: 1_000_000,
  badLinksPerAddress: 1_000_000
}

/** The watch use cases as a test server runs them: private receivers allowed, a 50 ms poll. */
export const watchesLayer = (settings: Partial<Watches.WatchSettings> = {}) => {
  const watchSettings: Watches.WatchSettings = { ...Watches.DEFAULT_SETTINGS, allowPrivate: true, pollMs: 50, ...settings }
  return Watches.Watches.layer.pipe(
    Layer.provide(WebhookDelivery.layer(watchSettings.allowPrivate)),
    Layer.provide(Layer.succeed(Watches.WatchSettingsRef, watchSettings))
  )
}

/**
 * Every use case a test server runs, over the stores `stores` provides, with cursors signed as a
 * deployment signs them (apps/cli Runtime.serverLayer) under a throwaway secret.
 */
export const useCasesOver = <A, E, R>(
  stores: Layer.Layer<A, E, R>,
  options: Pick<StartOptions, "watchSettings" | "idempotencyWaitMs" | "sinceHorizonDays" | "availability" | "mail" | "signUp" | "signInLimits"> = {},
  /** The origin of mailed links: the server's, once it listens. */
  origin: () => string = () => "http://127.0.0.1"
) =>
  Layer.mergeAll(UseCases.layer.pipe(Layer.provide(WebAuthnSimple.layer)), watchesLayer(options.watchSettings)).pipe(
    Layer.provide(options.idempotencyWaitMs === undefined ? Layer.empty : Layer.succeed(Directory.IdempotencyWait, options.idempotencyWaitMs)),
    Layer.provide(SmtpMail.layerFrom({ mail: options.mail, signUp: options.signUp ?? "invite" }, origin)),
    Layer.provide(Layer.succeed(EmailSignIn.SignInAttemptLimits, { ...UNLIMITED_ATTEMPTS, ...options.signInLimits })),
    Layer.provide(options.sinceHorizonDays === undefined ? Layer.empty : Layer.succeed(Directory.SinceHorizonDays, options.sinceHorizonDays)),
    Layer.provide(RememberedCursors.layer(Cursor.CursorCodec.layer.pipe(Layer.provide(StoreMemory.layerEphemeralCursorSecret)), true)),
    Layer.provide(options.availability ?? AvailabilityCheck.AvailabilityCheck.layerStampOnly),
    Layer.provideMerge(stores),
    Layer.provideMerge(StoreMemory.layerCrypto)
  )

export const start = async (adapter: Adapter, options: StartOptions = {}): Promise<Running> => {
  const logs: Array<Record<string, unknown>> = []
  let base = "http://127.0.0.1"
  const core = useCasesOver(adapter.layer(), options, () => base)
  // What the server would log, as flat records: the annotations beside the level and message.
  const logger = Logger.map(Logger.formatStructured, (entry) => {
    logs.push({ ...entry.annotations, level: entry.level.toLowerCase(), message: entry.message })
  })
  const stack = Server.layer({
    port: 0,
    host: "127.0.0.1",
    shutdownTimeout: options.shutdownTimeoutMs ?? 5_000,
    logger,
    requestTimeoutMs: options.requestTimeoutMs,
    authFailuresPerMinute: options.authFailuresPerMinute ?? 100_000,
    trustedProxies: options.trustedProxies,
    snapshotIdleTimeoutMs: options.snapshotIdleTimeoutMs,
    snapshotMaxMs: options.snapshotMaxMs,
    upgradeUrl: options.upgradeUrl,
    publicUrl: options.publicUrl,
    oauthRegistrationsPerMinute: options.oauthRegistrationsPerMinute ?? 1_000_000
  }).pipe(
    Layer.merge(options.watchWorker === true ? Watches.Watches.layerWorker : Layer.empty),
    Layer.provideMerge(core)
  )
  const runtime = ManagedRuntime.make(
    stack as Layer.Layer<HttpServer.HttpServer | Operators.Operators | Directory.Directory | Watches.Watches | Sessions.Sessions | Ports, unknown>
  )
  const address = await runtime.runPromise(HttpServer.HttpServer.useSync((server) => server.address))
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  base = `http://127.0.0.1:${address.port}`
  return {
    base,
    exchanges: [],
    logs,
    run: (effect) => runtime.runPromise(effect),
    close: () => runtime.dispose()
  }
}

/** Fetch against the running server, recording the exchange. */
export const call = async (
  server: Running,
  method: string,
  path: string,
  init: { readonly key?: string | undefined; readonly body?: string | undefined; readonly headers?: Record<string, string> } = {}
): Promise<{ readonly status: number; readonly headers: Headers; readonly body: any; readonly text: string }> => {
  const headers: Record<string, string> = { ...init.headers }
  if (init.key !== undefined) headers.authorization = `Bearer ${init.key}`
  if (init.body !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json"
  const response = await fetch(`${server.base}${path}`, { method, headers, ...(init.body !== undefined ? { body: init.body } : {}) })
  const text = await response.text()
  let body: unknown = undefined
  try {
    body = text === "" ? undefined : JSON.parse(text)
  } catch {
    body = text
  }
  server.exchanges.push({ method, path, status: response.status, headers: response.headers, body })
  return { status: response.status, headers: response.headers, body, text }
}

const DAY = 86_400_000

type ListingInput = ListingStore.ListingInput

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
/** A fresh listing id: random, so runs against a shared database do not collide. */
export const newId = () => Array.from(crypto.getRandomValues(new Uint8Array(8)), (byte) => ALPHABET[byte % 62]).join("")

/** A listing input with sensible defaults, 30 days old unless told otherwise. */
export const listing = (overrides: Partial<ListingInput> & { readonly domain: string }): ListingInput => {
  const id = overrides.id ?? newId()
  return {
    id: id as ListingInput["id"],
    tier: "regular",
    status: "active",
    discoveredAt: Date.now() - 30 * DAY,
    estimatedValueCents: 12_000,
    category: "tech",
    ageYears: 9,
    backlinks: 1200,
    referringDomains: 140,
    domainAuthority: 35,
    snapshots: 300,
    directoryScore: 57,
    spam: "low",
    linkedBy: ["nytimes.com"],
    tags: ["coffee"],
    blurb: "A listing for tests",
    source: "test",
    agentCitability: null,
    featuredRank: null,
    availabilityCheckedAt: null,
    maskHint: Masking.maskHint(overrides.domain),
    wordCount: 2,
    ...overrides
  } as ListingInput
}

/** A fresh account on `plan` and one key for it. */
export const account = (
  server: Running,
  plan: "free" | "pro" | "business" | "lapsed",
  name = `acct-${plan}`
) =>
  server.run(Effect.gen(function*() {
    const operators = yield* Operators.Operators
    const created = yield* operators.createAccount(name, plan)
    const { key, secret } = yield* operators.createKey(created.id, `${name}-key`)
    return { accountId: created.id as string, secret, prefix: key.prefix }
  }))

export const addListings = (server: Running, inputs: ReadonlyArray<ListingInput>) =>
  server.run(Operators.Operators.use((operators) => operators.upsertListings(inputs)))

/**
 * What in `exchanges` the served document `spec` does not describe: an undocumented operation or
 * status, a documented header missing (one documented as not always sent may be absent), an
 * `Idempotent-Replayed` the answer does not document, a body where none is documented, a body
 * off its schema. `problems` is empty when every `/api/v1` answer conforms; `checked` counts the
 * answers checked against a documented status.
 */
export const conformance = (spec: any, exchanges: ReadonlyArray<Exchange>): { readonly problems: Array<string>; readonly checked: number } => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ajv.addSchema(spec, "openapi.json")
  const templates = Object.keys(spec.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`)
  }))
  const pointer = (...parts: Array<string>) => parts.map((part) => part.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")
  const problems: Array<string> = []
  let checked = 0
  for (const exchange of exchanges) {
    const pathname = exchange.path.split("?")[0]!
    const method = exchange.method.toLowerCase()
    if (!pathname.startsWith("/api/v1/") || method === "options" || method === "head") continue
    const match = templates.find(({ pattern }) => pattern.test(pathname))
    if (match === undefined) continue
    const label = `${exchange.method} ${exchange.path} → ${exchange.status}`
    const operation = spec.paths[match.template][method]
    if (operation === undefined) {
      if (exchange.status !== 405) problems.push(`${label}: undocumented operation`)
      continue
    }
    const documented = operation.responses[String(exchange.status)]
    if (documented === undefined) {
      problems.push(`${label}: status not documented`)
      continue
    }
    for (const [header, reference] of Object.entries<any>(documented.headers ?? {})) {
      // A header documented as not always sent (Link on a page with a next one, Idempotent-Replayed on a replay).
      const described = reference.$ref === undefined ? reference : spec.components.headers[reference.$ref.split("/").pop()]
      if (described.required === false) continue
      if (exchange.headers.get(header) === null) problems.push(`${label}: header ${header} missing`)
    }
    for (const header of exchange.headers.keys()) {
      if (header === "idempotent-replayed" && !Object.keys(documented.headers ?? {}).some((name) => name.toLowerCase() === header)) {
        problems.push(`${label}: header ${header} not documented`)
      }
    }
    checked++
    // A documented answer without content (204, 304) has no body.
    if (documented.content === undefined) {
      if (exchange.body !== undefined) problems.push(`${label}: a body where none is documented`)
      continue
    }
    const validate = ajv.getSchema(`openapi.json#/${pointer("paths", match.template, method, "responses", String(exchange.status), "content", "application/json", "schema")}`)
    if (validate === undefined) problems.push(`${label}: no schema`)
    else if (!validate(exchange.body)) problems.push(`${label}: ${ajv.errorsText(validate.errors)}`)
  }
  return { problems, checked }
}

export const conformanceProblems = (spec: any, exchanges: ReadonlyArray<Exchange>): Array<string> => conformance(spec, exchanges).problems

/**
 * The answer to GET `path` once its headers have arrived, its body not read yet: nothing flows
 * until a listener or `resume` asks for it.
 */
export const openGet = (server: Running, path: string, headers: Record<string, string>) =>
  new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(`${server.base}${path}`, { headers }, resolve)
    req.on("error", reject)
    req.end()
  })

/**
 * What reaches the client of `res` until its connection closes, and whether the body ended whole
 * (`close` comes however it ends; `complete` tells which). `each` sees every chunk as it comes.
 */
export const readToClose = (res: IncomingMessage, each: (chunk: Buffer) => void = () => {}) =>
  new Promise<{ complete: boolean; text: string }>((settle) => {
    const chunks: Array<Buffer> = []
    res.on("data", (chunk: Buffer) => {
      chunks.push(chunk)
      each(chunk)
    })
    res.on("error", () => {})
    res.on("close", () => settle({ complete: res.complete, text: Buffer.concat(chunks).toString("utf8") }))
  })

/** Waits out the end of a wall-clock minute, so a sequence of counted requests stays inside one rate-limit window. */
export const awayFromMinuteEdge = async (seconds = 10) => {
  const second = new Date().getUTCSeconds()
  if (second >= 60 - seconds) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000))
}
