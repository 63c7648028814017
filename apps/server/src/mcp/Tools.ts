import { Effect, Schema } from "effect"
import { Hold, Listing, ListingJson, ListQuery, Me, WatchView } from "@dropshelf/core"
import {
  HoldIdInput,
  IdempotencyKeyInput,
  ListingIdInput,
  outcomeArg,
  searchArguments,
  stringArg,
  WatchIdInput,
  WatchQueryInput,
  widenScalars
} from "./ToolArguments.ts"
import { annotations, emptyInput, inputSchemaOf, outputSchemaOf, RenderedJson, type ToolDefinition } from "./ToolDefinition.ts"

/*
 * The MCP tools: one per REST operation, each a call to the core's `Directory`, so the
 * validation, the disclosure rules and the refusals are the REST API's own. Input and output
 * schemas are JSON Schema generated from the same Effect schemas the REST contract uses; a
 * listing or a page is rendered by REST's own renderer (`ListingJson`), so its text is REST's.
 */

export { IDEMPOTENCY_KEY_ARGUMENT, idempotencyKeyArg } from "./ToolArguments.ts"
export {
  type JsonSchema,
  Refusal,
  RenderedJson,
  REPLAYED_META,
  type ToolAnnotations,
  type ToolDefinition
} from "./ToolDefinition.ts"


/** The watch tools: the REST watches' use cases, on the same counter. */
const WATCH_TOOLS: ReadonlyArray<ToolDefinition> = [
  {
    name: "create_watch",
    scope: "watch",
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
    scope: "read",
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
    scope: "watch",
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
    scope: "read",
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
    scope: "read",
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
        Effect.map(directory.list(caller, query), (page) => new RenderedJson(ListingJson.pageJson(page))))
  },
  {
    name: "get_listing",
    scope: "read",
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
    scope: "reveal",
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
    scope: "hold",
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
    scope: "hold",
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
    scope: "hold",
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
    scope: "read",
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
    scope: "read",
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
