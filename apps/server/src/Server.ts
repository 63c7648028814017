import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Config, Duration, Effect, Layer, type Logger, Schema, Scope } from "effect"
import { HttpMiddleware, HttpRouter, HttpServer, HttpServerError, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import type { IpNetwork } from "effect/net"
import { createServer } from "node:http"
import { Directory, type RateLimiter, type Watches } from "@dropshelf/core"
import { DropshelfApi } from "@dropshelf/api/Api"
import * as AccessLog from "./http/AccessLog.ts"
import { AddressGate, DEFAULT_AUTH_FAILURES_PER_MINUTE } from "./http/AddressGate.ts"
import { boundary } from "./http/Boundary.ts"
import { answerClientError, answerConnect } from "./http/ClientError.ts"
import { HandlersLive } from "./http/Handlers.ts"
import { MCP_PATH, McpRoute } from "./mcp/McpRoute.ts"

export interface Options {
  readonly port: number
  /** Bind address; default `127.0.0.1`. */
  readonly host?: string | undefined
  /** How long in-flight requests may take to finish once shutdown starts; default 20 s. */
  readonly shutdownTimeout?: Duration.Input | undefined
  /**
   * How long a whole request (headers and body) may take to arrive; past it the socket gets the
   * 408 envelope, or is closed when its answer already went out. Default 30 s.
   */
  readonly requestTimeoutMs?: number | undefined
  /** Where the server's log lines go; default JSON lines on stdout. */
  readonly logger?: Logger.Logger<unknown, unknown> | undefined
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
}

/** Liveness, outside `/api/v1`: no key, not rate limited. */
const HealthRoute = HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" }))

/**
 * The interactive reference, readable without a key (the document is embedded in the page).
 * Built by its first request: the page inlines Scalar's script, memory that a server nobody
 * browses need not hold.
 */
const DocsRoute = Layer.unwrap(Effect.gen(function*() {
  const scope = yield* Scope.Scope
  const page = yield* Effect.cached(
    HttpRouter.toHttpEffect(HttpApiScalar.layer(DropshelfApi, {
      path: "/docs",
      // Everything the page needs is inline: no fonts or scripts fetched from elsewhere. The
      // key is the one scheme, so the page offers it from the start.
      scalar: { withDefaultFonts: false, defaultOpenAllTags: true, authentication: { preferredSecurityScheme: "bearer" } }
    })).pipe(Scope.provide(scope))
  )
  return HttpRouter.add("GET", "/docs", Effect.flatMap(page, (serve) => Effect.scoped(serve)))
}))

/** Every route: the API's nine endpoints, `/mcp` (the same operations as tools), `/healthz` and `/docs`. Needs `Directory` and `RateLimiter`. */
export const routes = Layer.mergeAll(HttpApiBuilder.layer(DropshelfApi), McpRoute, DocsRoute, HealthRoute).pipe(
  Layer.provide(HandlersLive)
)

/**
 * The REST server on Node's HTTP server, listening once the layer is built and shutting down
 * gracefully when it is released (new connections refused, in-flight requests finish). Its
 * output includes `HttpServer.HttpServer`, whose `address` tells the port when `port` is 0.
 * While it runs, records of idempotency keys past their 24 hours are pruned hourly.
 */
export const layer = (
  options: Options
): Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError, Directory.Directory | Watches.Watches | RateLimiter.RateLimiter> =>
  Layer.unwrap(
    Effect.map(
      // Paths are case-sensitive, like the listing ids in them.
      HttpRouter.toHttpEffect(routes).pipe(Effect.provideService(HttpRouter.RouterConfig, { caseSensitive: true })),
      (app) => HttpServer.serve(behindProxies(options.trustedProxies ?? [])(boundary(app, { "/healthz": ["GET"], "/docs": ["GET"], [MCP_PATH]: ["POST"] })))
    )
  ).pipe(
    Layer.provide(AddressGate.layer(options.authFailuresPerMinute ?? DEFAULT_AUTH_FAILURES_PER_MINUTE)),
    Layer.provide(AccessLog.layer(options.logger)),
    Layer.provideMerge(NodeHttpServer.layer(() => nodeServer(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS), {
      port: options.port,
      host: options.host ?? "127.0.0.1",
      gracefulShutdownTimeout: options.shutdownTimeout ?? Duration.seconds(20)
    })),
    Layer.merge(Directory.Directory.layerPruning())
  )

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
 * after 5 s, Node's default.
 */
const deadlines = (requestTimeoutMs: number) => ({
  requestTimeout: requestTimeoutMs,
  headersTimeout: Math.min(requestTimeoutMs, 60_000),
  connectionsCheckingInterval: Math.min(1_000, requestTimeoutMs),
  keepAliveTimeout: 5_000
})

/** `DROPSHELF_REQUEST_TIMEOUT_MS`: whole milliseconds from 1 s to 10 minutes, default 30 s. */
export const requestTimeoutMsFromEnv: Config.Config<number> = Config.schema(
  Schema.Int.check(Schema.isBetween({ minimum: 1_000, maximum: 600_000 })),
  "DROPSHELF_REQUEST_TIMEOUT_MS"
).pipe(Config.withDefault(DEFAULT_REQUEST_TIMEOUT_MS))

/** `DROPSHELF_AUTH_FAILURES_PER_MINUTE`: a whole number from 1 to 1 000 000, default 30. */
export const authFailuresPerMinuteFromEnv: Config.Config<number> = Config.schema(
  Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000 })),
  "DROPSHELF_AUTH_FAILURES_PER_MINUTE"
).pipe(Config.withDefault(DEFAULT_AUTH_FAILURES_PER_MINUTE))

/** `DROPSHELF_TRUSTED_PROXIES`: comma-separated CIDR blocks (`10.0.0.0/8, ::1/128`), default none. */
export const trustedProxiesFromEnv: Config.Config<ReadonlyArray<IpNetwork.IpNetwork>> = Config.Array(
  Schema.Trim.pipe(Schema.decodeTo(Schema.IpNetworkFromString)),
  "DROPSHELF_TRUSTED_PROXIES"
).pipe(Config.withDefault([]))

/** `PORT` (default 8080) and `HOST` (default 127.0.0.1), as in the product's configuration table. */
export const optionsFromEnv: Config.Config<Options> = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  requestTimeoutMs: requestTimeoutMsFromEnv,
  authFailuresPerMinute: authFailuresPerMinuteFromEnv,
  trustedProxies: trustedProxiesFromEnv
})

/** Serves until interrupted (SIGINT/SIGTERM under `NodeRuntime.runMain`), then shuts down gracefully. */
export const serve = (
  options: Options
): Effect.Effect<never, HttpServerError.ServeError, Directory.Directory | Watches.Watches | RateLimiter.RateLimiter> =>
  Layer.launch(layer(options))
