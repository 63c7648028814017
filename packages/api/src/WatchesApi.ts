import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ListQuery, WatchView } from "@dropshelf/core"
import * as Examples from "./Examples.ts"
import { CommonErrors, InvalidRequestError, NotFoundError, WatchLimitReachedError } from "./ApiErrors.ts"

/*
 * Watches: saved `GET /domains` filters that report each listing as it becomes readable to
 * the account and passes them, by Standard Webhooks v1 and by pull (docs/decisions/0012-watches.md,
 * 0220-standard-webhooks.md). Kept apart from Api.ts so the contract grows by whole groups.
 */

// The examples name what `npm start`'s demo has (Examples.ts). Deleting is the one change the
// later operations could not follow, so its example is another watch.
const WatchIdParam = Schema.String.annotate({ description: "Watch id, as returned by POST /watches", examples: [Examples.WATCH_ID] })
const WatchToDeleteIdParam = Schema.String.annotate({ description: "Watch id, as returned by POST /watches", examples: [Examples.WATCH_TO_DELETE_ID] })
const EventIdParam = Schema.String.annotate({ description: "Event id: a match's `id`, its delivery's `webhook-id`", examples: [Examples.EVENT_ID] })

const QueryBody = Schema.Record(
  Schema.String,
  Schema.Union([Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String)])
).annotate({
  description:
    "The `GET /domains` filters by parameter name (`tld`, `category`, `rsMin`, `q`, …), each as the query string would carry it; a number, a boolean or (for comma-separated filters) an array of texts is read as that text. Validated by the same schema, with the same messages; the refused one is named `query.<name>`. `cursor`, `since`, `sort` and `limit` are refused: a watch sees each listing once, as it becomes readable. `checkedDays` is refused: any account's reveal moves the check it reads, so a watch on it would tell its owner what other accounts did. A name that is not a filter is refused (unlike `GET /domains`, which ignores it). Omitted or `{}`: every listing.",
  examples: [Examples.WATCH_QUERY]
})

const WebhookUrl = Schema.String.annotate({
  description:
    "Where to POST each match, signed per Standard Webhooks v1. `https` and a public host, checked again when delivering; `http` and private or loopback addresses only where the server sets `DROPSHELF_WEBHOOKS_ALLOW_PRIVATE=true`."
})

export const CreateWatchBody = Schema.Struct({
  name: Schema.String.annotate({ description: "1 to 100 characters" }),
  query: Schema.optionalKey(QueryBody),
  webhook_url: Schema.optionalKey(WebhookUrl)
}).annotate({
  identifier: "CreateWatch",
  examples: [{ name: "Tech and food .com names", query: Examples.WATCH_QUERY }],
  description:
    "Any other key, a field of another type, or text with a NUL character or a lone surrogate is 400 `invalid_request` naming the field (`name`, `query.<name>`, `webhook_url`)."
})

export const PatchWatchBody = Schema.Struct({
  name: Schema.optionalKey(Schema.String.annotate({ description: "1 to 100 characters" })),
  query: Schema.optionalKey(QueryBody),
  webhook_url: Schema.optionalKey(Schema.NullOr(WebhookUrl).annotate({
    description:
      "A URL sets the webhook and re-enables a paused or disabled one; a watch that had no webhook gets a signing secret, in this answer's `webhook_secret` only. A new URL keeps the secret. `null` removes the webhook."
  })),
  paused: Schema.optionalKey(Schema.Boolean.annotate({
    description: "`true`: record no matches until `false`. `false` also resumes a webhook paused after failed deliveries."
  }))
}).annotate({
  identifier: "PatchWatch",
  examples: [{ name: "Tech and food .com names, score 40 and up" }],
  description:
    "Any other key, a field of another type, or text with a NUL character or a lone surrogate is 400 `invalid_request` naming the field (`name`, `query.<name>`, `webhook_url`, `paused`)."
})

export const MatchesQuery = Schema.Struct({
  cursor: Schema.optionalKey(Schema.String.annotate({ description: "Opaque value from `next_cursor`" })),
  limit: ListQuery.ListQueryParameters.limit
})

export class WatchesGroup extends HttpApiGroup.make("watches").add(
  HttpApiEndpoint.post("create", "/watches", {
    payload: CreateWatchBody,
    success: WatchView.CreatedWatchView.annotate({ httpApiStatus: 201 }),
    error: [...CommonErrors, InvalidRequestError, WatchLimitReachedError]
  }).annotate(OpenApi.Summary, "Create a watch")
    .annotate(OpenApi.Description, "201 with the watch; with a `webhook_url`, its signing secret `webhook_secret` (`whsec_…`), shown this once. Over the plan's number of watches: 403 `watch_limit_reached`. A listing matches only when, at or after the watch's creation, it becomes readable to the account and passes the filters (it enters the directory or comes back, or the account's plan's access delay ends), or the operator changes a listing the account can already read so that it newly passes them; never through what other accounts do. Matches are kept for the server's retention (90 days by default)."),
  HttpApiEndpoint.get("list", "/watches", {
    success: WatchView.WatchList,
    error: CommonErrors
  }).annotate(OpenApi.Summary, "The account's watches")
    .annotate(OpenApi.Description, "Oldest first. Secrets are never shown here."),
  HttpApiEndpoint.get("get", "/watches/:id", {
    params: { id: WatchIdParam },
    success: WatchView.WatchView,
    error: [...CommonErrors, NotFoundError]
  }).annotate(OpenApi.Summary, "One watch")
    .annotate(OpenApi.Description, "With its webhook's state: a paused or disabled webhook says why."),
  HttpApiEndpoint.patch("update", "/watches/:id", {
    params: { id: WatchIdParam },
    payload: PatchWatchBody,
    success: WatchView.CreatedWatchView,
    error: [...CommonErrors, InvalidRequestError, NotFoundError]
  }).annotate(OpenApi.Summary, "Change a watch")
    .annotate(OpenApi.Description, "Any of `name`, `query`, `webhook_url`, `paused`; the others stay as they are. When the change gives the watch a webhook it did not have, the answer carries its `webhook_secret`, shown this once."),
  HttpApiEndpoint.delete("delete", "/watches/:id", {
    params: { id: WatchToDeleteIdParam },
    success: HttpApiSchema.NoContent,
    error: [...CommonErrors, NotFoundError]
  }).annotate(OpenApi.Summary, "Delete a watch")
    .annotate(OpenApi.Description, "With its matches and pending deliveries. 204, no body."),
  HttpApiEndpoint.post("rotateSecret", "/watches/:id/rotate-secret", {
    params: { id: WatchIdParam },
    success: WatchView.RotatedSecretView,
    error: [...CommonErrors, InvalidRequestError, NotFoundError]
  }).annotate(OpenApi.Summary, "Rotate the webhook's signing secret")
    .annotate(OpenApi.Description, "No body. The new secret is shown this once; for 24 hours the previous one keeps signing beside it (`webhook-signature` then carries two space-separated signatures), so receivers can switch without losing a delivery."),
  HttpApiEndpoint.get("matches", "/watches/:id/matches", {
    params: { id: WatchIdParam },
    query: MatchesQuery,
    success: WatchView.MatchPage,
    error: [...CommonErrors, InvalidRequestError, NotFoundError]
  }).annotate(OpenApi.Summary, "The watch's matches, oldest first")
    .annotate(OpenApi.Description, "Every match the watch recorded, webhook or not, keyset paged: ask with `next_cursor` while `has_more` is true; `next_cursor` continues after the page's last match even on the last page, so a later call with the last one returns only newer matches (an empty page answers null: keep the cursor you sent). Each listing is shown as this account reads it now (disclosure rules apply), or null once it is not readable."),
  HttpApiEndpoint.get("deliveries", "/watches/:id/deliveries", {
    params: { id: WatchIdParam },
    success: WatchView.AttemptList,
    error: [...CommonErrors, NotFoundError]
  }).annotate(OpenApi.Summary, "Recent webhook delivery attempts")
    .annotate(OpenApi.Description, "The latest 100 attempts, newest first: when, the receiver's status or the error, and how long it took."),
  HttpApiEndpoint.post("retry", "/watches/:id/deliveries/:event/retry", {
    params: { id: WatchIdParam, event: EventIdParam },
    success: WatchView.ResendView.annotate({ httpApiStatus: 202 }),
    error: [...CommonErrors, NotFoundError]
  }).annotate(OpenApi.Summary, "Send one delivery again")
    .annotate(OpenApi.Description, "No body. One more attempt, at once (the worker sends it within seconds), with the same `webhook-id`; its failure does not pause the webhook. A paused or disabled webhook sends it once resumed.")
).annotate(OpenApi.Description, "Saved `GET /domains` filters that report new matching listings by signed webhook and by pull.") {}
