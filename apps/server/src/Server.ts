import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Config, Duration, Effect, Exit, Layer, type Logger, type LogLevel, Schema } from "effect"
import { HttpMiddleware, HttpRouter, HttpServer, type HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { IpNetwork } from "effect/net"
import { createServer } from "node:http"
import { gzipSync } from "node:zlib"
import {
  type AccountArea,
  type AccountReveals,
  type AuthorizationStore,
  Directory,
  type DirectoryArea,
  type EmailSignIn,
  type Operators,
  type Passkeys,
  type RateLimiter,
  type SecurityLog,
  Sessions,
  SinceHorizon,
  type Watches
} from "@dropshelf/core"
import { DropshelfApi } from "@dropshelf/api/Api"
import { ACCOUNT_PATHS, AccountRoutes, AccountSettings } from "./http/account/AccountRoutes.ts"
import { HOLDS_PATHS, HoldsRoutes } from "./http/account/HoldsRoutes.ts"
import { REVEALS_PATHS, RevealsRoutes } from "./http/account/RevealsRoutes.ts"
import { SECURITY_PATHS, SecurityRoutes } from "./http/account/SecurityRoutes.ts"
import { WATCHES_PATHS, WatchesRoutes } from "./http/account/WatchesRoutes.ts"
import { DirectoryRoutes } from "./http/account/DirectoryRoutes.ts"
import { PASSKEY_PATHS, PasskeyRoutes } from "./http/account/PasskeyRoutes.ts"
import { EMAIL_PATHS, EmailRoutes } from "./http/account/EmailRoutes.ts"
import * as AccessLog from "./http/AccessLog.ts"
import { AddressGate, DEFAULT_AUTH_FAILURES_PER_MINUTE } from "./http/AddressGate.ts"
import { Admission } from "./http/Admission.ts"
import { boundary, withBodyCap } from "./http/Boundary.ts"
import { answerClientError, answerConnect } from "./http/ClientError.ts"
import * as DocsPage from "./http/DocsPage.ts"
import { UpgradeUrl } from "./http/ErrorMapping.ts"
import { RecordRoute } from "./http/Exchange.ts"
import { acceptsGzip, HandlersLive, openApiDocument } from "./http/Handlers.ts"
import * as Health from "./http/Health.ts"
import { ListingRendering } from "./http/ListingRendering.ts"
import { DEFAULT_SNAPSHOT_DEADLINES, SnapshotDeadlines, streamedResponseOf } from "./http/SnapshotDeadlines.ts"
import { MCP_PATH, McpRoute } from "./mcp/McpRoute.ts"
import * as AuthorizationServer from "./oauth/AuthorizationServer.ts"
import { mcpChallenge, OAUTH_PATHS, OAuthRoutes } from "./oauth/OAuthRoutes.ts"
import { publicUrlFromEnv, upgradeUrlFromEnv, wholeNumberBetween } from "./Settings.ts"
import * as Telemetry from "./Telemetry.ts"

export interface Options {
  readonly port: number
  /** Bind address; default `127.0.0.1`. */
  readonly host?: string | undefined
  /**
   * How long the drain may last once shutdown starts (`/readyz` answers 503 from its first
   * moment): requests in flight get this long to finish, and the server keeps listening and
   * answering while any are. Default 20 s.
   */
  readonly shutdownTimeout?: Duration.Input | undefined
  /**
   * How long the server keeps listening after shutdown starts even with nothing in flight, so a
   * load balancer polling `/readyz` sees the 503 before connections are refused. Default 0.
   */
  readonly drainDelay?: Duration.Input | undefined
  /** The operator port serving Prometheus text at `GET /metrics`; default none. Never the API's port. */
  readonly metricsPort?: number | undefined
  /**
   * How long a whole request (headers and body) may take to arrive; past it the socket gets the
   * 408 envelope, or is closed when its answer already went out. Default 30 s.
   */
  readonly requestTimeoutMs?: number | undefined
  /** Where the server's log lines go; default JSON lines on stdout. */
  readonly logger?: Logger.Logger<unknown, unknown> | undefined
  /** The least severe line written; default `Info` (one line per request). */
  readonly logLevel?: LogLevel.LogLevel | undefined
  /**
   * Requests with a missing or refused key one client address may make in a wall-clock minute;
   * past it the address is answered 429 until the minute ends. Default 30.
   */
  readonly authFailuresPerMinute?: number | undefined
  /**
   * The reverse proxies whose `X-Forwarded-For` names the client (walked from the right, past
   * these). Default none: the client is the socket's peer.
   */
  readonly trustedProxies?: ReadonlyArray<IpNetwork.IpNetwork> | undefined
  /** Whether each listing's reader-independent JSON is kept per record (ListingRendering); default true. */
  readonly rememberListingJson?: boolean | undefined
  /**
   * How long a bulk snapshot's client may leave written bytes unread before its connection is
   * closed (SnapshotDeadlines.ts). Default 60 s.
   */
  readonly snapshotIdleTimeoutMs?: number | undefined
  /** How long a bulk snapshot's connection may last in all (SnapshotDeadlines.ts). Default 30 minutes. */
  readonly snapshotMaxMs?: number | undefined
  /**
   * The origin people reach the account area at (sign-in links and its `curl` lines name it, and
   * a form's `Origin` may name it); default the request's own `Host`.
   */
  readonly publicUrl?: string | undefined
  /** Where to upgrade a plan: every 402 carries it as `upgrade_url`, the account area links to it; default none. */
  readonly upgradeUrl?: string | undefined
  /** OAuth client registrations one address may make in a minute; default 10. */
  readonly oauthRegistrationsPerMinute?: number | undefined
}

/**
 * The interactive reference, readable without a key (the document is embedded in the page).
 * Built by its first request: the page inlines Scalar's script, memory that a server nobody
 * browses need not hold.
 */
const DocsRoute = Layer.unwrap(Effect.gen(function*() {
  const html = yield* Effect.cached(Effect.promise(() => DocsPage.render(openApiDocument())))
  const page = Effect.map(html, (text) => new TextEncoder().encode(text))
  const headers = { vary: "Accept-Encoding" }
  const served = Effect.map(page, (bytes) => HttpServerResponse.uint8Array(bytes, { headers, contentType: "text/html" }))
  // Megabytes of inline script that gzip shrinks several times: compressed once, on the first request that accepts it.
  const gzipped = yield* Effect.cached(Effect.map(page, (bytes) =>
    HttpServerResponse.uint8Array(gzipSync(bytes), { headers: { ...headers, "content-encoding": "gzip" }, contentType: "text/html" })
  ))
  return HttpRouter.add(
    "GET",
    "/docs",
    HttpServerRequest.HttpServerRequest.use((request) => acceptsGzip(request.headers["accept-encoding"]) ? gzipped : served)
  )
}))

/**
 * Every route: the API's endpoints (with `/`, `/healthz` and `/readyz`), `/mcp` (the same
 * operations as tools), `/docs` and the account area's pages, each telling the request's
 * exchange it matched. Needs `Directory`, `RateLimiter`, `Admission`, the server's `Lifecycle`,
 * and for the account area `Sessions`, `EmailSignIn`, `AccountArea`, `DirectoryArea`, `Passkeys` and `AccountSettings`.
 */
export const routes = Layer.mergeAll(
  HttpApiBuilder.layer(DropshelfApi),
  McpRoute,
  DocsRoute,
  AccountRoutes,
  HoldsRoutes,
  RevealsRoutes,
  WatchesRoutes,
  SecurityRoutes,
  DirectoryRoutes,
  PasskeyRoutes,
  EmailRoutes,
  OAuthRoutes
).pipe(
  Layer.provide(HandlersLive),
  Layer.provide(RecordRoute.layer)
)

/** The routes outside the API definition, and their methods. */
const OUTSIDE = {
  "/docs": ["GET"],
  [MCP_PATH]: ["POST"],
  ...ACCOUNT_PATHS,
  ...HOLDS_PATHS,
  ...REVEALS_PATHS,
  ...WATCHES_PATHS,
  ...SECURITY_PATHS,
  ...PASSKEY_PATHS,
  ...EMAIL_PATHS,
  ...OAUTH_PATHS
}

/**
 * Counts the requests being answered, for the drain; while draining, every answer closes its
 * connection. A streamed body (the bulk snapshot) is written after the handler returns: its
 * request counts until its response closes, however it ends.
 */
const tracked = <E, R>(lifecycle: Health.Lifecycle["Service"], app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.suspend(() => {
    lifecycle.inFlight++
    const release = () => {
      lifecycle.inFlight--
    }
    return app.pipe(
      Effect.map((response) => lifecycle.draining ? HttpServerResponse.setHeader(response, "connection", "close") : response),
      Effect.onExit((exit) =>
        Exit.isSuccess(exit) && exit.value.body._tag === "Stream"
          ? HttpServerRequest.HttpServerRequest.useSync((request) => {
            const response = streamedResponseOf(request)
            if (response !== undefined && !response.closed) response.once("close", release)
            else release()
          })
          : Effect.sync(release)
      )
    )
  })

/**
 * The drain, before the listener closes: `/readyz` answers 503 from now on; the server keeps
 * listening for `delay`, then until nothing is in flight, within `timeout` in all.
 */
const drain = (lifecycle: Health.Lifecycle["Service"], delay: Duration.Input, timeout: Duration.Input) =>
  Effect.gen(function*() {
    lifecycle.draining = true
    yield* Effect.logInfo("draining: /readyz answers 503; requests in flight finish before the listener closes")
    const idle = Effect.gen(function*() {
      yield* Effect.sleep(delay)
      while (lifecycle.inFlight > 0) yield* Effect.sleep("20 millis")
    })
    const finished = yield* Effect.timeoutOption(idle, timeout)
    if (finished._tag === "None") yield* Effect.logWarning(`drain: ${lifecycle.inFlight} requests still in flight when the shutdown timeout ended`)
  })

/** The use cases the server answers with: the API's, MCP's and the account area's. */
export type Served =
  | Directory.Directory
  | Watches.Watches
  | RateLimiter.RateLimiter
  | Sessions.Sessions
  | AccountArea.AccountArea
  | DirectoryArea.DirectoryArea
  | AccountReveals.AccountReveals
  | SecurityLog.SecurityLog
  | Passkeys.Passkeys
  | EmailSignIn.EmailSignIn
  | Operators.Operators
  | AuthorizationStore.AuthorizationStore

/**
 * The REST server on Node's HTTP server, listening once the layer is built and shutting down
 * gracefully when it is released (new connections refused, in-flight requests finish). Its
 * output includes `HttpServer.HttpServer`, whose `address` tells the port when `port` is 0.
 * While it runs, records of idempotency keys past their 24 hours, tombstones past the since
 * feed's horizon, sign-in links and sessions over for their retention, and expired OAuth
 * documents (codes, tokens, interactions), are pruned hourly.
 */
export const layer = (
  options: Options
): Layer.Layer<
  HttpServer.HttpServer,
  HttpServerError.ServeError,
  Served
> =>
  Layer.unwrap(
    Effect.gen(function*() {
      const lifecycle = yield* Health.Lifecycle
      // Paths are case-sensitive, like the listing ids in them.
      const app = yield* HttpRouter.toHttpEffect(routes).pipe(
        Effect.provideService(HttpRouter.RouterConfig, { caseSensitive: true }),
        Effect.provideService(SnapshotDeadlines, {
          idleMs: options.snapshotIdleTimeoutMs ?? DEFAULT_SNAPSHOT_DEADLINES.idleMs,
          maxMs: options.snapshotMaxMs ?? DEFAULT_SNAPSHOT_DEADLINES.maxMs
        })
      )
      const admission = yield* Admission
      const oauth = yield* AuthorizationServer.AuthorizationServer
      const challenges = { [MCP_PATH]: mcpChallenge(oauth.issuer) }
      const served = tracked(lifecycle, behindProxies(options.trustedProxies ?? [])(boundary(app, admission, OUTSIDE, challenges))).pipe(
        Effect.provideService(UpgradeUrl, options.upgradeUrl)
      )
      return Layer.effectDiscard(Effect.gen(function*() {
        yield* withBodyCap(HttpServer.serveEffect(served))
        // Added after the server's own finalizer, so it runs first: the listener stays open while draining.
        yield* Effect.addFinalizer(() => drain(lifecycle, options.drainDelay ?? 0, options.shutdownTimeout ?? DEFAULT_SHUTDOWN_TIMEOUT))
      }))
    })
  ).pipe(
    Layer.provide(Layer.provideMerge(Admission.layer, AddressGate.layer(options.authFailuresPerMinute ?? DEFAULT_AUTH_FAILURES_PER_MINUTE))),
    Layer.provide(Layer.provideMerge(
      AuthorizationServer.layerAccessTokens,
      AuthorizationServer.layer({
        trustProxy: (options.trustedProxies ?? []).length > 0,
        registrationsPerMinute: options.oauthRegistrationsPerMinute ?? AuthorizationServer.DEFAULT_REGISTRATIONS_PER_MINUTE
      })
    )),
    Layer.provide(AccessLog.layer(options.logger, options.logLevel)),
    Layer.provide(ListingRendering.layer(options.rememberListingJson ?? true)),
    Layer.provide(Layer.succeed(AccountSettings, { publicUrl: options.publicUrl, upgradeUrl: options.upgradeUrl })),
    Layer.provide(Health.Lifecycle.layer),
    Layer.provideMerge(NodeHttpServer.layer(() => nodeServer(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS), {
      port: options.port,
      host: options.host ?? "127.0.0.1",
      gracefulShutdownTimeout: options.shutdownTimeout ?? DEFAULT_SHUTDOWN_TIMEOUT
    })),
    Layer.merge(Directory.Directory.layerPruning()),
    Layer.merge(Sessions.Sessions.layerPruning()),
    Layer.merge(AuthorizationServer.layerPruning),
    Layer.merge(
      options.metricsPort === undefined
        ? Layer.empty
        // Its own `HttpServer` stays inside: the layer's output names the API's.
        : Layer.effectDiscard(Layer.build(Telemetry.layerMetricsServer({ port: options.metricsPort, host: options.host ?? "127.0.0.1" })))
    )
  )

export const DEFAULT_SHUTDOWN_TIMEOUT = Duration.seconds(20)

/** With trusted proxies, the request's remote address is the client they name (Effect's own walk of `X-Forwarded-For`). */
const behindProxies = (trustedProxies: ReadonlyArray<IpNetwork.IpNetwork>) =>
<E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  trustedProxies.length === 0 ? app : HttpMiddleware.xForwardedHeaders({ trustedProxies })(app)

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000

/**
 * Node's HTTP server, with the answers Node would give in its own way turned into the
 * envelope (decision 0200): a request it cannot parse (`clientError`), CONNECT, and a request
 * without `Host`, which the boundary refuses instead (Node's own check answers a bodyless
 * 400). An `Expect` other than `100-continue` is served as if absent rather than Node's bare
 * 417. A client that half-closes is taken to have gone, as Node does (decision 0200).
 */
const nodeServer = (requestTimeoutMs: number) => {
  const server = createServer({ ...deadlines(requestTimeoutMs), requireHostHeader: false })
    .on("clientError", answerClientError)
    .on("connect", answerConnect)
    .on("checkExpectation", (request, response) => server.emit("request", request, response))
  return server
}

/**
 * Node's own deadlines: the whole request within `requestTimeoutMs` (a client that trickles its
 * headers or a body, or never ends a chunked one, does not hold a socket for Node's default five
 * minutes), checked every second rather than every 30 s; an idle keep-alive socket is closed
 * 6 s after its last answer: Node's `keepAliveTimeout` of 5 s plus the 1 s buffer Node adds for
 * the time an answer takes to reach the client, both Node 24's defaults, written out.
 */
const deadlines = (requestTimeoutMs: number) => ({
  requestTimeout: requestTimeoutMs,
  headersTimeout: Math.min(requestTimeoutMs, 60_000),
  connectionsCheckingInterval: Math.min(1_000, requestTimeoutMs),
  keepAliveTimeout: 5_000,
  keepAliveTimeoutBuffer: 1_000
})

/** `DROPSHELF_REQUEST_TIMEOUT_MS`: whole milliseconds from 1 s to 10 minutes, default 30 s. */
export const requestTimeoutMsFromEnv: Config.Config<number> = wholeNumberBetween(
  "DROPSHELF_REQUEST_TIMEOUT_MS",
  1_000,
  600_000,
  DEFAULT_REQUEST_TIMEOUT_MS
)

/** `DROPSHELF_AUTH_FAILURES_PER_MINUTE`: a whole number from 1 to 1 000 000, default 30. */
export const authFailuresPerMinuteFromEnv: Config.Config<number> = wholeNumberBetween(
  "DROPSHELF_AUTH_FAILURES_PER_MINUTE",
  1,
  1_000_000,
  DEFAULT_AUTH_FAILURES_PER_MINUTE
)

/** `DROPSHELF_SINCE_HORIZON_DAYS`: how many days back the since feed reaches, 1 to 3650, default 30. */
export const sinceHorizonDaysFromEnv: Config.Config<number> = wholeNumberBetween(
  "DROPSHELF_SINCE_HORIZON_DAYS",
  SinceHorizon.MIN_HORIZON_DAYS,
  SinceHorizon.MAX_HORIZON_DAYS,
  SinceHorizon.DEFAULT_HORIZON_DAYS
)

/** `DROPSHELF_TRUSTED_PROXIES`: comma-separated CIDR blocks (`10.0.0.0/8, ::1/128`), default none. */
export const trustedProxiesFromEnv: Config.Config<ReadonlyArray<IpNetwork.IpNetwork>> = Config.Array(
  Schema.Trim.pipe(Schema.decodeTo(Schema.IpNetworkFromString)),
  "DROPSHELF_TRUSTED_PROXIES"
).pipe(Config.withDefault([]))

/** `DROPSHELF_SHUTDOWN_TIMEOUT_MS`: how long the drain may last, whole milliseconds up to 10 minutes, default 20 s. */
export const shutdownTimeoutFromEnv: Config.Config<Duration.Duration> = wholeNumberBetween(
  "DROPSHELF_SHUTDOWN_TIMEOUT_MS",
  0,
  600_000,
  Duration.toMillis(DEFAULT_SHUTDOWN_TIMEOUT)
).pipe(Config.map(Duration.millis))

/** `DROPSHELF_DRAIN_DELAY_MS`: how long to keep listening after shutdown starts, whole milliseconds up to 10 minutes, default 0. */
export const drainDelayFromEnv: Config.Config<Duration.Duration> = wholeNumberBetween("DROPSHELF_DRAIN_DELAY_MS", 0, 600_000, 0).pipe(
  Config.map(Duration.millis)
)

/** `DROPSHELF_SNAPSHOT_IDLE_TIMEOUT_MS`: whole milliseconds from 1 s to 1 hour, default 60 s. */
export const snapshotIdleTimeoutMsFromEnv: Config.Config<number> = wholeNumberBetween(
  "DROPSHELF_SNAPSHOT_IDLE_TIMEOUT_MS",
  1_000,
  3_600_000,
  DEFAULT_SNAPSHOT_DEADLINES.idleMs
)

/** `DROPSHELF_SNAPSHOT_MAX_MS`: whole milliseconds from 1 minute to 24 hours, default 30 minutes. */
export const snapshotMaxMsFromEnv: Config.Config<number> = wholeNumberBetween(
  "DROPSHELF_SNAPSHOT_MAX_MS",
  60_000,
  86_400_000,
  DEFAULT_SNAPSHOT_DEADLINES.maxMs
)

/** The server's settings beyond `PORT` and `HOST`, read by the commands that serve. */
export const settingsFromEnv = Config.all({
  requestTimeoutMs: requestTimeoutMsFromEnv,
  snapshotIdleTimeoutMs: snapshotIdleTimeoutMsFromEnv,
  snapshotMaxMs: snapshotMaxMsFromEnv,
  authFailuresPerMinute: authFailuresPerMinuteFromEnv,
  trustedProxies: trustedProxiesFromEnv,
  shutdownTimeout: shutdownTimeoutFromEnv,
  drainDelay: drainDelayFromEnv,
  metricsPort: Telemetry.metricsPortFromEnv,
  logLevel: Telemetry.logLevelFromEnv,
  publicUrl: publicUrlFromEnv,
  upgradeUrl: upgradeUrlFromEnv
})

/** `PORT` (default 8080) and `HOST` (default 127.0.0.1), as in the product's configuration table, and the settings. */
export const optionsFromEnv: Config.Config<Options> = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  settings: settingsFromEnv
}).pipe(Config.map(({ settings, ...address }) => ({ ...address, ...settings })))

/** Serves until interrupted (SIGINT/SIGTERM under `NodeRuntime.runMain`), then shuts down gracefully. */
export const serve = (
  options: Options
): Effect.Effect<
  never,
  HttpServerError.ServeError,
  Served
> =>
  Layer.launch(layer(options))
