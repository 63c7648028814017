import { Schema } from "effect"

/*
 * The wire shape of every refusal: `{"error": {"code", "message", ...}}`. One class per HTTP
 * status, so the OpenAPI document names each status with its own code, and so the encoder picks
 * the status from the class of the value a handler fails with.
 */

const Timestamp = Schema.String.annotate({
  description: "ISO 8601 instant in UTC with millisecond precision",
  examples: ["2026-11-22T09:30:00.000Z"]
})

/**
 * The complete set of `error.code` values: the spec's eight (its Errors section), the two of
 * idempotency keys added to them (docs/decisions/0010-idempotency-keys.md), the watch limit
 * (docs/decisions/0012-watches.md), and the bulk snapshot's hourly allowance
 * (docs/decisions/0508-bulk-snapshot.md). None of these can answer a spec endpoint's request
 * that sends no `Idempotency-Key`.
 */
export const ErrorCode = Schema.Literals([
  "invalid_request",
  "unauthorized",
  "upgrade_required",
  "forbidden",
  "not_found",
  "method_not_allowed",
  "rate_limited",
  "server_error",
  "idempotency_key_in_use",
  "idempotency_key_reused",
  "snapshot_limit_reached",
  "watch_limit_reached"
])
export type ErrorCode = typeof ErrorCode.Type

export const RevealCode = Schema.Literals([
  "QUOTA_EXHAUSTED",
  "FEATURED_REQUIRES_PRO",
  "HELD_BY_OTHER",
  "NOT_FOUND",
  "SIGN_IN_REQUIRED",
  "REVEAL_FAILED"
]).annotate({ description: "On refused reveals: the token to branch on" })
export type RevealCode = typeof RevealCode.Type

export const HoldCode = Schema.Literals([
  "REVEAL_REQUIRED",
  "HELD_BY_OTHER",
  "HOLD_CAP_REACHED",
  "HOLD_COOLDOWN",
  "HOLDS_REQUIRE_PRO",
  "ALREADY_EXTENDED",
  "HOLD_OVER",
  "HOLD_NOT_FOUND",
  "NOT_FOUND",
  "SIGN_IN_REQUIRED"
]).annotate({ description: "On refused holds, extensions and ends: the token to branch on" })
export type HoldCode = typeof HoldCode.Type

/** Every field an error body can carry; each status narrows `code` to its own value. */
export interface ErrorFields {
  readonly code: ErrorCode
  readonly message: string
  readonly parameter?: string
  readonly reveal_code?: RevealCode
  readonly hold_code?: HoldCode
  readonly resets_at?: string
  readonly expires_at?: string
  readonly available_at?: string
  readonly limit?: number
  readonly retry_after?: number
  readonly oldest_since?: string
  readonly horizon_days?: number
  readonly upgrade_url?: string
}

const body = <C extends ErrorCode, const F extends Schema.Struct.Fields>(code: C, extra: F) =>
  Schema.Struct({
    code: Schema.Literal(code),
    message: Schema.String.annotate({ description: "Human text; may change. Branch on `code` instead." }),
    ...extra
  })

const parameter = Schema.optionalKey(
  Schema.String.annotate({ description: "The parameter refused (`body` for the request body)" })
)
const revealCode = Schema.optionalKey(RevealCode)
const holdCode = Schema.optionalKey(HoldCode)

export class InvalidRequestError extends Schema.Error<InvalidRequestError>("InvalidRequestError")({
  error: body("invalid_request", {
    parameter,
    hold_code: holdCode,
    oldest_since: Schema.optionalKey(Timestamp.annotate({
      description: "With `parameter: \"since\"` past the feed's horizon: the oldest `since` accepted when the request was answered"
    })),
    horizon_days: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
      description: "With `oldest_since`: how many days back the since feed reaches (also `since_horizon_days` in `GET /me`)"
    }))
  })
}, {
  httpApiStatus: 400,
  description:
    "A documented parameter has a value the API cannot honour (the message names it and what it accepts), or the hold has used its extension (`ALREADY_EXTENDED`) or has ended (`HOLD_OVER`). A `since` older than the since feed's horizon names `since` and carries `oldest_since` and `horizon_days`: tombstones that old are pruned, so do not retry with the same `since`; resynchronise with a full run (no `since`, follow `next_cursor` to the end, replace your copy), then poll with the `synced_at` of that run's first page. Pages that follow a cursor get one more day, so a run that started inside the horizon is not refused halfway."
}) {}

export class UnauthorizedError extends Schema.Error<UnauthorizedError>("UnauthorizedError")({
  error: body("unauthorized", { reveal_code: revealCode, hold_code: holdCode })
}, {
  httpApiStatus: 401,
  description:
    "Missing, malformed, unknown or revoked key. Carries `WWW-Authenticate: Bearer realm=\"dropshelf\"`; reveal and hold endpoints add `SIGN_IN_REQUIRED`. Each one counts against the client's address: past the address's ceiling the answer is 429."
}) {}

export class UpgradeRequiredError extends Schema.Error<UpgradeRequiredError>("UpgradeRequiredError")({
  error: body("upgrade_required", {
    parameter,
    reveal_code: revealCode,
    hold_code: holdCode,
    resets_at: Schema.optionalKey(Timestamp.annotate({ description: "With QUOTA_EXHAUSTED: the monthly rollover" })),
    upgrade_url: Schema.optionalKey(Schema.String.annotate({
      description: "Where to upgrade the plan, when the operator has set one (`DROPSHELF_UPGRADE_URL`); on every 402 then, absent otherwise"
    }))
  })
}, {
  httpApiStatus: 402,
  description:
    "The plan lacks the feature: `since`, the bulk snapshot, a reveal past the ceiling, a featured reveal on free, or a hold. Carries `upgrade_url` when the operator has set one."
}) {}

export class ForbiddenError extends Schema.Error<ForbiddenError>("ForbiddenError")({
  error: body("forbidden", {
    reveal_code: revealCode,
    hold_code: holdCode,
    expires_at: Schema.optionalKey(Timestamp.annotate({ description: "With HELD_BY_OTHER: when the listing frees up" })),
    available_at: Schema.optionalKey(Timestamp.annotate({ description: "With HOLD_COOLDOWN: end of the cooldown" })),
    limit: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({ description: "With HOLD_CAP_REACHED: the plan's ceiling" }))
  })
}, {
  httpApiStatus: 403,
  description: "State refuses the write: held by another account, hold cap full, own cooldown running, or not yet revealed."
}) {}

export class NotFoundError extends Schema.Error<NotFoundError>("NotFoundError")({
  error: body("not_found", { reveal_code: revealCode, hold_code: holdCode })
}, {
  httpApiStatus: 404,
  description: "No such listing or hold, or one the caller cannot see (including a listing inside the plan's access delay)."
}) {}

export class WatchLimitReachedError extends Schema.Error<WatchLimitReachedError>("WatchLimitReachedError")({
  error: body("watch_limit_reached", {
    limit: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({ description: "The plan's number of watches" })
  })
}, {
  httpApiStatus: 403,
  description: "The account already has as many watches as its plan allows (free 1, pro 10, business 100). Delete one, or upgrade."
}) {}

export class IdempotencyKeyInUseError extends Schema.Error<IdempotencyKeyInUseError>("IdempotencyKeyInUseError")({
  error: body("idempotency_key_in_use", {})
}, {
  httpApiStatus: 409,
  description:
    "The first request with this `Idempotency-Key` is still running after this repeat waited for it. Nothing was done for this repeat: send it again with the same key in a moment."
}) {}

export class IdempotencyKeyReusedError extends Schema.Error<IdempotencyKeyReusedError>("IdempotencyKeyReusedError")({
  error: body("idempotency_key_reused", {})
}, {
  httpApiStatus: 422,
  description:
    "This account sent the `Idempotency-Key` within the last 24 hours with a different request (another method, path or body). Nothing was done: use a new key for a new request."
}) {}

export class MethodNotAllowedError extends Schema.Error<MethodNotAllowedError>("MethodNotAllowedError")({
  error: body("method_not_allowed", {})
}, {
  httpApiStatus: 405,
  description: "The path does not implement this method. Carries `Allow`."
}) {}

export class PayloadTooLargeError extends Schema.Error<PayloadTooLargeError>("PayloadTooLargeError")({
  error: body("invalid_request", { parameter })
}, {
  httpApiStatus: 413,
  description: "The request body is larger than 16 KiB. No endpoint needs a body that large."
}) {}

export class RequestTimeoutError extends Schema.Error<RequestTimeoutError>("RequestTimeoutError")({
  error: body("invalid_request", {})
}, {
  httpApiStatus: 408,
  description: "The request did not arrive in full in time. The connection is closed."
}) {}

export class HeadersTooLargeError extends Schema.Error<HeadersTooLargeError>("HeadersTooLargeError")({
  error: body("invalid_request", {})
}, {
  httpApiStatus: 431,
  description: "The request line and headers are larger than 16 KB. The connection is closed."
}) {}

export class RateLimitedError extends Schema.Error<RateLimitedError>("RateLimitedError")({
  error: body("rate_limited", {
    retry_after: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 60 })).annotate({
      description: "Whole seconds until the window resets: the value of `Retry-After`"
    })
  })
}, {
  httpApiStatus: 429,
  description:
    "Over the key's per-minute ceiling; or the client's address sent more requests with a missing or refused key this minute than the server allows (30 by default), and is then refused, a valid key included, until the minute ends, before any key is read. Carries `Retry-After` (whole seconds), repeated in the body as `retry_after`; the refusal of an address carries no `X-RateLimit-*`, `RateLimit-Policy` or `RateLimit`."
}) {}

export class SnapshotLimitedError extends Schema.Error<SnapshotLimitedError>("SnapshotLimitedError")({
  error: body("snapshot_limit_reached", {
    limit: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({ description: "Snapshots an account may start per wall-clock hour" }),
    retry_after: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3600 })).annotate({
      description: "Whole seconds until the hour ends and another snapshot is allowed: the value of `Retry-After`"
    })
  })
}, {
  httpApiStatus: 429,
  description:
    "The account has started as many bulk snapshots as it may this wall-clock hour (`limit`, 4). Carries `Retry-After` (whole seconds to the next hour), repeated in the body as `retry_after`. Keep in sync with the since feed meanwhile."
}) {}

export class ServerError extends Schema.Error<ServerError>("ServerError")({
  error: body("server_error", { reveal_code: revealCode })
}, {
  httpApiStatus: 500,
  description: "A fault in the service; retry with backoff. On reveal it carries `REVEAL_FAILED`."
}) {}

export type ApiError =
  | InvalidRequestError
  | UnauthorizedError
  | UpgradeRequiredError
  | ForbiddenError
  | NotFoundError
  | IdempotencyKeyInUseError
  | IdempotencyKeyReusedError
  | WatchLimitReachedError
  | MethodNotAllowedError
  | PayloadTooLargeError
  | RateLimitedError
  | SnapshotLimitedError
  | ServerError

/**
 * The errors every keyed endpoint can answer, whatever it does. 408 and 431 are written by
 * Node's `clientError` listener (http/ClientError.ts), before any route or key is read.
 */
export const CommonErrors = [
  UnauthorizedError,
  MethodNotAllowedError,
  RequestTimeoutError,
  PayloadTooLargeError,
  HeadersTooLargeError,
  RateLimitedError,
  ServerError
] as const
