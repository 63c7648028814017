import { Idempotency, ListQuery } from "@dropshelf/core"

/**
 * What the generated OpenAPI document cannot learn from the endpoint schemas: the headers the
 * HTTP boundary adds (rate limits, `WWW-Authenticate`, `Retry-After`, `Allow`, CORS, the request
 * id), the conditional reads (`If-None-Match`, `ETag`, 304), the next page's `Link`, the
 * optional request body of `DELETE /holds/{id}`, and the `Idempotency-Key` the writes read with
 * the `Idempotent-Replayed` that marks a replayed answer, the 400 to a request without `Host`,
 * and the server (`/`, the origin that serves the document). Applied through the API's `transform`
 * annotation, so `/api/v1/openapi.json` and `/docs` show the same document.
 */

type Json = Record<string, any>

const integerHeader = (description: string, bounds: { readonly minimum: number; readonly maximum?: number }) => ({
  description,
  schema: { type: "integer", ...bounds }
})

export const RESPONSE_HEADERS: Json = {
  "X-RateLimit-Limit": integerHeader("The plan's requests per minute for this key. Absent when no valid key was read (a 401, and the 429 to an address over its ceiling of refused keys).", { minimum: 1 }),
  "X-RateLimit-Remaining": integerHeader("Requests left in the current one-minute window, after this one.", { minimum: 0 }),
  "X-RateLimit-Reset": integerHeader(
    "Unix time in seconds at which the current window ends (the next wall-clock minute).",
    { minimum: 0 }
  ),
  "RateLimit-Policy": {
    description:
      "The key's quota as an IETF structured field (draft-ietf-httpapi-ratelimit-headers-11): `\"per-minute\";q=<requests per minute>;w=60`. Sent with `X-RateLimit-*`, and only then.",
    schema: { type: "string", examples: ["\"per-minute\";q=60;w=60"] }
  },
  RateLimit: {
    description:
      "What is left of the quota, as an IETF structured field: `\"per-minute\";r=<requests left>;t=<whole seconds until the window resets>`; `r` is `X-RateLimit-Remaining`, `t` is `Retry-After` on a 429.",
    schema: { type: "string", examples: ["\"per-minute\";r=57;t=23"] }
  },
  "Retry-After": integerHeader("Whole seconds (at least 1) until the window resets.", { minimum: 1, maximum: 60 }),
  "WWW-Authenticate": { description: "Always `Bearer realm=\"dropshelf\"`.", schema: { type: "string" } },
  Allow: { description: "The methods this path implements.", schema: { type: "string" } },
  "Access-Control-Allow-Origin": { description: "Always `*`.", schema: { type: "string", const: "*" } },
  "Idempotent-Replayed": {
    description:
      "`true` when this answer is the stored answer of the first request sent with the same `Idempotency-Key`, given again; absent otherwise.",
    required: false,
    schema: { type: "string", const: "true" }
  },
  "X-Request-Id": {
    description:
      "This request's id: the request's own `X-Request-Id` when it is 1 to 128 characters among letters, digits and `-_.:+/=`, else a new UUID. The same id is in the server's log line for the request and in the message of any 5xx.",
    schema: { type: "string", pattern: "^[A-Za-z0-9\\-_.:+/=]{1,128}$" }
  },
  ETag: {
    description:
      "The entity tag of this body for this caller: strong, except on a list page, where it is weak (`W/\"…\"`) and leaves out `synced_at`. Send it back in `If-None-Match`.",
    schema: { type: "string" }
  },
  "Content-Encoding": {
    description: "`gzip` on a bulk snapshot when the request's `Accept-Encoding` accepts gzip; absent otherwise.",
    required: false,
    schema: { type: "string", const: "gzip" }
  },
  Link: {
    description:
      "On a page that has a next one: `</api/v1/domains?…&cursor=…>; rel=\"next\"` (RFC 8288), this request's path and query with the next cursor, as a reference relative to the URL requested.",
    required: false,
    schema: { type: "string" }
  }
}

/** The request header of the writes that take an idempotency key. */
export const IDEMPOTENCY_KEY_PARAMETER: Json = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Optional. 1 to 255 visible ASCII characters, such as a UUID, new for each new write. The first request with the key runs; a repeat of the same request (method, path and body) by the same account within 24 hours gets the first answer again, status and body, with `Idempotent-Replayed: true`, and changes nothing. A repeat that arrives while the first still runs waits for its answer (up to 10 s, then 409 `idempotency_key_in_use`); the key with a different request is 422 `idempotency_key_reused`. Answers that say to retry (429, 5xx) are not kept. A malformed key is 400 naming `Idempotency-Key`.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: Idempotency.KEY_PATTERN.source }
}

/** The statuses a replay can answer: a write's own answers, never one that says to retry or is about the key. */
const REPLAYABLE = new Set(["200", "400", "402", "403", "404"])

const IF_NONE_MATCH = {
  name: "If-None-Match",
  in: "header",
  required: false,
  description:
    "Entity tags of copies you hold (RFC 9110 section 13.1.2: a list, `*`, weak or strong tags, compared weakly). When one matches what this request would answer, the answer is 304 with no body, and the request does not count against the key's limit.",
  schema: { type: "string" }
}

const X_REQUEST_ID = {
  name: "X-Request-Id",
  in: "header",
  required: false,
  description:
    "Your id for this request, echoed in the response's `X-Request-Id` and written to the server's log when it is 1 to 128 characters among letters, digits and `-_.:+/=`; otherwise the server makes one.",
  schema: { type: "string" }
}

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` })

/**
 * Responses that come before a key is read carry no rate-limit headers: a 401, and Node's own
 * 408 and 431. A 405 or 413 to a request with a valid key carries them, as every counted answer.
 */
const UNCOUNTED = new Set(["401", "408", "431"])

/**
 * Query values travel as text; the document states the type each one must spell: the list
 * query's schema marks an integer by its pattern, a boolean by its two texts.
 */
const spelledType = (schema: Json | undefined): Json | undefined => {
  if (schema === undefined) return undefined
  const { pattern, description: _, ...bounds } = schema
  if (pattern === ListQuery.INTEGER_TEXT) return { ...bounds, type: "integer" }
  if (ListQuery.isBooleanText(schema)) return { type: "boolean" }
  return undefined
}

/**
 * An array schema with no `items` accepts any items (JSON Schema's default), and Effect leaves
 * `items` out when they are unconstrained (`agent_citability.sources`); linters of OpenAPI
 * documents and some generators require the keyword, so it is written out: `items: {}`.
 */
const explicitItems = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(explicitItems)
  if (typeof node !== "object" || node === null) return
  const schema = node as Json
  if (schema.type === "array" && !("items" in schema) && !("prefixItems" in schema)) schema.items = {}
  for (const value of Object.values(schema)) explicitItems(value)
}

/**
 * Effect writes `Schema.Int` as a safe integer, `±Number.MAX_SAFE_INTEGER` bounds included, and a
 * lower bound added by a check keeps the other one. Such a bound says nothing a client can use,
 * and the reference page and generators print it as an example: it is dropped wherever it is.
 */
const dropSafeIntegerBounds = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(dropSafeIntegerBounds)
  if (typeof node !== "object" || node === null) return
  const schema = node as Json
  for (const bound of ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]) {
    if (typeof schema[bound] === "number" && Math.abs(schema[bound]) >= Number.MAX_SAFE_INTEGER) delete schema[bound]
  }
  for (const value of Object.values(schema)) dropSafeIntegerBounds(value)
}

const webhookHeader = (description: string, schema: Json) => ({ name: "", in: "header", required: true, description, schema })

/**
 * What a watch's webhook receives (OpenAPI 3.1 `webhooks`): the match event, its three
 * Standard Webhooks headers and the answers that acknowledge, retry or disable
 * (docs/decisions/0220-standard-webhooks.md).
 */
export const WEBHOOKS: Json = {
  "watch.match": {
    post: {
      operationId: "webhooks.watchMatch",
      summary: "A listing matched a watch",
      description:
        "POSTed to the watch's `webhook_url`, signed per Standard Webhooks v1: verify with any Standard Webhooks library and the watch's `whsec_` secret. Retried with the same `webhook-id` (dedupe on it) until a 2xx within 15 s: immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h (±10 %), honouring `Retry-After` on 429 and 503; after that the webhook is paused. Redirects are not followed.",
      parameters: [
        { ...webhookHeader("The event id: the match's `id`, the same on every retry", { type: "string" }), name: "webhook-id" },
        { ...webhookHeader("Unix time in seconds of this attempt", { type: "string", pattern: "^[0-9]+$" }), name: "webhook-timestamp" },
        {
          ...webhookHeader(
            "`v1,<base64 HMAC-SHA256 of \"<webhook-id>.<webhook-timestamp>.<body>\">`; two, space-separated, for 24 hours after a secret rotation",
            { type: "string" }
          ),
          name: "webhook-signature"
        }
      ],
      requestBody: {
        required: true,
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: ["type", "timestamp", "data"],
              properties: {
                type: { type: "string", const: "watch.match" },
                timestamp: { type: "string", description: "ISO 8601 instant of this attempt" },
                data: {
                  type: "object",
                  required: ["watch_id", "match"],
                  properties: {
                    watch_id: { type: "string" },
                    match: { $ref: "#/components/schemas/WatchMatch" }
                  },
                  additionalProperties: false
                }
              },
              additionalProperties: false
            }
          }
        }
      },
      responses: {
        "200": { description: "Any 2xx within 15 s acknowledges the event." },
        "410": { description: "Gone: the webhook is disabled at once, until its URL is set again." },
        "429": { description: "Retried no sooner than `Retry-After`, nor than the schedule's next delay." }
      }
    }
  }
}

const MISSING_HOST =
  "An HTTP/1.1 request without `Host` (RFC 9112) is answered `invalid_request` before anything else, with `Connection: close`; a valid key is counted, as for any answer."

/**
 * The server refuses an HTTP/1.1 request without `Host` on every path, before routing (decision
 * 0200): a 400 on every operation, added to the one an operation already describes.
 */
const describeMissingHost = (responses: Json): void => {
  const existing = responses["400"]
  responses["400"] = existing === undefined
    ? {
      description: `Missing \`Host\`. ${MISSING_HOST}`,
      content: { "application/json": { schema: { $ref: "#/components/schemas/InvalidRequestErrorEncoded" } } }
    }
    : { ...existing, description: `${existing.description} Or: ${MISSING_HOST}` }
}

/**
 * The document finished; `conditionalReads` are the operation ids of the reads that answer
 * `If-None-Match` (Api.ts `CONDITIONAL_READS`, passed in: Api.ts imports this module).
 */
export const finishDocument = (conditionalReads: ReadonlyArray<string>) => (spec: Json): Json => {
  explicitItems(spec.components?.schemas)
  spec.components ??= {}
  spec.components.headers = { ...(spec.components.headers ?? {}), ...RESPONSE_HEADERS }
  for (const pathItem of Object.values<Json>(spec.paths ?? {})) {
    for (const [method, operation] of Object.entries<Json>(pathItem)) {
      if (typeof operation !== "object" || operation === null || !("responses" in operation)) continue
      if (method === "delete" && operation.requestBody !== undefined) operation.requestBody.required = false
      // An operation without a key (`GET /`) is never counted, so it never carries the rate-limit headers.
      const keyed = Array.isArray(operation.security) && operation.security.length > 0
      for (const parameter of operation.parameters ?? []) {
        const type = parameter.in === "query" ? spelledType(parameter.schema) : undefined
        if (type !== undefined) parameter.schema = { ...type, description: parameter.schema?.description }
      }
      // The writes that can refuse a reused key are the ones that read one.
      const takesKey = "422" in operation.responses
      if (takesKey) operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER]
      const conditional = conditionalReads.includes(operation.operationId)
      operation.parameters = [...(operation.parameters ?? []), ...(conditional ? [IF_NONE_MATCH] : []), X_REQUEST_ID]
      if (conditional) {
        operation.responses["304"] = {
          description:
            "Not modified: `If-None-Match` matched the tag of what this request would answer. No body; not counted against the key's limit (the rate-limit headers say what is left, unchanged).",
          headers: { ETag: ref("ETag") }
        }
      }
      describeMissingHost(operation.responses)
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        const headers: Json = {
          ...(response.headers ?? {}),
          "Access-Control-Allow-Origin": ref("Access-Control-Allow-Origin"),
          "X-Request-Id": ref("X-Request-Id")
        }
        if (keyed && !UNCOUNTED.has(status)) {
          headers["X-RateLimit-Limit"] = ref("X-RateLimit-Limit")
          headers["X-RateLimit-Remaining"] = ref("X-RateLimit-Remaining")
          headers["X-RateLimit-Reset"] = ref("X-RateLimit-Reset")
          headers["RateLimit-Policy"] = ref("RateLimit-Policy")
          headers.RateLimit = ref("RateLimit")
        }
        if (status === "401") headers["WWW-Authenticate"] = ref("WWW-Authenticate")
        if (status === "429") headers["Retry-After"] = ref("Retry-After")
        if (status === "405") headers.Allow = ref("Allow")
        if (takesKey && REPLAYABLE.has(status)) headers["Idempotent-Replayed"] = ref("Idempotent-Replayed")
        if (status === "200" && conditional) headers.ETag = ref("ETag")
        if (status === "200" && operation.operationId === "domains.list") headers.Link = ref("Link")
        if (status === "200" && operation.operationId === "domains.snapshot") headers["Content-Encoding"] = ref("Content-Encoding")
        response.headers = headers
      }
    }
  }
  spec.webhooks = { ...(spec.webhooks ?? {}), ...WEBHOOKS }
  dropSafeIntegerBounds(spec)
  // Every deployment serves this document at its own origin; `/` names that origin.
  spec.servers = [{ url: "/", description: "The origin this document is served from" }]
  return spec
}
