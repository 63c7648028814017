import { Schema } from "effect"

/*
 * Domain refusals, as tagged values. The core never picks an HTTP status: the server maps each
 * tag to its code, status and extra field in one table, and the CLI maps them to exit codes.
 * Instants travel as epoch milliseconds.
 */

/** A documented parameter has a value the directory cannot honour. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  parameter: Schema.String,
  message: Schema.String
}) {}

/** Missing, malformed, unknown or revoked key. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  message: Schema.String
}) {}

/** The caller's plan lacks a feature that is not a reveal or a hold (the `since` feed). */
export class UpgradeRequired extends Schema.TaggedError<UpgradeRequired>()("UpgradeRequired", {
  feature: Schema.String,
  message: Schema.String
}) {}

/**
 * A `since` older than the feed's horizon: tombstones that old may be pruned, so the changes
 * since then cannot be told in full; the consumer resynchronises with a full run.
 */
export class SinceTooOld extends Schema.TaggedError<SinceTooOld>()("SinceTooOld", {
  since: Schema.Number,
  /** The oldest `since` the request would have been accepted with. */
  oldestAccepted: Schema.Number,
  horizonDays: Schema.Number
}) {}

/** The account has started as many bulk snapshots as it may this hour; another is allowed in `retryAfter` whole seconds. */
export class SnapshotLimitReached extends Schema.TaggedError<SnapshotLimitReached>()("SnapshotLimitReached", {
  limit: Schema.Number,
  retryAfter: Schema.Number
}) {}

/** No such listing, or one this caller cannot see (left the directory, not active, inside the access delay). */
export class ListingNotFound extends Schema.TaggedError<ListingNotFound>()("ListingNotFound", {
  listingId: Schema.String
}) {}

export class QuotaExhausted extends Schema.TaggedError<QuotaExhausted>()("QuotaExhausted", {
  resetsAt: Schema.Number
}) {}

export class FeaturedRequiresPro extends Schema.TaggedError<FeaturedRequiresPro>()("FeaturedRequiresPro", {}) {}

/** Another account's hold is running; the holder is never named. */
export class HeldByOther extends Schema.TaggedError<HeldByOther>()("HeldByOther", {
  expiresAt: Schema.Number
}) {}

export class RevealRequired extends Schema.TaggedError<RevealRequired>()("RevealRequired", {}) {}

export class HoldsRequirePro extends Schema.TaggedError<HoldsRequirePro>()("HoldsRequirePro", {}) {}

export class HoldCapReached extends Schema.TaggedError<HoldCapReached>()("HoldCapReached", {
  limit: Schema.Number
}) {}

export class HoldCooldown extends Schema.TaggedError<HoldCooldown>()("HoldCooldown", {
  availableAt: Schema.Number
}) {}

export class AlreadyExtended extends Schema.TaggedError<AlreadyExtended>()("AlreadyExtended", {}) {}

export class HoldOver extends Schema.TaggedError<HoldOver>()("HoldOver", {
  state: Schema.Literals(["expired", "released", "registered"])
}) {}

/** No such hold, or one that is not the caller's account's: deliberately one answer for both. */
export class HoldNotFound extends Schema.TaggedError<HoldNotFound>()("HoldNotFound", {
  holdId: Schema.String
}) {}

/** The account used this idempotency key for a different request within its 24 hours. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  key: Schema.String
}) {}

/** The first request with this idempotency key is still running after the repeat's wait. */
export class IdempotencyKeyInUse extends Schema.TaggedError<IdempotencyKeyInUse>()("IdempotencyKeyInUse", {
  key: Schema.String
}) {}

/** An operator command refused: the account already has as many live keys as its plan allows. */
export class KeyLimitReached extends Schema.TaggedError<KeyLimitReached>()("KeyLimitReached", {
  limit: Schema.Number
}) {}

export class AccountNotFound extends Schema.TaggedError<AccountNotFound>()("AccountNotFound", {
  accountId: Schema.String
}) {}

/** Another account already has this owner email (case aside). */
export class EmailTaken extends Schema.TaggedError<EmailTaken>()("EmailTaken", {
  email: Schema.String
}) {}

/** A sign-in link that is unknown, already used or expired: deliberately one answer for all three. */
export class SignInLinkInvalid extends Schema.TaggedError<SignInLinkInvalid>()("SignInLinkInvalid", {}) {}

/** No live session for this token: unknown, signed out, idle too long or past its absolute end. */
export class SessionEnded extends Schema.TaggedError<SessionEnded>()("SessionEnded", {}) {}

export class KeyNotFound extends Schema.TaggedError<KeyNotFound>()("KeyNotFound", {
  prefix: Schema.String
}) {}

/** The account already has as many watches as its plan allows. */
export class WatchLimitReached extends Schema.TaggedError<WatchLimitReached>()("WatchLimitReached", {
  limit: Schema.Number
}) {}

/** No such watch on this account (another account's watch is not told apart from none). */
export class WatchNotFound extends Schema.TaggedError<WatchNotFound>()("WatchNotFound", {
  watchId: Schema.String
}) {}

/** No such delivery of this watch, or the watch has no webhook. */
export class DeliveryNotFound extends Schema.TaggedError<DeliveryNotFound>()("DeliveryNotFound", {
  eventId: Schema.String
}) {}

export type RevealError = ListingNotFound | QuotaExhausted | FeaturedRequiresPro | HeldByOther
export type HoldError =
  | ListingNotFound
  | HoldsRequirePro
  | RevealRequired
  | HeldByOther
  | HoldCapReached
  | HoldCooldown
export type ExtendError = HoldNotFound | HoldsRequirePro | AlreadyExtended | HoldOver
export type EndError = HoldNotFound | HoldOver
export type ListError = InvalidRequest | UpgradeRequired | SinceTooOld
export type IdempotencyError = IdempotencyKeyReused | IdempotencyKeyInUse

/**
 * A passkey ceremony that does not prove what it claims: its challenge is unknown, spent,
 * expired or another session's, the credential is unknown, or the authenticator's answer fails
 * verification (signature, origin, relying party, user verification, counter). One refusal
 * for all, as for sign-in links.
 */
export class PasskeyRefused extends Schema.TaggedError<PasskeyRefused>()("PasskeyRefused", {}) {}

/** No such passkey on this account (another account's passkey is not told apart from none). */
export class PasskeyNotFound extends Schema.TaggedError<PasskeyNotFound>()("PasskeyNotFound", {
  passkeyId: Schema.String
}) {}
