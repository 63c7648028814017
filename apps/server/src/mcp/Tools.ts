import { Effect, Record, Result, Schema, SchemaTransformation } from "effect"
import { type Directory, Errors, Hold, Idempotency, Listing, ListingJson, ListQuery, Me, type RateLimiter, Text, type Watches, WatchView } from "@dropshelf/core"
import { ErrorCode, HoldCode, RevealCode } from "@dropshelf/api/ApiErrors"
import type { DomainError, Operation } from "../http/ErrorMapping.ts"

/*
 * The MCP tools: one per REST operation, each a call to the core's `Directory`, so the
 * validation, the disclosure rules and the refusals are the REST API's own. Input and output
 * schemas are JSON Schema generated from the same Effect schemas the REST contract uses; a
 * listing or a page is rendered by REST's own renderer (`ListingJson`), so its text is REST's.
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
  /** Which refusal token this tool's refusals carry, as on the REST endpoint it mirrors. */
  readonly operation: Operation
  readonly run: (
    directory: Directory.Directory["Service"],
    caller: Directory.Caller,
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

/** The argument that carries a write's idempotency key. */
export const IDEMPOTENCY_KEY_ARGUMENT = "idempotency_key"

/** The `_meta` entry of a tool result that is the stored answer of the first call with its key. */
export const REPLAYED_META = "dropshelf/idempotent-replayed"

const IdempotencyKeyInput = Schema.String.annotate({
  description:
    "Optional. 1 to 255 visible ASCII characters, such as a UUID, new for each new write. A repeat of the same call (same tool and arguments) with the same key by the same account within 24 hours returns the first result again, marked `_meta[\"dropshelf/idempotent-replayed\"]: true`, and changes nothing; the key with another call is refused `idempotency_key_reused`. The key is shared with the REST API's `Idempotency-Key`."
})

/** The key argument, when given (null reads as absent), or the refusal naming it. */
export const idempotencyKeyArg = (
  args: Record<string, unknown>
): Effect.Effect<Idempotency.IdempotencyKey | undefined, Errors.InvalidRequest> => {
  const value = args[IDEMPOTENCY_KEY_ARGUMENT]
  return value === undefined || value === null
    ? Effect.succeed(undefined)
    : Effect.fromResult(Idempotency.decodeKey(IDEMPOTENCY_KEY_ARGUMENT, value))
}

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
const outputSchemaOf = (success: Schema.Top): JsonSchema => {
  const ok = Schema.toJsonSchemaDocument(success) as unknown as Document
  const refusal = Schema.toJsonSchemaDocument(Refusal) as unknown as Document
  return {
    type: "object",
    anyOf: [ok.schema, refusal.schema],
    $defs: { ...ok.definitions, ...refusal.definitions }
  }
}

const inputSchemaOf = (schema: Schema.Top, widen: (property: Record<string, unknown>) => Record<string, unknown> = (p) => p): JsonSchema => {
  const document = Schema.toJsonSchemaDocument(schema) as unknown as Document
  const root = rootOf(document)
  const properties = Record.map((root.properties ?? {}) as Record<string, Record<string, unknown>>, widen)
  const definitions = Object.keys(document.definitions).length > 0 ? { $defs: document.definitions } : {}
  return { ...root, type: "object", properties, ...definitions }
}

/** An integer or boolean parameter of the list query also takes its JSON value, as assistants tend to send it. */
const widenScalars = (property: Record<string, unknown>): Record<string, unknown> => {
  const { description, ...text } = property
  if (text.pattern === ListQuery.INTEGER_TEXT) return { description, anyOf: [{ type: "integer" }, text] }
  if (ListQuery.isBooleanText(text)) return { description, anyOf: [{ type: "boolean" }, text] }
  return property
}

/** A JSON argument read as the text a query string would carry it in. */
const AsText = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean]).pipe(
  Schema.decodeTo(Schema.String, SchemaTransformation.transform<string, string | number | boolean>({ decode: String, encode: (text) => text }))
)

/** search_listings' arguments: the list query's own schema, numbers and booleans read as their text. */
const SearchArguments = Schema.Struct(Record.map(ListQuery.ListQueryParameters, () => Schema.optionalKey(AsText))).pipe(
  Schema.decodeTo(ListQuery.ListQuerySchema)
)
const decodeSearch = Schema.decodeUnknownResult(SearchArguments)

const searchArguments = (args: Record<string, unknown>): Effect.Effect<ListQuery.ListQuery, Errors.InvalidRequest> =>
  Effect.fromResult(Result.mapError(decodeSearch(args, ListQuery.LIST_QUERY_PARSE_OPTIONS), (error) => ListQuery.refusalOf(error.issue)))

const ListingIdInput = Schema.String.annotate({ description: "Listing id: 8 characters, case-sensitive (the `id` of a listing)" })
const HoldIdInput = Schema.String.annotate({ description: "Hold id, as returned by hold_listing or list_holds (`hold.id`)" })

/**
 * A required string argument, or the refusal the REST API gives for a bad parameter. An id is
 * looked up in the store, so it must be storable text (a path cannot carry what is not).
 */
const stringArg = (args: Record<string, unknown>, name: string, accepts: string) => {
  const value = args[name]
  return typeof value === "string" && value.length > 0
    ? Effect.fromResult(Text.storable(name, value))
    : Effect.fail(new Errors.InvalidRequest({ parameter: name, message: `${name} is required and accepts ${accepts}` }))
}

const outcomeArg = (args: Record<string, unknown>): Effect.Effect<Hold.HoldOutcome, Errors.InvalidRequest> => {
  const value = args.outcome
  if (value === undefined || value === null) return Effect.succeed("released" as const)
  return value === "released" || value === "registered"
    ? Effect.succeed(value)
    : Effect.fail(new Errors.InvalidRequest({ parameter: "outcome", message: "outcome accepts released, registered" }))
}

const annotations = (
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

const emptyInput: JsonSchema = { type: "object", properties: {}, additionalProperties: false }

const WatchIdInput = Schema.String.annotate({ description: "Watch id, as returned by create_watch or list_watches (`id`)" })

const WatchQueryInput = Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String)])).annotate({
  description:
    "The search_listings filters by name (tld, category, rsMin, q, …), validated as search_listings validates them; cursor, since, sort and limit are not part of a watch. Omitted: every listing."
})

/** The watch tools: the REST watches' use cases, on the same counter. */
const WATCH_TOOLS: ReadonlyArray<ToolDefinition> = [
  {
    name: "create_watch",
    title: "Create a watch",
    description:
      "Save a search (POST /api/v1/watches): from now on each listing that becomes readable to this account and passes the filters is recorded as a match, read with list_watch_matches; with `webhook_url`, each match is also POSTed there, signed per Standard Webhooks v1 with the `webhook_secret` shown in this result only. Plans allow 1 (free), 10 (pro) or 100 (business) watches.",
    inputSchema: inputSchemaOf(Schema.Struct({
      name: Schema.String.annotate({ description: "1 to 100 characters" }),
      query: Schema.optionalKey(WatchQueryInput),
      webhook_url: Schema.optionalKey(Schema.String.annotate({ description: "https URL of a public receiver (optional)" }))
    })),
    outputSchema: outputSchemaOf(WatchView.CreatedWatchView),
    success: WatchView.CreatedWatchView,
    annotations: annotations("Create a watch"),
    operation: "read",
    // The arguments as sent: the core's decoder refuses an unknown or mistyped one, as REST does.
    run: (_directory, caller, _rate, args, watches) => watches.create(caller, args)
  },
  {
    name: "list_watches",
    title: "List watches",
    description: "The account's watches, oldest first (GET /api/v1/watches), with each webhook's state.",
    inputSchema: emptyInput,
    outputSchema: outputSchemaOf(WatchView.WatchList),
    success: WatchView.WatchList,
    annotations: annotations("List watches", { readOnly: true }),
    operation: "read",
    run: (_directory, caller, _rate, _args, watches) => watches.list(caller)
  },
  {
    name: "delete_watch",
    title: "Delete a watch",
    description: "Delete a watch with its matches and pending deliveries (DELETE /api/v1/watches/{id}).",
    inputSchema: inputSchemaOf(Schema.Struct({ id: WatchIdInput })),
    outputSchema: outputSchemaOf(Schema.Struct({ deleted: Schema.String })),
    success: Schema.Struct({ deleted: Schema.String }),
    annotations: annotations("Delete a watch", { destructive: true, idempotent: false }),
    operation: "read",
    run: (_directory, caller, _rate, args, watches) =>
      Effect.flatMap(stringArg(args, "id", "a watch id"), (id) => Effect.as(watches.remove(caller, id), { deleted: id }))
  },
  {
    name: "list_watch_matches",
    title: "Read a watch's matches",
    description:
      "A page of a watch's matches, oldest first (GET /api/v1/watches/{id}/matches): each listing as this account reads it now. Ask with `next_cursor` while `has_more` is true; keep the last non-null `next_cursor` (the last page has one too) to ask later for only newer matches.",
    inputSchema: inputSchemaOf(Schema.Struct({
      id: WatchIdInput,
      cursor: Schema.optionalKey(Schema.String.annotate({ description: "`next_cursor` of the previous page" })),
      limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 250 })).annotate({ description: "Page size, default 50" }))
    })),
    outputSchema: outputSchemaOf(WatchView.MatchPage),
    success: WatchView.MatchPage,
    annotations: annotations("Read a watch's matches", { readOnly: true }),
    operation: "read",
    run: (_directory, caller, _rate, args, watches) =>
      Effect.flatMap(stringArg(args, "id", "a watch id"), (id) =>
        watches.matches(caller, id, {
          cursor: typeof args.cursor === "string" ? args.cursor : undefined,
          limit: typeof args.limit === "number" ? args.limit : undefined
        }))
  }
]

export const TOOLS: ReadonlyArray<ToolDefinition> = [
  {
    name: "search_listings",
    title: "Search listings",
    description:
      "A page of expired-domain listings (GET /api/v1/domains): the same filters, `sort`, `cursor`, `limit` and `since`, with the same validation. Follow `next_cursor` until it is null, keeping filters and sort fixed. Reads never spend a reveal; `domain` is null where the plan does not disclose the name. A `since` older than the feed's horizon (`since_horizon_days` of `me`) is refused `invalid_request` naming `since`, with `oldest_since` and `horizon_days`: resynchronise with a run without `since`.",
    inputSchema: inputSchemaOf(ListQuery.ListQuerySchema, widenScalars),
    outputSchema: outputSchemaOf(Listing.PageView),
    success: Listing.PageView,
    annotations: annotations("Search listings", { readOnly: true }),
    operation: "read",
    run: (directory, caller, _rate, args) =>
      Effect.flatMap(searchArguments(args), (query) =>
        Effect.map(directory.list(caller, query), (page) => new RenderedJson(ListingJson.pageJson(page, ListingJson.renderOptionsOf(query)))))
  },
  {
    name: "get_listing",
    title: "Get a listing",
    description: "One listing by id (GET /api/v1/domains/{id}). Never spends a reveal.",
    inputSchema: inputSchemaOf(Schema.Struct({ id: ListingIdInput })),
    outputSchema: outputSchemaOf(Listing.ListingView),
    success: Listing.ListingView,
    annotations: annotations("Get a listing", { readOnly: true }),
    operation: "read",
    run: (directory, caller, _rate, args) =>
      Effect.flatMap(stringArg(args, "id", "a listing id (8 characters)"), (id) =>
        Effect.map(directory.get(caller, id), (row) => new RenderedJson(ListingJson.rowJson(row))))
  },
  {
    name: "reveal_listing",
    title: "Reveal a name",
    description:
      "Reveal a listing's name (POST /api/v1/domains/{id}/reveal). The only call that spends from the monthly reveal allowance; a repeat returns the original `revealed_at` at no cost. Refusals carry `reveal_code`.",
    inputSchema: inputSchemaOf(Schema.Struct({ id: ListingIdInput, idempotency_key: Schema.optionalKey(IdempotencyKeyInput) })),
    outputSchema: outputSchemaOf(Listing.RevealedListingView),
    success: Listing.RevealedListingView,
    annotations: annotations("Reveal a name", { idempotent: true }),
    operation: "reveal",
    run: (directory, caller, _rate, args) =>
      Effect.flatMap(stringArg(args, "id", "a listing id (8 characters)"), (id) => directory.reveal(caller, id)),
    write: (args) => Effect.map(stringArg(args, "id", "a listing id (8 characters)"), (listingId) => ({ _tag: "Reveal", listingId }))
  },
  {
    name: "hold_listing",
    title: "Hold a listing",
    description:
      "Reserve a revealed listing inside the service (POST /api/v1/domains/{id}/hold). It does not register the name. Holding a listing the account already holds returns that hold unchanged. Refusals carry `hold_code`.",
    inputSchema: inputSchemaOf(Schema.Struct({ id: ListingIdInput, idempotency_key: Schema.optionalKey(IdempotencyKeyInput) })),
    outputSchema: outputSchemaOf(Hold.HoldResponse),
    success: Hold.HoldResponse,
    annotations: annotations("Hold a listing"),
    operation: "hold",
    run: (directory, caller, _rate, args) =>
      Effect.flatMap(stringArg(args, "id", "a listing id (8 characters)"), (id) => directory.hold(caller, id)),
    write: (args) => Effect.map(stringArg(args, "id", "a listing id (8 characters)"), (listingId) => ({ _tag: "Hold", listingId }))
  },
  {
    name: "extend_hold",
    title: "Extend a hold",
    description:
      "Use a hold's one extension (POST /api/v1/holds/{id}/extend): the end moves later by the plan's extension. Refusals carry `hold_code`.",
    inputSchema: inputSchemaOf(Schema.Struct({ hold_id: HoldIdInput, idempotency_key: Schema.optionalKey(IdempotencyKeyInput) })),
    outputSchema: outputSchemaOf(Hold.HoldResponse),
    success: Hold.HoldResponse,
    annotations: annotations("Extend a hold"),
    operation: "hold",
    run: (directory, caller, _rate, args) =>
      Effect.flatMap(stringArg(args, "hold_id", "a hold id"), (holdId) => directory.extend(caller, holdId)),
    write: (args) => Effect.map(stringArg(args, "hold_id", "a hold id"), (holdId) => ({ _tag: "Extend", holdId }))
  },
  {
    name: "end_hold",
    title: "End a hold",
    description:
      "End a hold as `released` (default) or `registered` (DELETE /api/v1/holds/{id}). A 30-day cooldown on that listing starts for the account: it cannot hold it again until then. Refusals carry `hold_code`.",
    inputSchema: inputSchemaOf(Schema.Struct({
      hold_id: HoldIdInput,
      outcome: Schema.optionalKey(Hold.HoldOutcome.annotate({ description: "How the hold ended; default `released`." })),
      idempotency_key: Schema.optionalKey(IdempotencyKeyInput)
    })),
    outputSchema: outputSchemaOf(Hold.HoldResponse),
    success: Hold.HoldResponse,
    annotations: annotations("End a hold", { destructive: true }),
    operation: "hold",
    run: (directory, caller, _rate, args) =>
      Effect.flatMap(
        Effect.all([stringArg(args, "hold_id", "a hold id"), outcomeArg(args)]),
        ([holdId, outcome]) => directory.end(caller, holdId, outcome)
      ),
    write: (args) =>
      Effect.map(
        Effect.all([stringArg(args, "hold_id", "a hold id"), outcomeArg(args)]),
        ([holdId, outcome]) => ({ _tag: "End", holdId, outcome })
      )
  },
  {
    name: "list_holds",
    title: "List holds",
    description: "The account's running holds and those that ended within 30 days, newest first (GET /api/v1/holds).",
    inputSchema: emptyInput,
    outputSchema: outputSchemaOf(Hold.HoldList),
    success: Hold.HoldList,
    annotations: annotations("List holds", { readOnly: true }),
    operation: "read",
    run: (directory, caller) => directory.holds(caller)
  },
  {
    name: "me",
    title: "Key and plan",
    description:
      "The key and plan record (GET /api/v1/me): plan, reveals left this month, the per-minute request limit and what is left of it (shared with the REST API), and whether the since feed is available and how many days back it reaches.",
    inputSchema: emptyInput,
    outputSchema: outputSchemaOf(Me.MeView),
    success: Me.MeView,
    annotations: annotations("Key and plan", { readOnly: true }),
    operation: "read",
    run: (directory, caller, rate) => directory.me(caller, rate)
  },
  ...WATCH_TOOLS
]
