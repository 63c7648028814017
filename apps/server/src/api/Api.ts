import { Context, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import type { Directory, RateLimiter } from "@dropshelf/core"
import { Bands, Hold, Listing, Me } from "@dropshelf/core"
import {
  CommonErrors,
  ForbiddenError,
  InvalidRequestError,
  NotFoundError,
  UnauthorizedError,
  RateLimitedError,
  UpgradeRequiredError
} from "./ApiErrors.ts"
import { finishDocument } from "./OpenApiDocument.ts"

/** The version of the resource shapes under `/api/v1`. */
export const API_VERSION = "1.1.0"
export const API_PREFIX = "/api/v1"

/** What the key middleware hands every keyed handler: the caller and this request's rate decision. */
export class CurrentCaller extends Context.Service<CurrentCaller, {
  readonly caller: Directory.Caller
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
  security: { bearer: HttpApiSecurity.bearer.pipe(HttpApiSecurity.annotate(OpenApi.Description, "An API key: `Authorization: Bearer ds_live_…`")) },
  error: [UnauthorizedError, RateLimitedError]
}) {}

const ListingIdParam = Schema.String.annotate({
  description: "Listing id: 8 characters, case-sensitive",
  examples: ["Ab3dE9xZ"]
})
const HoldIdParam = Schema.String.annotate({ description: "Hold id, as returned by POST /domains/{id}/hold" })

const integerText = (description: string) =>
  Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[+-]?\d+$/)).annotate({ description }))
const text = (description: string) => Schema.optionalKey(Schema.String.annotate({ description }))
const booleanText = (description: string) => Schema.optionalKey(Schema.Literals(["true", "false"]).annotate({ description }))

/** The documented query parameters of `GET /domains`; undocumented ones are ignored. */
export const ListQueryParams = {
  cursor: text("Opaque value from `next_cursor`. It belongs to one ordering: pass the same `sort` on every page. A value not issued by this endpoint gives 400."),
  limit: integerText("Page size, default 50. Values outside 1..250 are clamped; a non-integer (including empty) gives 400."),
  since: text("Business plan only (others get 402 `upgrade_required`). ISO 8601 instant; inclusive match on `updated_at`; pages include tombstones; ordered by id. Pass the `synced_at` of the first page of the previous run."),
  sort: Schema.optionalKey(Schema.Literal("latest").annotate({ description: "Omitted: ascending id. `latest`: newest `discovered_at` first, tie-broken by id. Cannot be combined with `since`." })),
  ageMin: integerText("Minimum age in whole years (0..1000); rows with a null age are excluded."),
  category: text("Category code; comma-separate several. An unknown code gives 400."),
  checkedDays: integerText("Only listings whose availability was checked within this many days (1..3650)."),
  citabilityMin: integerText("Minimum agent-citability score (0..100); rows with null citability are excluded."),
  featured: booleanText("`true`: only listings on the curated shelf; `false`: only those off it."),
  priceRange: Schema.optionalKey(Schema.Literals(Bands.PRICE_RANGES).annotate({ description: "Band over `estimated_value_cents`, whole dollars, lower bound inclusive." })),
  q: text("Free-text search (1..200 characters, without U+0000) over the masked hint, tags, category and blurb. Never matches the real name."),
  rd: text(`Referring-domain bands, comma-separated: ${Bands.REFERRING_DOMAIN_BANDS.join(", ")}. Rows with a null count are excluded.`),
  recommended: booleanText("`true`: only listings passing the recommended heuristic (categorised, a marquee linker, a score floor)."),
  rsMax: integerText("Maximum of the directory score's upper bound (0..100)."),
  rsMin: integerText("Minimum of the directory score's lower bound (0..100)."),
  source: text("Source codes, comma-separated."),
  spam: Schema.optionalKey(Listing.Spam.annotate({ description: "Spam level: `low` or `moderate`." })),
  tier: Schema.optionalKey(Schema.Literal("open").annotate({ description: "Only `open` is accepted: listings whose names are public." })),
  tld: text("Exact TLD without the leading dot, for example `com` or `co.uk`.")
}

/**
 * `DELETE /holds/{id}`: an optional body; without one the hold ends as `released`. The `Null`
 * member is what lets an empty body through (the framework decodes an empty body as `null`
 * when a payload schema encodes to `null`).
 */
export const EndHoldBody = Schema.Struct({
  outcome: Schema.optionalKey(Hold.HoldOutcome.annotate({ description: "How the hold ended; default `released`." }))
}).annotate({ identifier: "EndHold" })

export class AccountGroup extends HttpApiGroup.make("account").add(
  HttpApiEndpoint.get("me", "/me", {
    success: Me.MeView,
    error: CommonErrors
  }).annotate(OpenApi.Summary, "Key and plan record")
    .annotate(OpenApi.Description, "Costs one request and no reveals. `rate_limit.remaining` is what is left in the current window after this call.")
) {}

export class DomainsGroup extends HttpApiGroup.make("domains").add(
  HttpApiEndpoint.get("list", "/domains", {
    query: ListQueryParams,
    success: Listing.PageView,
    error: [...CommonErrors, InvalidRequestError, UpgradeRequiredError]
  }).annotate(OpenApi.Summary, "Page of listings, or changes since a watermark")
    .annotate(OpenApi.Description, "Default order is ascending listing id. Reads never spend a reveal. Follow `next_cursor` until it is null, keeping filters and `sort` fixed for a run."),
  HttpApiEndpoint.get("get", "/domains/:id", {
    params: { id: ListingIdParam },
    success: Listing.ListingView,
    error: [...CommonErrors, NotFoundError]
  }).annotate(OpenApi.Summary, "One listing"),
  HttpApiEndpoint.post("reveal", "/domains/:id/reveal", {
    params: { id: ListingIdParam },
    success: Listing.RevealedListingView,
    error: [...CommonErrors, UpgradeRequiredError, ForbiddenError, NotFoundError]
  }).annotate(OpenApi.Summary, "Reveal a name")
    .annotate(OpenApi.Description, "No body. The only call that spends; idempotent (a repeat returns the original `revealed_at` at no cost). Re-checks availability on the spot; a name found registered leaves the directory and answers 404 `NOT_FOUND`. Refusals carry `reveal_code`."),
  HttpApiEndpoint.post("hold", "/domains/:id/hold", {
    params: { id: ListingIdParam },
    success: Hold.HoldResponse,
    error: [...CommonErrors, UpgradeRequiredError, ForbiddenError, NotFoundError]
  }).annotate(OpenApi.Summary, "Hold a listing")
    .annotate(OpenApi.Description, "No body. Never spends a reveal. Holding again a listing the account holds returns that hold unchanged. Refusals carry `hold_code`.")
) {}

export class HoldsGroup extends HttpApiGroup.make("holds").add(
  HttpApiEndpoint.get("list", "/holds", {
    success: Hold.HoldList,
    error: CommonErrors
  }).annotate(OpenApi.Summary, "The account's running and recently ended holds")
    .annotate(OpenApi.Description, "Running holds and those that ended within 30 days, newest first."),
  HttpApiEndpoint.post("extend", "/holds/:id/extend", {
    params: { id: HoldIdParam },
    success: Hold.HoldResponse,
    error: [...CommonErrors, InvalidRequestError, UpgradeRequiredError, NotFoundError]
  }).annotate(OpenApi.Summary, "Use the one extension")
    .annotate(OpenApi.Description, "No body. The end moves later by the plan's extension, counted from the scheduled end. Refusals carry `hold_code`."),
  HttpApiEndpoint.delete("end", "/holds/:id", {
    params: { id: HoldIdParam },
    payload: [EndHoldBody, Schema.Null],
    success: Hold.HoldResponse,
    error: [...CommonErrors, InvalidRequestError, NotFoundError]
  }).annotate(OpenApi.Summary, "End a hold as released or registered")
    .annotate(OpenApi.Description, "Optional JSON body `{\"outcome\": \"released\"|\"registered\"}`, default `released`. A 30-day cooldown on the listing starts for the account. Refusals carry `hold_code`.")
) {}

export class MetaGroup extends HttpApiGroup.make("meta").add(
  HttpApiEndpoint.get("openapi", "/openapi.json", {
    success: Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "This document" }),
    error: CommonErrors
  }).annotate(OpenApi.Summary, "Machine-readable description (OpenAPI 3.1)")
) {}

/** The REST contract: shareable with clients, free of server code. */
export class DropshelfApi extends HttpApi.make("dropshelf")
  .add(AccountGroup)
  .add(DomainsGroup)
  .add(HoldsGroup)
  .add(MetaGroup)
  .middleware(ApiKeyAuth)
  .prefix(API_PREFIX)
  .annotateMerge(OpenApi.annotations({
    title: "dropshelf — expired-domain directory API",
    version: API_VERSION,
    description:
      "A read-and-reserve JSON API over a directory of expired and dropped domain names with backlinks. Every endpoint needs `Authorization: Bearer <API_KEY>`. Every refusal is the JSON envelope `{\"error\": {\"code\", \"message\", ...}}`.",
    transform: finishDocument
  }))
{}
