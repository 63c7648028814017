import { Context, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "effect/http-api"
import type { Directory, RateLimiter } from "@dropshelf/core"
import { Hold, Listing, ListQuery, Me } from "@dropshelf/core"
import {
  CommonErrors,
  ForbiddenError,
  HeadersTooLargeError,
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  InvalidRequestError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  RequestTimeoutError,
  ServerError,
  UnauthorizedError,
  RateLimitedError,
  SnapshotLimitedError,
  UpgradeRequiredError
} from "./ApiErrors.ts"
import * as Examples from "./Examples.ts"
import { finishDocument } from "./OpenApiDocument.ts"
import { WatchesGroup } from "./WatchesApi.ts"

/** The version of the resource shapes under `/api/v1`. */
export const API_VERSION = "1.3.0"
export const API_PREFIX = "/api/v1"

/**
 * The reads (`group.endpoint`) that carry an `ETag` and answer a matching `If-None-Match` with
 * 304, which does not count against the key's limit.
 */
export const CONDITIONAL_READS = ["account.me", "domains.list", "domains.get", "holds.list"] as const

/** What the key middleware hands every keyed handler: the caller and this request's rate decision. */
export class CurrentCaller extends Context.Service<CurrentCaller, {
  readonly caller: Directory.KeyCaller
  readonly rate: RateLimiter.RateDecision
}>()("@dropshelf/server/CurrentCaller") {}

/**
 * The Bearer key on every `/api/v1` endpoint. It authenticates, resolves the plan, and counts
 * the request against the key's per-minute window.
 */
export class ApiKeyAuth extends HttpApiMiddleware.Service<ApiKeyAuth, {
  provides: CurrentCaller
}>()("@dropshelf/server/ApiKeyAuth", {
  requiredForClient: true,
  // `bearer` in lower case, as OpenAPI's examples spell it: the API reference page takes any
  // other spelling for Basic and writes its snippets that way. Reading the header ignores case.
  security: { bearer: HttpApiSecurity.http({ scheme: "bearer" }).pipe(HttpApiSecurity.annotate(OpenApi.Description, "An API key: `Authorization: Bearer dsk_…`")) },
  error: [UnauthorizedError, RateLimitedError]
}) {}

// The examples name what `npm start`'s demo has (Examples.ts).
const ListingIdParam = Schema.String.annotate({
  description: "Listing id: 8 characters, case-sensitive",
  examples: [Examples.LISTING_ID]
})
const HoldIdParam = Schema.String.annotate({ description: "Hold id, as returned by POST /domains/{id}/hold", examples: [Examples.HOLD_ID] })

/**
 * What a write with an `Idempotency-Key` may be refused for, besides what the write itself
 * refuses. The header itself is read by the handlers, not declared on the endpoints: declared, it
 * would become a required `headers` argument of every typed client call. The OpenAPI document
 * lists it on the operations that answer `idempotency_key_reused` (OpenApiDocument.ts).
 */
const IdempotencyErrors = [InvalidRequestError, IdempotencyKeyInUseError, IdempotencyKeyReusedError] as const

/**
 * `DELETE /holds/{id}`: an optional body; without one the hold ends as `released`. The `Null`
 * member is what lets an empty body through (the framework decodes an empty body as `null`
 * when a payload schema encodes to `null`).
 */
export const EndHoldBody = Schema.Struct({
  outcome: Schema.optionalKey(Hold.HoldOutcome.annotate({ description: "How the hold ended; default `released`." }))
}).annotate({ identifier: "EndHold", examples: [{ outcome: "released" }] })

export class AccountGroup extends HttpApiGroup.make("account").add(
  HttpApiEndpoint.get("me", "/me", {
    success: Me.MeView,
    error: CommonErrors
  }).annotate(OpenApi.Summary, "Key and plan record")
    .annotate(OpenApi.Description, "Costs one request and no reveals. `rate_limit.remaining` is what is left in the current window after this call.")
).annotate(OpenApi.Description, "The key and the plan it speaks for: reveals, rate limit and features.") {}

/** The last line of a bulk snapshot: where the since feed takes over, and how many listings came before it. */
export const SnapshotEnd = Schema.Struct({
  synced_at: Schema.String.annotate({
    description: "The watermark: a since run from it (`GET /domains?since=…`) carries every change the snapshot did not show",
    examples: ["2026-11-22T09:28:00.000Z"]
  }),
  listings: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({ description: "How many listing lines came before this one" })
}).annotate({ identifier: "SnapshotEnd" })
export type SnapshotEnd = typeof SnapshotEnd.Type

/** One line of a bulk snapshot: a listing as a page shows it, or the closing `SnapshotEnd`. */
export const SnapshotLine = Schema.Union([Listing.ListingView, SnapshotEnd]).annotate({ identifier: "SnapshotLine" })
export type SnapshotLine = typeof SnapshotLine.Type

export class DomainsGroup extends HttpApiGroup.make("domains").add(
  HttpApiEndpoint.get("list", "/domains", {
    query: ListQuery.ListQuerySchema,
    success: Listing.PageView,
    error: [...CommonErrors, InvalidRequestError, UpgradeRequiredError]
  }).annotate(HttpApi.QueryParseOptions, ListQuery.LIST_QUERY_PARSE_OPTIONS)
    .annotate(OpenApi.Summary, "Page of listings, or changes since a watermark")
    .annotate(OpenApi.Description, "Default order is ascending listing id. Reads never spend a reveal. Follow `next_cursor` until it is null, keeping filters and `sort` fixed for a run."),
  // Before `/domains/:id`, which would otherwise read `snapshot` as an id.
  HttpApiEndpoint.get("snapshot", "/domains/snapshot", {
    success: HttpApiSchema.StreamNdjson({ schema: SnapshotLine }),
    error: [...CommonErrors, UpgradeRequiredError, SnapshotLimitedError]
  }).annotate(OpenApi.Summary, "Every listing at once, then the since watermark (NDJSON)")
    .annotate(OpenApi.Description, "Business plan. Every listing the key can read, one JSON object a line as in a page's `data`, in no set order, all from one consistent state of the directory; the last line is `{\"synced_at\": …, \"listings\": n}`: continue with `GET /domains?since=<synced_at>`. A body without that line was cut short: start again. Read it at any pace, but a client that leaves written bytes unread for a minute, or has not finished after 30 minutes (the server's settings), is cut off. Gzip-compressed when `Accept-Encoding` names `gzip`. Counts as one request against the per-minute limit; 4 snapshots per account per wall-clock hour, then 429 `snapshot_limit_reached` with `Retry-After`. A HEAD spends none of the four and answers a GET's headers without the body."),
  HttpApiEndpoint.get("get", "/domains/:id", {
    params: { id: ListingIdParam },
    success: Listing.ListingView,
    error: [...CommonErrors, NotFoundError]
  }).annotate(OpenApi.Summary, "One listing")
    .annotate(OpenApi.Description, "The full row, as in a page. 404 when the listing has left the directory, is newer than the plan's access delay, or cannot be seen by the caller. A read never spends a reveal."),
  HttpApiEndpoint.post("reveal", "/domains/:id/reveal", {
    params: { id: ListingIdParam },
    success: Listing.RevealedListingView,
    error: [...CommonErrors, ...IdempotencyErrors, UpgradeRequiredError, ForbiddenError, NotFoundError]
  }).annotate(OpenApi.Summary, "Reveal a name")
    .annotate(OpenApi.Description, "No body. The only call that spends; idempotent (a repeat returns the original `revealed_at` at no cost). Re-checks availability on the spot; a name found registered leaves the directory and answers 404 `NOT_FOUND`. Refusals carry `reveal_code`. With an `Idempotency-Key`, a retry after a lost answer gets that answer back."),
  HttpApiEndpoint.post("hold", "/domains/:id/hold", {
    params: { id: ListingIdParam },
    success: Hold.HoldResponse,
    error: [...CommonErrors, ...IdempotencyErrors, UpgradeRequiredError, ForbiddenError, NotFoundError]
  }).annotate(OpenApi.Summary, "Hold a listing")
    .annotate(OpenApi.Description, "No body. Never spends a reveal. Holding again a listing the account holds returns that hold unchanged. Refusals carry `hold_code`. Send an `Idempotency-Key` to retry safely after a lost answer.")
).annotate(OpenApi.Description, "The directory: pages of listings, the since feed, the bulk snapshot, one listing, and its reveal and hold.") {}

export class HoldsGroup extends HttpApiGroup.make("holds").add(
  HttpApiEndpoint.get("list", "/holds", {
    success: Hold.HoldList,
    error: CommonErrors
  }).annotate(OpenApi.Summary, "The account's running and recently ended holds")
    .annotate(OpenApi.Description, "Running holds and those that ended within 30 days, newest first."),
  HttpApiEndpoint.post("extend", "/holds/:id/extend", {
    params: { id: HoldIdParam },
    success: Hold.HoldResponse,
    error: [...CommonErrors, ...IdempotencyErrors, UpgradeRequiredError, NotFoundError]
  }).annotate(OpenApi.Summary, "Use the one extension")
    .annotate(OpenApi.Description, "No body. The end moves later by the plan's extension, counted from the scheduled end. Refusals carry `hold_code`. Send an `Idempotency-Key` to retry safely after a lost answer."),
  HttpApiEndpoint.delete("end", "/holds/:id", {
    params: { id: HoldIdParam },
    payload: [EndHoldBody, Schema.Null],
    success: Hold.HoldResponse,
    error: [...CommonErrors, ...IdempotencyErrors, NotFoundError]
  }).annotate(OpenApi.Summary, "End a hold as released or registered")
    .annotate(OpenApi.Description, "Optional JSON body `{\"outcome\": \"released\"|\"registered\"}`, default `released`. A 30-day cooldown on the listing starts for the account. Refusals carry `hold_code`. Send an `Idempotency-Key` to retry safely after a lost answer; for the key, no body, `null`, `{}` and `{\"outcome\": \"released\"}` are the same request.")
).annotate(OpenApi.Description, "The account's holds: list, extend once, end.") {}

export class MetaGroup extends HttpApiGroup.make("meta").add(
  HttpApiEndpoint.get("openapi", "/openapi.json", {
    success: Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "This document" }),
    error: CommonErrors
  }).annotate(OpenApi.Summary, "Machine-readable description (OpenAPI 3.1)")
    .annotate(OpenApi.Description, "This document. It needs a key, like every `/api/v1` endpoint; `/docs` renders it without one.")
).annotate(OpenApi.Description, "This description of the API.") {}

const Link = (href: string, description: string) =>
  Schema.Struct({ href: Schema.Literal(href), title: Schema.String }).annotate({ description })

/** `GET /`: where a newcomer finds the reference, the document and liveness. */
export const ServiceIndex = Schema.Struct({
  name: Schema.Literal("dropshelf"),
  version: Schema.Literal(API_VERSION).annotate({ description: "The API version, as `info.version` of the document" }),
  links: Schema.Struct({
    docs: Link("/docs", "The interactive API reference (no key needed)"),
    openapi: Link(`${API_PREFIX}/openapi.json`, "This document (needs a key)"),
    health: Link("/healthz", "Liveness (no key needed, not rate limited)")
  })
}).annotate({ identifier: "ServiceIndex" })
export type ServiceIndex = typeof ServiceIndex.Type

/** `GET /healthz`: the process answers; nothing else is touched. */
export const Liveness = Schema.Struct({
  status: Schema.Literal("ok")
}).annotate({ identifier: "Liveness" })

const CheckOutcome = Schema.Literals(["ok", "failed", "timeout"]).annotate({
  description: "`ok`; `failed` when the dependency refused or errored; `timeout` when it did not answer within 2 s. The server's log says why."
})

/** Each read replica's state; never a reason for 503, since the primary answers what a replica cannot. */
const ReplicaStates = Schema.Record(Schema.String, Schema.Literals(["streaming", "lagging", "down"])).annotate({
  description:
    "Each read replica of `DATABASE_READ_URL` by `host:port/database`, when there are any: `streaming` takes reads; `lagging` (past `DROPSHELF_READ_MAX_LAG_MS`) and `down` take none, their reads going to the primary"
})

/** `GET /readyz` answered 200: every dependency this instance needs answered. */
export const Readiness = Schema.Struct({
  status: Schema.Literal("ready"),
  checks: Schema.Record(Schema.String, CheckOutcome).annotate({
    description: "Each dependency checked: `database` always, `redis` when the instance counts rate limits in Redis"
  }),
  replicas: Schema.optional(ReplicaStates)
}).annotate({ identifier: "Readiness" })
export type Readiness = typeof Readiness.Type

/** `GET /readyz` answered 503: the instance should get no new traffic. */
export class NotReadyError extends Schema.Error<NotReadyError>("NotReadyError")({
  status: Schema.Literals(["unready", "draining"]).annotate({
    description: "`draining`: the instance is shutting down (it still answers requests in flight and arriving); `unready`: a dependency failed"
  }),
  failed: Schema.Array(Schema.String).annotate({ description: "The dependencies that failed, by name (`database`, `redis`); empty while draining" }),
  checks: Schema.Record(Schema.String, CheckOutcome).annotate({ description: "Each dependency checked; none while draining" }),
  replicas: Schema.optional(ReplicaStates)
}, {
  httpApiStatus: 503,
  description: "Not ready: a dependency failed or the instance is draining. Take it out of the load balancer's rotation."
}) {}

/** Outside `/api/v1` and without a key: added after the key middleware and the prefix, which apply to the groups before them. */
export class IndexGroup extends HttpApiGroup.make("index").add(
  HttpApiEndpoint.get("index", "/", {
    success: ServiceIndex,
    error: [MethodNotAllowedError, RequestTimeoutError, PayloadTooLargeError, HeadersTooLargeError, ServerError]
  }).annotate(OpenApi.Summary, "Where to start")
    .annotate(OpenApi.Description, "Links to the API reference (`/docs`), this document and liveness (`/healthz`). Needs no key and is not rate limited."),
  HttpApiEndpoint.get("healthz", "/healthz", {
    success: Liveness,
    error: [MethodNotAllowedError, RequestTimeoutError, PayloadTooLargeError, HeadersTooLargeError, ServerError]
  }).annotate(OpenApi.Summary, "Liveness")
    .annotate(OpenApi.Description, "200 while the process can answer at all; touches no dependency, so a database outage does not get the instance restarted. Needs no key and is not rate limited."),
  HttpApiEndpoint.get("readyz", "/readyz", {
    success: Readiness,
    error: [NotReadyError, MethodNotAllowedError, RequestTimeoutError, PayloadTooLargeError, HeadersTooLargeError, ServerError]
  }).annotate(OpenApi.Summary, "Readiness")
    .annotate(OpenApi.Description, "200 when the database answers a query and, when the instance counts rate limits in Redis, Redis answers a PING; 503 naming what failed otherwise, and 503 `draining` from the moment the instance is told to stop. Needs no key and is not rate limited.")
).annotate(OpenApi.Description, "Outside `/api/v1`, without a key: where to start, liveness and readiness.") {}

/** The REST contract: shareable with clients, free of server code. */
export class DropshelfApi extends HttpApi.make("dropshelf")
  .add(AccountGroup)
  .add(DomainsGroup)
  .add(HoldsGroup)
  .add(WatchesGroup)
  .add(MetaGroup)
  .middleware(ApiKeyAuth)
  .prefix(API_PREFIX)
  .add(IndexGroup)
  .annotateMerge(OpenApi.annotations({
    title: "dropshelf — expired-domain directory API",
    version: API_VERSION,
    description:
      "A read-and-reserve JSON API over a directory of expired and dropped domain names with backlinks. Every endpoint under `/api/v1` needs `Authorization: Bearer <API_KEY>`. Every refusal is the JSON envelope `{\"error\": {\"code\", \"message\", ...}}`. Every answer to a request with a valid key, under `/api/v1` and on the MCP endpoint `/mcp` (which shares the key's counter), carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`, and counts against the key's per-minute window, except a 304 to a conditional read and the GET an MCP client probes `/mcp` with for a stream (answered 405): those show the window as it stands, uncounted.",
    transform: finishDocument(CONDITIONAL_READS)
  }))
{}
