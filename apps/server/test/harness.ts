/**
 * Starts the real server on a random loopback port over a given storage adapter, and talks to
 * it with plain `fetch`. Every exchange is recorded so a test can check it against the served
 * OpenAPI document afterwards.
 */
import { Effect, Layer, Logger, ManagedRuntime } from "effect"
import { HttpServer } from "effect/http"
import {
  type AccountStore,
  AvailabilityCheck,
  Cursor,
  Directory,
  type HoldStore,
  type KeyStore,
  ListingStore,
  Masking,
  Operators,
  type RateLimiter,
  type RevealStore
} from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Server } from "@dropshelf/server"

export type Ports =
  | ListingStore.ListingStore
  | RevealStore.RevealStore
  | HoldStore.HoldStore
  | AccountStore.AccountStore
  | KeyStore.KeyStore
  | RateLimiter.RateLimiter

/**
 * A storage adapter under test: its layer provides the five stores and the rate limiter (and
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
  readonly run: <A, E>(effect: Effect.Effect<A, E, Operators.Operators | Directory.Directory>) => Promise<A>
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
}

export const start = async (adapter: Adapter, options: StartOptions = {}): Promise<Running> => {
  const logs: Array<Record<string, unknown>> = []
  const core = Layer.mergeAll(Directory.Directory.layer, Operators.Operators.layer).pipe(
    Layer.provide(Cursor.CursorCodec.layer.pipe(Layer.provide(StoreMemory.layerEphemeralCursorSecret))),
    Layer.provide(options.availability ?? AvailabilityCheck.AvailabilityCheck.layerStampOnly),
    Layer.provideMerge(adapter.layer()),
    Layer.provideMerge(StoreMemory.layerCrypto)
  )
  // What the server would log, as flat records: the annotations beside the level and message.
  const logger = Logger.map(Logger.formatStructured, (entry) => {
    logs.push({ ...entry.annotations, level: entry.level.toLowerCase(), message: entry.message })
  })
  const stack = Server.layer({
    port: 0,
    host: "127.0.0.1",
    shutdownTimeout: "5 seconds",
    logger,
    requestTimeoutMs: options.requestTimeoutMs,
    authFailuresPerMinute: options.authFailuresPerMinute ?? 100_000,
    trustedProxies: options.trustedProxies
  }).pipe(
    Layer.provideMerge(core)
  )
  const runtime = ManagedRuntime.make(stack as Layer.Layer<HttpServer.HttpServer | Operators.Operators | Directory.Directory, unknown>)
  const address = await runtime.runPromise(HttpServer.HttpServer.useSync((server) => server.address))
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  return {
    base: `http://127.0.0.1:${address.port}`,
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

