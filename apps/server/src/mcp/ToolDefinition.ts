import { Effect, Record, Schema } from "effect"
import type { Directory, Errors, Idempotency, RateLimiter, Scope, Watches } from "@dropshelf/core"
import { ErrorCode, HoldCode, RevealCode } from "@dropshelf/api/ApiErrors"
import type { DomainError, Operation } from "../http/ErrorMapping.ts"

/*
 * What a tool is: its definition, the JSON Schemas of its input and output (generated from
 * Effect schemas), its annotations, and the result it renders itself.
 */

export type JsonSchema = { readonly type: "object"; readonly [key: string]: unknown }

export interface ToolAnnotations {
  readonly title: string
  readonly readOnlyHint: boolean
  readonly destructiveHint: boolean
  readonly idempotentHint: boolean
  readonly openWorldHint: boolean
}

export interface ToolDefinition {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: JsonSchema
  readonly outputSchema: JsonSchema
  /**
   * The success schema the result is encoded with, exactly as the REST endpoint encodes it; a
   * result the tool rendered itself (`RenderedJson`) is sent as rendered, and conforms to it.
   */
  readonly success: Schema.Top
  readonly annotations: ToolAnnotations
  /** What a connected application must have been granted to call it (an API key may call every tool). */
  readonly scope: Scope.Scope
  /** Which refusal token this tool's refusals carry, as on the REST endpoint it mirrors. */
  readonly operation: Operation
  readonly run: (
    directory: Directory.Directory["Service"],
    caller: Directory.KeyCaller,
    rate: RateLimiter.RateDecision,
    args: Record<string, unknown>,
    watches: Watches.Watches["Service"]
  ) => Effect.Effect<unknown, DomainError>
  /**
   * For the tools that write: the write the arguments ask for, so that a call with an
   * `idempotency_key` runs it once per key (`Directory.idempotent`), as REST does.
   */
  readonly write?: (args: Record<string, unknown>) => Effect.Effect<Idempotency.Write, Errors.InvalidRequest>
}

/**
 * A result rendered by the REST endpoint's own renderer (`ListingJson`): its text is the REST
 * body, sent as the tool's text and parsed once for its `structuredContent`.
 */
export class RenderedJson {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

/** The `_meta` entry of a tool result that is the stored answer of the first call with its key. */
export const REPLAYED_META = "dropshelf/idempotent-replayed"

/** What a refused tool call carries in `structuredContent`: the REST envelope, plus `retry_after` when rate limited. */
export const Refusal = Schema.Struct({
  error: Schema.Struct({
    code: ErrorCode,
    message: Schema.String,
    parameter: Schema.optionalKey(Schema.String),
    reveal_code: Schema.optionalKey(RevealCode),
    hold_code: Schema.optionalKey(HoldCode),
    resets_at: Schema.optionalKey(Schema.String),
    expires_at: Schema.optionalKey(Schema.String),
    available_at: Schema.optionalKey(Schema.String),
    limit: Schema.optionalKey(Schema.Int),
    retry_after: Schema.optionalKey(Schema.Int.annotate({ description: "With rate_limited: whole seconds until the window resets" })),
    oldest_since: Schema.optionalKey(Schema.String.annotate({ description: "With a `since` past the feed's horizon: the oldest `since` accepted" })),
    horizon_days: Schema.optionalKey(Schema.Int.annotate({ description: "With `oldest_since`: how many days back the since feed reaches" }))
  })
}).annotate({ identifier: "Refusal" })

type Document = { readonly schema: Record<string, unknown>; readonly definitions: Record<string, unknown> }

const rootOf = (document: Document): Record<string, unknown> => {
  const ref = document.schema.$ref
  if (typeof ref === "string" && ref.startsWith("#/$defs/")) {
    return document.definitions[ref.slice("#/$defs/".length)] as Record<string, unknown>
  }
  return document.schema
}

/**
 * The output schema of a tool: the success view or the refusal envelope. MCP wants a schema
 * of type object that every `structuredContent` conforms to, refusals included.
 */
export const outputSchemaOf = (success: Schema.Top): JsonSchema => {
  const ok = Schema.toJsonSchemaDocument(success) as unknown as Document
  const refusal = Schema.toJsonSchemaDocument(Refusal) as unknown as Document
  return {
    type: "object",
    anyOf: [ok.schema, refusal.schema],
    $defs: { ...ok.definitions, ...refusal.definitions }
  }
}

export const inputSchemaOf = (schema: Schema.Top, widen: (property: Record<string, unknown>) => Record<string, unknown> = (p) => p): JsonSchema => {
  const document = Schema.toJsonSchemaDocument(schema) as unknown as Document
  const root = rootOf(document)
  const properties = Record.map((root.properties ?? {}) as Record<string, Record<string, unknown>>, widen)
  const definitions = Object.keys(document.definitions).length > 0 ? { $defs: document.definitions } : {}
  return { ...root, type: "object", properties, ...definitions }
}

export const annotations = (
  title: string,
  hints: { readonly readOnly?: boolean; readonly destructive?: boolean; readonly idempotent?: boolean } = {}
): ToolAnnotations => ({
  title,
  readOnlyHint: hints.readOnly ?? false,
  destructiveHint: hints.destructive ?? false,
  idempotentHint: hints.idempotent ?? hints.readOnly ?? false,
  // The directory is a closed world: nothing here reaches outside the service.
  openWorldHint: false
})

export const emptyInput: JsonSchema = { type: "object", properties: {}, additionalProperties: false }

