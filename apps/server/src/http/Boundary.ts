import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Cause, Clock, Effect, Tracer } from "effect"
import { ByteSize } from "effect"
import { HttpIncomingMessage, HttpMiddleware, HttpServerRequest, HttpServerResponse } from "effect/http"
import { ApiKey, Quote } from "@dropshelf/core"
import { API_PREFIX, DropshelfApi } from "@dropshelf/api/Api"
import { type Admission, bearerOf } from "./Admission.ts"
import { CurrentExchange, Exchange } from "./Exchange.ts"
import {
  enveloped,
  errorResponse,
  fromCause,
  MAX_BODY_BYTES,
  missingHost,
  noRoute,
  pathnameOf,
  tooLarge,
  WWW_AUTHENTICATE
} from "./Refusals.ts"
import { requestIdOf } from "./RequestId.ts"
import * as Telemetry from "../Telemetry.ts"

/** The route recorded for a path no route knows (a 404): one series for every such path, not one each. */
export const UNMATCHED_ROUTE = "(unmatched)"

/** The span attribute naming the caller's key by its public prefix. */
export const KEY_PREFIX_ATTRIBUTE = "dropshelf.key.prefix"

/*
 * The HTTP boundary around every route. The framework routes (the matched route reaches the
 * request's `Exchange` from inside the router), answers the CORS preflight and adds the CORS
 * headers (`HttpMiddleware.cors`); this module keeps what the spec makes ours: one spelling per
 * resource, 405 with `Allow`, the body cap, the JSON envelope for every refusal the framework
 * would answer in its own way, the count of a keyed answer no handler gave, the request id, and
 * one log line per request.
 */

/**
 * The cap as the framework reads it while decoding a body (a chunked one has no length to check
 * up front), for the serving effect: every request's fiber inherits it.
 */
export const withBodyCap = <A, E, R>(serving: Effect.Effect<A, E, R>) =>
  Effect.provideService(serving, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES))

export const EXPOSED_HEADERS = [
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "Retry-After",
  "RateLimit-Policy",
  "RateLimit",
  "ETag",
  "Link",
  "X-Request-Id",
  "Idempotent-Replayed"
]

/** The headers a browser may send on a cross-origin request, REST and MCP alike. */
const ALLOWED_HEADERS = [
  "Authorization",
  "Content-Type",
  "Accept",
  "If-None-Match",
  "Idempotency-Key",
  "X-Request-Id",
  "Mcp-Protocol-Version",
  "Mcp-Session-Id",
  "Last-Event-ID"
]

interface KnownPath {
  /** The route as the router spells it (`/api/v1/domains/:id`). */
  readonly template: string
  readonly pattern: RegExp
  readonly methods: ReadonlyArray<string>
}

const toPattern = (path: string) =>
  new RegExp(`^${path.split("/").map((segment) => segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("/")}$`)

/**
 * Every path the server answers and its methods: the API definition's, plus the routes outside
 * it. The router finds no route for a method a path lacks and cannot tell that from a path it
 * does not know, so the 405 and its `Allow` are read here, for the requests no route took.
 */
const routeTable = (outside: Readonly<Record<string, ReadonlyArray<string>>>): ReadonlyArray<KnownPath> => {
  const byPath = new Map<string, Set<string>>()
  const add = (path: string, method: string) => {
    const methods = byPath.get(path) ?? new Set<string>()
    methods.add(method)
    byPath.set(path, methods)
  }
  for (const group of Object.values(DropshelfApi.groups)) {
    for (const endpoint of Object.values(group.endpoints)) add(endpoint.path, endpoint.method)
  }
  for (const [path, methods] of Object.entries(outside)) for (const method of methods) add(path, method)
  return [...byPath].map(([template, methods]) => {
    const list = [...methods]
    if (list.includes("GET")) list.push("HEAD")
    list.push("OPTIONS")
    return { template, pattern: toPattern(template), methods: list }
  })
}

/** The known path a canonical pathname names (see `isCanonical`), case-sensitively as the router. */
const matchPath = (table: ReadonlyArray<KnownPath>, pathname: string): KnownPath | undefined =>
  table.find((known) => known.pattern.test(pathname))

const keyPrefixOf = (secret: string | undefined): string | null =>
  secret !== undefined && ApiKey.isWellFormedKey(secret) ? ApiKey.prefixOf(secret) : null

/**
 * One spelling per resource: an origin-form target whose path has no empty, `.` or `..`
 * segment, no trailing slash, no `;` parameters and no percent-encoding (no path of the API
 * needs any: ids are letters, digits, `_` and `-`). The router would read some of the others as
 * the same resource, so that a proxy allowing or blocking by path could be walked around; they
 * are answered 404 instead (decision 0200).
 */
const isCanonical = (url: string, pathname: string) =>
  url.startsWith("/") && !/\/\/|;|%|\/\.\.?(?:\/|$)/.test(pathname) && (pathname === "/" || !pathname.endsWith("/"))

/** The MCP endpoint (mcp/McpRoute.ts counts each POST itself, as the REST key middleware does). */
const MCP_PATH = "/mcp"

const isUnder = (pathname: string, root: string) => pathname === root || pathname.startsWith(`${root}/`)

/**
 * Paths whose every answer to a valid key counts against it and carries its rate-limit headers:
 * the REST API, its bare prefix included, and the MCP endpoint (spec, Limits rule 2).
 */
const isKeyed = (pathname: string) => isUnder(pathname, API_PREFIX) || isUnder(pathname, MCP_PATH)

/**
 * An MCP client's probe for a server stream, part of connecting (decision 0400): its 405 is told
 * the key's window as it stands, without counting.
 */
const isStreamProbe = (method: string, pathname: string) => method === "GET" && pathname === MCP_PATH

/**
 * Wraps the router's handler with the conventions every response shares. `outside` names the
 * routes beyond the API definition and their methods, for 405 and `Allow`; `challenges` the
 * paths whose 401 names another `WWW-Authenticate` (`/mcp`, an OAuth protected resource).
 */
export const boundary = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  admission: Admission["Service"],
  outside: Readonly<Record<string, ReadonlyArray<string>>>,
  challenges: Readonly<Record<string, string>> = {}
) => {
  const table = routeTable(outside)
  const cors = HttpMiddleware.cors({
    allowedMethods: [...new Set(table.flatMap((known) => known.methods))],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600
  })

  /** The 405 a known path gives a method it lacks. */
  const notAllowed = (pathname: string, method: string) => {
    const known = matchPath(table, pathname)
    if (known === undefined || known.methods.includes(method)) return undefined
    return errorResponse(405, {
      code: "method_not_allowed",
      message: `${Quote.quote(pathname)} accepts ${known.methods.join(", ")}`
    }, { allow: known.methods.join(", ") })
  }

  /**
   * The route a request is logged and measured under: the router's, or for an answer no route
   * gave (405, 413, a refused spelling), the known path it names.
   */
  const routeOf = (exchange: Exchange, pathname: string) => exchange.route ?? matchPath(table, pathname)?.template

  const served = cors(Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const exchange = yield* CurrentExchange
    const started = yield* Clock.currentTimeMillis
    const pathname = pathnameOf(request.url)
    const method = request.method.toUpperCase()
    let fault: Cause.Cause<unknown> | undefined
    let abandoned = false
    let response: HttpServerResponse.HttpServerResponse
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    if (incoming.httpVersion === "1.1" && request.headers.host === undefined) {
      response = missingHost()
    } else if (!isCanonical(incoming.url ?? "", pathname)) {
      // The target as sent: the framework turns an absolute-form one into its path.
      response = noRoute(pathname)
    } else if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) {
      response = notAllowed(pathname, method) ?? tooLarge()
    } else {
      response = yield* app.pipe(
        Effect.catchCause((cause) => {
          const answer = fromCause(cause, request, exchange.requestId)
          fault = answer.fault
          abandoned = answer.abandoned === true
          return Effect.succeed(answer.unrouted === true ? notAllowed(pathname, method) ?? answer.response : answer.response)
        })
      )
    }
    response = enveloped(response, pathname, exchange.requestId)
    if (response.status === 401) response = HttpServerResponse.setHeader(response, "www-authenticate", challenges[pathname] ?? WWW_AUTHENTICATE)
    if (!abandoned && exchange.secret !== undefined && exchange.authenticated === undefined && isKeyed(pathname)) {
      response = yield* admission.settle(exchange, request, response, !isStreamProbe(method, pathname))
    }
    if (exchange.headers !== undefined) response = HttpServerResponse.setHeaders(response, exchange.headers)
    const route = routeOf(exchange, pathname)
    yield* logAnswer({ method, pathname, route, status: response.status, started, secret: exchange.secret, abandoned, fault })
    return response
  }))

  /**
   * `cors` answers every OPTIONS before the boundary sees it. One that carries a valid key on a
   * keyed path is counted like any other request and carries the rate-limit headers (over the
   * limit, the 429 with the preflight's CORS headers); a preflight without a key is unchanged.
   */
  const keyedOptions = Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest, exchange: Exchange, pathname: string) {
    const started = yield* Clock.currentTimeMillis
    const preflight = yield* served
    let response = HttpServerResponse.setHeaders(yield* admission.settle(exchange, request, preflight, true), preflight.headers)
    if (exchange.headers !== undefined) response = HttpServerResponse.setHeaders(response, exchange.headers)
    const route = routeOf(exchange, pathname)
    yield* logAnswer({ method: "OPTIONS", pathname, route, status: response.status, started, secret: exchange.secret, abandoned: false, fault: undefined })
    return response
  })

  /** A preflight `cors` answers alone is not logged; its span is still named for the path it asks about. */
  const preflight = Effect.tap(served, () =>
    Effect.flatMap(Effect.serviceOption(Tracer.ParentSpan), (span) =>
      HttpServerRequest.HttpServerRequest.useSync((request) => {
        if (span._tag === "None") return
        const route = matchPath(table, pathnameOf(request.url))?.template
        if (route !== undefined) nameServerSpan(span.value, "OPTIONS", route)
      })))

  const answer = (request: HttpServerRequest.HttpServerRequest, exchange: Exchange) => {
    if (request.method !== "OPTIONS") return served
    const pathname = pathnameOf(request.url)
    return exchange.secret !== undefined && isKeyed(pathname) ? keyedOptions(request, exchange, pathname) : preflight
  }

  // `Authorization` is read here, once; every response carries the request's id, the preflight's
  // included, and so does its log line.
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const exchange = new Exchange(requestIdOf(request.headers["x-request-id"]), bearerOf(request.headers.authorization))
    return answer(request, exchange).pipe(
      Effect.map((response) => HttpServerResponse.setHeader(response, "x-request-id", exchange.requestId)),
      Effect.provideService(CurrentExchange, exchange),
      Effect.annotateLogs("request_id", exchange.requestId)
    )
  })
}

/**
 * The request's one log line: `logError` for a 5xx that is ours, `logInfo` otherwise (a 503 is
 * not a fault: `/readyz` answering "not ready", whose cause is logged when it changes, or a
 * request abandoned by its client); its metrics; and the key's prefix on the request's span
 * (never the secret).
 */
const logAnswer = Effect.fnUntraced(function*(answer: {
  readonly method: string
  readonly pathname: string
  /** The route template the path matched; none for a path no route knows. */
  readonly route: string | undefined
  readonly status: number
  readonly started: number
  readonly secret: string | undefined
  readonly abandoned: boolean
  readonly fault: Cause.Cause<unknown> | undefined
}) {
  const finished = yield* Clock.currentTimeMillis
  const keyPrefix = keyPrefixOf(answer.secret)
  const route = answer.route ?? UNMATCHED_ROUTE
  yield* Telemetry.recordRequest(answer.method, route, answer.status, finished - answer.started)
  // The server span exists only while an exporter is installed; its ids tie the line to the trace.
  // Read from the context: `currentParentSpan` fails, with an Error and its stack, when there is none.
  const span = yield* Effect.serviceOption(Tracer.ParentSpan)
  if (span._tag === "Some") {
    if (answer.route !== undefined) nameServerSpan(span.value, answer.method, answer.route)
    if (keyPrefix !== null) yield* Effect.annotateCurrentSpan(KEY_PREFIX_ATTRIBUTE, keyPrefix)
  }
  const line = `${answer.method} ${answer.pathname} ${answer.status}`
  yield* (answer.status >= 500 && answer.status !== 503 ? Effect.logError(line) : Effect.logInfo(line)).pipe(
    Effect.annotateLogs({
      method: answer.method,
      path: answer.pathname,
      route,
      status: answer.status,
      duration_ms: finished - answer.started,
      key_prefix: keyPrefix,
      ...(span._tag === "Some" ? { trace_id: span.value.traceId, span_id: span.value.spanId } : {}),
      ...(answer.abandoned ? { abandoned: true } : {}),
      ...(answer.fault !== undefined ? { fault: Cause.pretty(answer.fault) } : {})
    })
  )
})

/**
 * OTel names a server span `{method} {route}`, the route known only once the request is
 * answered; Effect names it before, with the method alone (`SpanNameGenerator`'s default), and
 * reads the name when the span ends.
 */
const nameServerSpan = (span: Tracer.AnySpan, method: string, route: string) => {
  if (span._tag === "Span" && span.kind === "server") (span as { name: string }).name = `${method} ${route}`
}
