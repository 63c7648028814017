import { Cause } from "effect"
import { HttpServerError, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import type * as SchemaIssue from "effect/SchemaIssue"
import { ListQuery, Quote } from "@dropshelf/core"
import type { ErrorFields } from "@dropshelf/api/ApiErrors"
import { serverFaultMessage } from "./RequestId.ts"

/*
 * The envelope of every refusal the boundary gives or takes over from the framework, so that
 * nothing leaves as HTML, text or an empty body (docs/decisions/0200-http.md).
 */

/** Request bodies are capped: the largest body any endpoint takes is a few dozen bytes. */
export const MAX_BODY_BYTES = 16 * 1024

export const WWW_AUTHENTICATE = "Bearer realm=\"dropshelf\""

export const errorResponse = (status: number, fields: ErrorFields, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe({ error: fields }, { status, headers })

export const noRoute = (pathname: string) => errorResponse(404, { code: "not_found", message: `No route for ${Quote.quote(pathname)}` })

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
export const missingHost = () =>
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
export const fromCause = (cause: Cause.Cause<unknown>, request: HttpServerRequest.HttpServerRequest, requestId: string) => {
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
export const enveloped = (response: HttpServerResponse.HttpServerResponse, pathname: string, requestId: string) => {
  if (response.status < 400) return response
  const body = response.body as { readonly contentType?: string }
  const contentType = response.headers["content-type"] ?? body.contentType
  if (contentType !== undefined && contentType.startsWith("application/json")) return response
  // The account area's pages answer people, in HTML, refusals included.
  if (contentType !== undefined && contentType.startsWith("text/html")) return response
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

