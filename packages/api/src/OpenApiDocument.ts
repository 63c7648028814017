import { ListQuery } from "@dropshelf/core"

/**
 * What the generated OpenAPI document cannot learn from the endpoint schemas: the headers the
 * HTTP boundary adds (rate limits, `WWW-Authenticate`, `Retry-After`, `Allow`, CORS) and the
 * optional request body of `DELETE /holds/{id}`. Applied through the API's `transform`
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
  "Retry-After": integerHeader("Whole seconds (at least 1) until the window resets.", { minimum: 1, maximum: 60 }),
  "WWW-Authenticate": { description: "Always `Bearer realm=\"dropshelf\"`.", schema: { type: "string" } },
  Allow: { description: "The methods this path implements.", schema: { type: "string" } },
  "Access-Control-Allow-Origin": { description: "Always `*`.", schema: { type: "string", const: "*" } }
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

export const finishDocument = (spec: Json): Json => {
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
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        const headers: Json = { ...(response.headers ?? {}), "Access-Control-Allow-Origin": ref("Access-Control-Allow-Origin") }
        if (keyed && !UNCOUNTED.has(status)) {
          headers["X-RateLimit-Limit"] = ref("X-RateLimit-Limit")
          headers["X-RateLimit-Remaining"] = ref("X-RateLimit-Remaining")
          headers["X-RateLimit-Reset"] = ref("X-RateLimit-Reset")
        }
        if (status === "401") headers["WWW-Authenticate"] = ref("WWW-Authenticate")
        if (status === "429") headers["Retry-After"] = ref("Retry-After")
        if (status === "405") headers.Allow = ref("Allow")
        response.headers = headers
      }
    }
  }
  return spec
}
