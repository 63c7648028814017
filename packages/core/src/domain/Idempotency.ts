import { Result, Schema } from "effect"
import {
  AlreadyExtended,
  type EndError,
  type ExtendError,
  FeaturedRequiresPro,
  HeldByOther,
  HoldCapReached,
  HoldCooldown,
  type HoldError,
  HoldNotFound,
  HoldOver,
  HoldsRequirePro,
  InvalidRequest,
  ListingNotFound,
  QuotaExhausted,
  type RevealError,
  RevealRequired
} from "./errors.ts"
import { type HoldOutcome, HoldResponse } from "./Hold.ts"
import { RevealedListingView } from "./Listing.ts"
import { DAY, type Instant, MINUTE } from "./Time.ts"

/*
 * Idempotent writes, in Stripe's model: a write sent with a key runs once; a repeat of the same
 * request with the same key, by the same account, within 24 hours gets the first answer back and
 * changes nothing. These are the rules; the store makes them atomic (`IdempotencyStore`) and
 * `Directory.idempotent` runs writes under them.
 */

/** How long a key stays bound to its first request and answer. */
export const RETENTION_MS = DAY

/**
 * A first request still unanswered after this long died with its process (every write here
 * takes seconds at most); a repeat then runs the write in its place.
 */
export const ABANDONED_AFTER_MS = MINUTE

/** How long a repeat waits for a first request that is still running, by default. */
export const DEFAULT_WAIT_MS = 10_000

/** Visible ASCII, `!` to `~`, 1 to 255 characters. */
export const KEY_PATTERN = /^[\x21-\x7E]{1,255}$/

/** What an idempotency key accepts, for the refusal of one that does not fit. */
export const keyAccepts = (parameter: string) =>
  `${parameter} accepts 1 to 255 visible ASCII characters (letters, digits and punctuation, no spaces), such as a UUID`

/** A client's idempotency key: 1 to 255 visible ASCII characters (`!` to `~`). */
export const IdempotencyKey = Schema.String.check(
  Schema.isPattern(KEY_PATTERN, { message: keyAccepts("Idempotency-Key") })
).pipe(Schema.brand("IdempotencyKey"))
export type IdempotencyKey = typeof IdempotencyKey.Type

/** `value` as a key, or the refusal naming `parameter` (the header or argument it came in). */
export const decodeKey = (parameter: string, value: unknown): Result.Result<IdempotencyKey, InvalidRequest> =>
  typeof value === "string" && KEY_PATTERN.test(value)
    ? Result.succeed(value as IdempotencyKey)
    : Result.fail(new InvalidRequest({ parameter, message: keyAccepts(parameter) }))

/** The writes a key can guard, each with every argument that tells one request from another. */
export type Write =
  | { readonly _tag: "Reveal"; readonly listingId: string }
  | { readonly _tag: "Hold"; readonly listingId: string }
  | { readonly _tag: "Extend"; readonly holdId: string }
  | { readonly _tag: "End"; readonly holdId: string; readonly outcome: HoldOutcome }

/** What each write answers and how it can be refused. */
export interface WriteResults {
  readonly Reveal: { readonly value: RevealedListingView; readonly error: RevealError }
  readonly Hold: { readonly value: HoldResponse; readonly error: HoldError }
  readonly Extend: { readonly value: HoldResponse; readonly error: ExtendError }
  readonly End: { readonly value: HoldResponse; readonly error: EndError }
}

export type WriteValue<W extends Write> = WriteResults[W["_tag"]]["value"]
export type WriteError<W extends Write> = WriteResults[W["_tag"]]["error"]

/** A write's answer under a key: the first request's own, or (`replayed`) that answer given again. */
export interface Answer<W extends Write> {
  readonly result: Result.Result<WriteValue<W>, WriteError<W>>
  readonly replayed: boolean
}

/**
 * The request a key is bound to. Two writes with the same text are the same request: the same
 * operation on the same listing or hold with the same arguments, so an end without an outcome
 * and an end as `released` are one request, as they mean the same.
 */
export const fingerprintOf = (write: Write): string =>
  JSON.stringify(write._tag === "End" ? [write._tag, write.holdId, write.outcome] : [write._tag, write._tag === "Extend" ? write.holdId : write.listingId])

const outcomeCodec = <V extends Schema.Top, const E extends ReadonlyArray<Schema.Top>>(value: V, errors: E) =>
  Schema.fromJsonString(Schema.Union([
    Schema.Struct({ _tag: Schema.Literal("Success"), value }),
    Schema.Struct({ _tag: Schema.Literal("Failure"), error: Schema.Union(errors) })
  ]))

/** How each write's answer is kept: JSON text of the view, or of the domain refusal with its tag. */
const OUTCOMES = {
  Reveal: outcomeCodec(RevealedListingView, [ListingNotFound, QuotaExhausted, FeaturedRequiresPro, HeldByOther]),
  Hold: outcomeCodec(HoldResponse, [ListingNotFound, HoldsRequirePro, RevealRequired, HeldByOther, HoldCapReached, HoldCooldown]),
  Extend: outcomeCodec(HoldResponse, [HoldNotFound, HoldsRequirePro, AlreadyExtended, HoldOver]),
  End: outcomeCodec(HoldResponse, [HoldNotFound, HoldOver])
} as const

// Every refusal a write can give is kept: a codec that missed one would fail to encode it.
type Refusals<T extends keyof typeof OUTCOMES> = Extract<typeof OUTCOMES[T]["Type"], { readonly _tag: "Failure" }>["error"]
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const _everyRefusalIsKept: [
  Same<Refusals<"Reveal">, RevealError>,
  Same<Refusals<"Hold">, HoldError>,
  Same<Refusals<"Extend">, ExtendError>,
  Same<Refusals<"End">, EndError>
] = [true, true, true, true]
void _everyRefusalIsKept

/** A write's answer as the text a store keeps. */
export const encodeOutcome = <W extends Write>(
  tag: W["_tag"],
  result: Result.Result<WriteValue<W>, WriteError<W>>
): string =>
  Schema.encodeUnknownSync(OUTCOMES[tag])(
    Result.isSuccess(result) ? { _tag: "Success", value: result.success } : { _tag: "Failure", error: result.failure }
  )

/** The answer a store kept, as the write gave it. Throws on text `encodeOutcome` did not write. */
export const decodeOutcome = <W extends Write>(tag: W["_tag"], text: string): Result.Result<WriteValue<W>, WriteError<W>> => {
  const outcome = Schema.decodeUnknownSync(OUTCOMES[tag])(text) as
    | { readonly _tag: "Success"; readonly value: WriteValue<W> }
    | { readonly _tag: "Failure"; readonly error: WriteError<W> }
  return outcome._tag === "Success" ? Result.succeed(outcome.value) : Result.fail(outcome.error)
}

/** One account's use of one key: the request it is bound to and, once the write ended, its answer. */
export interface IdempotencyRecord {
  readonly accountId: string
  readonly key: string
  readonly fingerprint: string
  /** When the run that owns the record started; it also names that run. */
  readonly startedAt: Instant
  /** `encodeOutcome`'s text; null while the write runs. */
  readonly outcome: string | null
}

export type BeginDecision =
  /** No live record, or one whose run was abandoned: this request runs the write, and the record is now its own. */
  | { readonly _tag: "Run" }
  /** The same request already ended: its answer, given again. */
  | { readonly _tag: "Replay"; readonly outcome: string }
  /** The same request is running: wait for its answer. */
  | { readonly _tag: "Wait" }
  /** The key is bound to a different request. */
  | { readonly _tag: "Reused" }

/** A record binds its key for `RETENTION_MS` from its start, that instant included. */
export const isExpired = (record: IdempotencyRecord, now: Instant): boolean => now - record.startedAt > RETENTION_MS

/** What a request with a key does, given the account's record of that key. */
export const decideBegin = (
  existing: IdempotencyRecord | undefined,
  request: { readonly fingerprint: string; readonly now: Instant }
): BeginDecision => {
  if (existing === undefined || isExpired(existing, request.now)) return { _tag: "Run" }
  if (existing.fingerprint !== request.fingerprint) return { _tag: "Reused" }
  if (existing.outcome !== null) return { _tag: "Replay", outcome: existing.outcome }
  if (request.now - existing.startedAt > ABANDONED_AFTER_MS) return { _tag: "Run" }
  return { _tag: "Wait" }
}
