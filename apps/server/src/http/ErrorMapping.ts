import { Context, Effect } from "effect"
import { Errors, Quote, Time } from "@dropshelf/core"
import {
  ForbiddenError,
  type HoldCode,
  type RevealCode,
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  InvalidRequestError,
  NotFoundError,
  SnapshotLimitedError,
  UnauthorizedError,
  UpgradeRequiredError,
  WatchLimitReachedError
} from "@dropshelf/api/ApiErrors"

/**
 * The one table from domain refusals to the wire: status (by error class), `error.code`, the
 * `reveal_code` / `hold_code` token and the extra field. Instants travel as epoch ms in the
 * core and become ISO strings here. A new domain error tag does not compile until it has a row.
 */

/** Which refusal token an operation carries: `reveal_code` on reveal, `hold_code` on hold, extend and end. */
export type Operation = "read" | "reveal" | "hold"

export type DomainError =
  | Errors.InvalidRequest
  | Errors.Unauthorized
  | Errors.UpgradeRequired
  | Errors.SinceTooOld
  | Errors.ListingNotFound
  | Errors.QuotaExhausted
  | Errors.FeaturedRequiresPro
  | Errors.HeldByOther
  | Errors.RevealRequired
  | Errors.HoldsRequirePro
  | Errors.HoldCapReached
  | Errors.HoldCooldown
  | Errors.AlreadyExtended
  | Errors.HoldOver
  | Errors.HoldNotFound
  | Errors.IdempotencyKeyReused
  | Errors.IdempotencyKeyInUse
  | Errors.SnapshotLimitReached
  | Errors.WatchLimitReached
  | Errors.WatchNotFound
  | Errors.DeliveryNotFound

/** The wire error class (and so the status) of each domain refusal. */
export interface WireErrorOf {
  readonly InvalidRequest: InvalidRequestError
  readonly Unauthorized: UnauthorizedError
  readonly UpgradeRequired: UpgradeRequiredError
  readonly SinceTooOld: InvalidRequestError
  readonly ListingNotFound: NotFoundError
  readonly QuotaExhausted: UpgradeRequiredError
  readonly FeaturedRequiresPro: UpgradeRequiredError
  readonly HeldByOther: ForbiddenError
  readonly RevealRequired: ForbiddenError
  readonly HoldsRequirePro: UpgradeRequiredError
  readonly HoldCapReached: ForbiddenError
  readonly HoldCooldown: ForbiddenError
  readonly AlreadyExtended: InvalidRequestError
  readonly HoldOver: InvalidRequestError
  readonly HoldNotFound: NotFoundError
  readonly IdempotencyKeyReused: IdempotencyKeyReusedError
  readonly IdempotencyKeyInUse: IdempotencyKeyInUseError
  readonly SnapshotLimitReached: SnapshotLimitedError
  readonly WatchLimitReached: WatchLimitReachedError
  readonly WatchNotFound: NotFoundError
  readonly DeliveryNotFound: NotFoundError
}

type Row<K extends DomainError["_tag"]> = (error: Extract<DomainError, { readonly _tag: K }>, operation: Operation) => WireErrorOf[K]

const iso = Time.toIso

/** The token field for codes both tables share, on whichever table the operation uses. */
const token = (
  operation: Operation,
  code: RevealCode & HoldCode
): { readonly reveal_code?: RevealCode; readonly hold_code?: HoldCode } =>
  operation === "reveal" ? { reveal_code: code } : operation === "hold" ? { hold_code: code } : {}

const TABLE: { readonly [K in DomainError["_tag"]]: Row<K> } = {
  InvalidRequest: (e) =>
    new InvalidRequestError({ error: { code: "invalid_request", message: e.message, parameter: e.parameter } }),
  Unauthorized: (e, op) =>
    new UnauthorizedError({ error: { code: "unauthorized", message: e.message, ...token(op, "SIGN_IN_REQUIRED") } }),
  UpgradeRequired: (e) =>
    new UpgradeRequiredError({ error: { code: "upgrade_required", message: e.message, parameter: e.feature } }),
  SinceTooOld: (e) =>
    new InvalidRequestError({
      error: {
        code: "invalid_request",
        message: `since accepts an instant at most the since feed's horizon of ${e.horizonDays} days old, now ${
          iso(e.oldestAccepted)
        } or later; got ${iso(e.since)}, whose changes can no longer be told in full. Resynchronise with a full run (no since, follow next_cursor to the end), then poll with the synced_at of that run's first page`,
        parameter: "since",
        oldest_since: iso(e.oldestAccepted),
        horizon_days: e.horizonDays
      }
    }),
  ListingNotFound: (e, op) =>
    new NotFoundError({
      error: { code: "not_found", message: `No listing ${JSON.stringify(e.listingId)} is visible to this key`, ...token(op, "NOT_FOUND") }
    }),
  QuotaExhausted: (e) =>
    new UpgradeRequiredError({
      error: {
        code: "upgrade_required",
        message: "This month's reveal allowance is spent",
        reveal_code: "QUOTA_EXHAUSTED",
        resets_at: iso(e.resetsAt)
      }
    }),
  FeaturedRequiresPro: () =>
    new UpgradeRequiredError({
      error: { code: "upgrade_required", message: "Revealing a featured listing needs the pro or business plan", reveal_code: "FEATURED_REQUIRES_PRO" }
    }),
  HeldByOther: (e, op) =>
    new ForbiddenError({
      error: {
        code: "forbidden",
        message: "Another account holds this listing",
        ...token(op === "read" ? "hold" : op, "HELD_BY_OTHER"),
        expires_at: iso(e.expiresAt)
      }
    }),
  RevealRequired: () =>
    new ForbiddenError({
      error: { code: "forbidden", message: "Reveal the listing before holding it", hold_code: "REVEAL_REQUIRED" }
    }),
  HoldsRequirePro: () =>
    new UpgradeRequiredError({
      error: { code: "upgrade_required", message: "Holds need the pro or business plan", hold_code: "HOLDS_REQUIRE_PRO" }
    }),
  HoldCapReached: (e) =>
    new ForbiddenError({
      error: {
        code: "forbidden",
        message: `All ${e.limit} holds the plan allows are running`,
        hold_code: "HOLD_CAP_REACHED",
        limit: e.limit
      }
    }),
  HoldCooldown: (e) =>
    new ForbiddenError({
      error: {
        code: "forbidden",
        message: "This account's own hold on the listing ended within 30 days",
        hold_code: "HOLD_COOLDOWN",
        available_at: iso(e.availableAt)
      }
    }),
  AlreadyExtended: () =>
    new InvalidRequestError({
      error: { code: "invalid_request", message: "The hold has already used its one extension", hold_code: "ALREADY_EXTENDED" }
    }),
  HoldOver: (e) =>
    new InvalidRequestError({
      error: { code: "invalid_request", message: `The hold has already ended (${e.state})`, hold_code: "HOLD_OVER" }
    }),
  HoldNotFound: () =>
    new NotFoundError({
      error: { code: "not_found", message: "No such hold on this account", hold_code: "HOLD_NOT_FOUND" }
    }),
  // The key's own refusals carry no reveal_code or hold_code: nothing was tried, `code` says why.
  IdempotencyKeyReused: (e) =>
    new IdempotencyKeyReusedError({
      error: {
        code: "idempotency_key_reused",
        message: `The idempotency key ${Quote.quote(e.key)} was sent with a different request within the last 24 hours; use a new key for a new request`
      }
    }),
  IdempotencyKeyInUse: (e) =>
    new IdempotencyKeyInUseError({
      error: {
        code: "idempotency_key_in_use",
        message: `The first request with the idempotency key ${Quote.quote(e.key)} is still running; send this one again with the same key in a moment`
      }
    }),
  SnapshotLimitReached: (e) =>
    new SnapshotLimitedError({
      error: {
        code: "snapshot_limit_reached",
        message: `This account has started its ${e.limit} bulk snapshots for this hour; retry after ${e.retryAfter} s, and follow the since feed meanwhile`,
        limit: e.limit,
        retry_after: e.retryAfter
      }
    }),
  WatchLimitReached: (e) =>
    new WatchLimitReachedError({
      error: {
        code: "watch_limit_reached",
        message: `The account has the ${e.limit} watch${e.limit === 1 ? "" : "es"} its plan allows; delete one or upgrade`,
        limit: e.limit
      }
    }),
  WatchNotFound: (e) =>
    new NotFoundError({ error: { code: "not_found", message: `No watch ${Quote.quote(e.watchId)} on this account` } }),
  DeliveryNotFound: (e) =>
    new NotFoundError({ error: { code: "not_found", message: `No delivery ${Quote.quote(e.eventId)} of this watch's webhook` } })
}

/**
 * Where a caller may upgrade its plan (`DROPSHELF_UPGRADE_URL`): every 402 of the API and the
 * MCP tools carries it as `upgrade_url`; unset, no 402 has the field.
 */
export const UpgradeUrl = Context.Reference<string | undefined>("@dropshelf/server/UpgradeUrl", {
  defaultValue: () => undefined
})

/** The wire error for a domain refusal; a 402 carries `upgradeUrl`, when given, as `upgrade_url`. */
export const toApiError = <E extends DomainError>(error: E, operation: Operation, upgradeUrl?: string | undefined): WireErrorOf[E["_tag"]] => {
  const wire = (TABLE[error._tag] as unknown as (error: E, operation: Operation) => WireErrorOf[E["_tag"]])(error, operation)
  if (upgradeUrl === undefined || !(wire instanceof UpgradeRequiredError)) return wire
  return new UpgradeRequiredError({ error: { ...wire.error, upgrade_url: upgradeUrl } }) as WireErrorOf[E["_tag"]]
}

/** Fails with the wire error for a domain refusal, a 402 with the `UpgradeUrl`. */
export const refuseAs = (operation: Operation) =>
<A, E extends DomainError, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, WireErrorOf[E["_tag"]], R> =>
  Effect.catch(effect, (error) => Effect.flatMap(UpgradeUrl, (upgradeUrl) => Effect.fail(toApiError(error, operation, upgradeUrl))))
