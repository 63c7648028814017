import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Cause, Clock, Effect, Result, Tracer } from "effect"
import { ByteSize } from "effect"
import { HttpIncomingMessage, HttpMiddleware, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import type * as SchemaIssue from "effect/SchemaIssue"
import { ApiKey, ListQuery, Quote, RateLimiter } from "@dropshelf/core"
import { API_PREFIX, DropshelfApi } from "@dropshelf/api/Api"
import type { ErrorFields } from "@dropshelf/api/ApiErrors"
import { AddressGate, refusalOf } from "./AddressGate.ts"
import { bearerOf, countRequest, rateLimitHeaders } from "./ApiKeyAuth.ts"
import { RequestId, requestIdOf, serverFaultMessage } from "./RequestId.ts"
import * as Telemetry from "../Telemetry.ts"

/** The route recorded for a path no route knows (a 404): one series for every such path, not one each. */
export const UNMATCHED_ROUTE = "(unmatched)"

/** The span attribute naming the caller's key by its public prefix. */
export const KEY_PREFIX_ATTRIBUTE = "dropshelf.key.prefix"

/*
 * The HTTP boundary around every route. The framework routes, answers the CORS preflight and
 * adds the CORS headers (`HttpMiddleware.cors`); this module keeps what the spec makes ours:
 * 405 with `Allow` (the router has no notion of it), the body cap, the JSON error envelope for
 * every refusal the framework would answer in its own way, the rate-limit headers on the
 * answers given before any handler ran, the request id, and one log line per request.
 */

/** Request bodies are capped: the largest body any endpoint takes is a few dozen bytes. */
export const MAX_BODY_BYTES = 16 * 1024

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
export const WWW_AUTHENTICATE = "Bearer realm=\"dropshelf\""

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

export interface KnownPath {
  /** The route as the router spells it (`/api/v1/domains/:id`): OTel's `http.route`. */
  readonly template: string
  readonly pattern: RegExp
  readonly methods: ReadonlyArray<string>
}

const toPattern = (path: string) =>
  new RegExp(`^${path.split("/").map((segment) => segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("/")}$`)

/** Every path the server answers and its methods: the API definition's, plus the routes outside it. */
export const routeTable = (outside: Readonly<Record<string, ReadonlyArray<string>>>): ReadonlyArray<KnownPath> => {
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
export const matchPath = (table: ReadonlyArray<KnownPath>, pathname: string): KnownPath | undefined =>
  table.find((known) => known.pattern.test(pathname))

export const errorResponse = (status: number, fields: ErrorFields, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe({ error: fields }, { status, headers })

const noRoute = (pathname: string) => errorResponse(404, { code: "not_found", message: `No route for ${Quote.quote(pathname)}` })

export const pathnameOf = (url: string) => {
  const end = url.search(/[?#]/)
  return end === -1 ? url : url.slice(0, end)
}

/** The first parameter an issue points at, if any. */
const pointedParameter = (issue: SchemaIssue.Issue): string | undefined => {
  switch (issue._tag) {
    case "Pointer":
      return issue.path.length > 0 ? String(issue.path[0]) : pointedParameter(issue.issue)
    case "Composite":
    case "AnyOf":
      for (const inner of issue.issues) {
        const found = pointedParameter(inner)
        if (found !== undefined) return found
      }
      return undefined
    case "Filter":
    case "Encoding":
      return pointedParameter(issue.issue)
    default:
      return undefined
  }
}

/** A request part the framework could not decode, answered as `invalid_request` naming the part. */
const undecodable = (error: HttpApiError.HttpApiSchemaError) => {
  if (error.kind === "Query") {
    // The list query's schema carries its refusals: the parameter and what it accepts.
    const refusal = ListQuery.refusalOf(error.cause.issue)
    return errorResponse(400, { code: "invalid_request", message: refusal.message, parameter: refusal.parameter })
  }
  if (error.kind === "Payload") {
    const field = pointedParameter(error.cause.issue)
    if (field === undefined) {
      return errorResponse(400, {
        code: "invalid_request",
        message: "body accepts nothing or a JSON object such as {\"outcome\": \"released\"}; it is not valid JSON",
        parameter: "body"
      })
    }
    return errorResponse(400, {
      code: "invalid_request",
      message: field === "outcome" ? "outcome accepts released, registered" : `body.${Quote.quote(field)} is not accepted`,
      parameter: field
    })
  }
  const parameter = pointedParameter(error.cause.issue) ?? error.kind.toLowerCase()
  return errorResponse(400, {
    code: "invalid_request",
    message: `${parameter} has a value the API cannot honour`,
    parameter
  })
}

export const tooLarge = () =>
  errorResponse(413, {
    code: "invalid_request",
    message: `body accepts at most ${MAX_BODY_BYTES} bytes; no endpoint needs more`,
    parameter: "body"
  }, { connection: "close" })

export const isBodyTooLarge = (value: unknown) =>
  HttpApiError.HttpApiPayloadTooLarge.is(value) ||
  (HttpServerError.isHttpServerError(value) && value.reason._tag === "RequestParseError" &&
    (value.reason as { reason?: string }).reason === "BodyTooLarge")

/** RFC 9112 requires the 400; Node's own check would answer it without a body (decision 0200). */
const missingHost = () =>
  errorResponse(400, {
    code: "invalid_request",
    message: "An HTTP/1.1 request needs a Host header"
  }, { connection: "close" })

const serverError = (isReveal: boolean, requestId: string) =>
  errorResponse(500, {
    code: "server_error",
    message: serverFaultMessage("The service failed; retry with backoff", requestId),
    ...(isReveal ? { reveal_code: "REVEAL_FAILED" as const } : {})
  })

/** Everything the routes could not answer themselves, as the envelope. `fault` is set when it is ours. */
const fromCause = (cause: Cause.Cause<unknown>, request: HttpServerRequest.HttpServerRequest, requestId: string) => {
  const isReveal = /\/reveal\/?$/.test(pathnameOf(request.url))
  for (const reason of cause.reasons) {
    const value = reason._tag === "Fail" ? reason.error : reason._tag === "Die" ? reason.defect : undefined
    if (value === undefined) continue
    if (HttpServerError.isHttpServerError(value) && value.reason._tag === "RouteNotFound") {
      // Also a known path whose parameter is longer than the router takes: no handler ran.
      return { response: noRoute(pathnameOf(request.url)), unrouted: true }
    }
    if (isBodyTooLarge(value)) return { response: tooLarge() }
    if (HttpApiError.HttpApiSchemaError.is(value) && value.kind !== "Body" && value.kind !== "ResponseHeaders") {
      return { response: undecodable(value) }
    }
    if (HttpServerResponse.isHttpServerResponse(value)) return { response: value }
  }
  if (Cause.hasInterruptsOnly(cause)) {
    // The client went away (or the server is stopping): an answer nobody may receive, not a fault.
    const message = serverFaultMessage("The request was cut short; retry", requestId)
    return { response: errorResponse(503, { code: "server_error", message }), abandoned: true }
  }
  return { response: serverError(isReveal, requestId), fault: cause }
}

/** The framework's own bodies (a bare 415, an empty 500…) become the envelope too. */
const enveloped = (response: HttpServerResponse.HttpServerResponse, pathname: string, requestId: string) => {
  if (response.status < 400) return response
  const body = response.body as { readonly contentType?: string }
  const contentType = response.headers["content-type"] ?? body.contentType
  if (contentType !== undefined && contentType.startsWith("application/json")) return response
  switch (response.status) {
    case 400:
    case 415:
      return errorResponse(400, {
        code: "invalid_request",
        message: "body accepts nothing or a JSON object (Content-Type: application/json)",
        parameter: "body"
      })
    case 401:
      return errorResponse(401, { code: "unauthorized", message: "An API key is required" })
    case 404:
      return noRoute(pathname)
    case 413:
      return tooLarge()
    default:
      return serverError(/\/reveal\/?$/.test(pathname), requestId)
  }
}

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
 * routes beyond the API definition and their methods, for 405 and `Allow`.
 */
export const boundary = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  outside: Readonly<Record<string, ReadonlyArray<string>>>
) => {
  const table = routeTable(outside)
  const cors = HttpMiddleware.cors({
    allowedMethods: [...new Set(table.flatMap((known) => known.methods))],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600
  })

  /**
   * An answer given before any handler read the key (405, 413, an unknown route) still counts
   * against a valid key and carries its rate-limit headers, as every keyed response does; over
   * the limit it is the 429 any other request would get. A refused key counts against the
   * address, as on every path that reads a key.
   */
  const counted = Effect.fnUntraced(function*(
    request: HttpServerRequest.HttpServerRequest,
    secret: string,
    response: HttpServerResponse.HttpServerResponse,
    spend = true
  ) {
    const gate = yield* AddressGate
    const caller = yield* Effect.result(gate.authenticate(request, secret))
    if (Result.isFailure(caller)) {
      if (caller.failure._tag === "Unauthorized") return response
      const refusal = refusalOf(caller.failure)
      return errorResponse(429, refusal.fields, refusal.headers)
    }
    const limiter = yield* RateLimiter.RateLimiter
    if (!spend) {
      const rate = yield* limiter.peek(caller.success.key.id, caller.success.plan.requestsPerMinute)
      const { "retry-after": _refusalOnly, ...headers } = rateLimitHeaders(rate, yield* Clock.currentTimeMillis)
      return HttpServerResponse.setHeaders(response, headers)
    }
    const { headers, refusal } = yield* countRequest(limiter, caller.success)
    return refusal === undefined ? HttpServerResponse.setHeaders(response, headers) : errorResponse(429, refusal, headers)
  })

  const served = cors(Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = yield* Clock.currentTimeMillis
    const pathname = pathnameOf(request.url)
    const known = matchPath(table, pathname)
    const method = request.method.toUpperCase()
    const secret = bearerOf(request.headers.authorization)
    const requestId = yield* RequestId
    let fault: Cause.Cause<unknown> | undefined
    let abandoned = false
    let beforeHandler = true
    let response: HttpServerResponse.HttpServerResponse
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    if (incoming.httpVersion === "1.1" && request.headers.host === undefined) {
      response = missingHost()
    } else if (!isCanonical(incoming.url ?? "", pathname)) {
      // The target as sent: the framework turns an absolute-form one into its path.
      response = noRoute(pathname)
    } else if (known !== undefined && !known.methods.includes(method)) {
      response = errorResponse(405, {
        code: "method_not_allowed",
        message: `${Quote.quote(pathname)} accepts ${known.methods.join(", ")}`
      }, { allow: known.methods.join(", ") })
    } else if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) {
      response = tooLarge()
    } else {
      beforeHandler = known === undefined
      response = yield* app.pipe(
        Effect.catchCause((cause) => {
          const answer = fromCause(cause, request, requestId)
          fault = answer.fault
          abandoned = answer.abandoned === true
          if (answer.unrouted === true) beforeHandler = true
          return Effect.succeed(answer.response)
        })
      )
    }
    response = enveloped(response, pathname, requestId)
    if (response.status === 401) response = HttpServerResponse.setHeader(response, "www-authenticate", WWW_AUTHENTICATE)
    if (beforeHandler && secret !== undefined && isKeyed(pathname)) {
      response = yield* counted(request, secret, response, !isStreamProbe(method, pathname))
    }
    yield* logAnswer({ method, pathname, route: known?.template, status: response.status, started, secret, abandoned, fault })
    return response
  }))

  /**
   * `cors` answers every OPTIONS before the boundary sees it. One that carries a valid key on a
   * keyed path is counted like any other request and carries the rate-limit headers (over the
   * limit, the 429 with the preflight's CORS headers); a preflight without a key is unchanged.
   */
  const keyedOptions = Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest, secret: string, pathname: string) {
    const started = yield* Clock.currentTimeMillis
    const preflight = yield* served
    const response = HttpServerResponse.setHeaders(yield* counted(request, secret, preflight), preflight.headers)
    const route = matchPath(table, pathname)?.template
    yield* logAnswer({ method: "OPTIONS", pathname, route, status: response.status, started, secret, abandoned: false, fault: undefined })
    return response
  })

  const answer = (request: HttpServerRequest.HttpServerRequest) => {
    if (request.method !== "OPTIONS") return served
    const secret = bearerOf(request.headers.authorization)
    const pathname = pathnameOf(request.url)
    return secret === undefined || !isKeyed(pathname) ? served : keyedOptions(request, secret, pathname)
  }

  // Every response carries the request's id, the preflight's included, and so does its log line.
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const requestId = requestIdOf(request.headers["x-request-id"])
    return answer(request).pipe(
      Effect.map((response) => HttpServerResponse.setHeader(response, "x-request-id", requestId)),
      Effect.provideService(RequestId, requestId),
      Effect.annotateLogs("request_id", requestId)
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
  if (keyPrefix !== null && span._tag === "Some") yield* Effect.annotateCurrentSpan(KEY_PREFIX_ATTRIBUTE, keyPrefix)
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
