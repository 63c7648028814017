import { Cause, Effect, Predicate, Schema } from "effect"
import { HttpClientError } from "effect/http"
import type { ApiErrors } from "@dropshelf/api"

/*
 * What a promise of the `Dropshelf` client rejects with: a refusal the API answered
 * (`DropshelfError`, the envelope and the status), or a request that got no usable answer
 * (`DropshelfTransportError`).
 */

/** The envelope's `error` object as sent: `code`, `message` and the extra fields of that refusal. */
export type ErrorFields = Omit<ApiErrors.ErrorFields, "code"> & {
  /** The stable token; one of `ApiErrors.ErrorCode`, or a code this client version does not know yet. */
  readonly code: ApiErrors.ErrorCode | (string & {})
  readonly [field: string]: unknown
}

/** A refusal: the status, and the envelope `{"error": {"code", "message", ...}}` as the API sent it. */
export class DropshelfError extends Error {
  override readonly name = "DropshelfError"
  /** The HTTP status (400, 401, 402, 403, 404, 429, 500, ...). */
  readonly status: number
  /** `error.code`: the stable token (`invalid_request`, `upgrade_required`, `forbidden`, ...). */
  readonly code: ErrorFields["code"]
  /** On a refused reveal, the token to branch on (`QUOTA_EXHAUSTED`, `HELD_BY_OTHER`, ...). */
  readonly revealCode: ApiErrors.RevealCode | undefined
  /** On a refused hold, extension or end, the token to branch on (`HOLD_CAP_REACHED`, `HOLD_OVER`, ...). */
  readonly holdCode: ApiErrors.HoldCode | undefined
  /** On a 402 `upgrade_required`, where the operator sends a caller to upgrade (`upgrade_url`), when one is set. */
  readonly upgradeUrl: string | undefined
  /** Every field of the envelope's `error`: `resets_at`, `expires_at`, `available_at`, `limit`, `parameter`, `retry_after`, `oldest_since`, `horizon_days`, `upgrade_url`. */
  readonly fields: ErrorFields
  /**
   * True on the 400 `invalid_request` that names `since` and carries `oldest_since`: the `since`
   * is older than the feed's horizon, so this copy
   * cannot be brought up to date by changes; start a full run (`listings.since(null)`), replace
   * the copy with it, and keep that run's `syncedAt`.
   */
  readonly resyncRequired: boolean

  constructor(status: number, fields: ErrorFields) {
    super(fields.message)
    this.status = status
    this.code = fields.code
    this.revealCode = fields.reveal_code
    this.holdCode = fields.hold_code
    this.upgradeUrl = typeof fields.upgrade_url === "string" ? fields.upgrade_url : undefined
    this.fields = fields
    this.resyncRequired = fields.code === "invalid_request" && fields.parameter === "since" && fields.oldest_since !== undefined
  }

  /** The body as sent: `{"error": {...}}`. */
  get envelope(): { readonly error: ErrorFields } {
    return { error: this.fields }
  }
}

/**
 * No usable answer: the network failed (or no answer came in time) on every attempt, or the
 * answer was not the API's (a proxy's error page, a body this client cannot read).
 */
export class DropshelfTransportError extends Error {
  override readonly name = "DropshelfTransportError"
  readonly reason: "network" | "response"
  /** The status of an answer that was not the API's. */
  readonly status: number | undefined

  constructor(reason: "network" | "response", message: string, options: { readonly status?: number | undefined; readonly cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.reason = reason
    this.status = options.status
  }
}

const isEnvelopeFields = (value: unknown): value is ErrorFields =>
  Predicate.isObject(value) && typeof value.code === "string" && typeof value.message === "string"

/** The status a contract error class declares (`httpApiStatus`). */
const declaredStatus = (error: object): number | undefined => {
  const status = Schema.isSchema(error.constructor) ? error.constructor.ast.annotations?.httpApiStatus : undefined
  return typeof status === "number" ? status : undefined
}

/** An answer whose status the contract does not declare for the endpoint: the envelope if it has one. */
const undeclaredAnswer = (error: HttpClientError.HttpClientError) => {
  const response = error.response
  if (response === undefined) return Effect.succeed(new DropshelfTransportError("response", error.message, { cause: error }))
  return response.json.pipe(
    Effect.map((body): Error =>
      Predicate.isObject(body) && isEnvelopeFields(body.error)
        ? new DropshelfError(response.status, body.error)
        : new DropshelfTransportError("response", `HTTP ${response.status}: not an answer of the API`, { status: response.status, cause: error })
    ),
    Effect.orElseSucceed(() =>
      new DropshelfTransportError("response", `HTTP ${response.status}: not an answer of the API`, { status: response.status, cause: error })
    )
  )
}

/** The error a promise rejects with, for the failure of a call. */
export const fromCause = (cause: Cause.Cause<unknown>): Effect.Effect<unknown> => {
  const failure = cause.reasons.find(Cause.isFailReason)
  if (failure === undefined) return Effect.succeed(Cause.squash(cause))
  const error = failure.error
  if (Predicate.isObject(error) && isEnvelopeFields(error.error)) {
    const status = declaredStatus(error)
    if (status !== undefined) return Effect.succeed(new DropshelfError(status, error.error))
  }
  if (HttpClientError.isHttpClientError(error)) {
    switch (error.reason._tag) {
      case "TransportError":
        return Effect.succeed(new DropshelfTransportError("network", error.message, { cause: error }))
      case "DecodeError":
      case "StatusCodeError":
      case "EmptyBodyError":
        return undeclaredAnswer(error)
      default:
        return Effect.succeed(error)
    }
  }
  if (Schema.isSchemaError(error)) {
    return Effect.succeed(new DropshelfTransportError("response", `the answer does not match the API contract: ${error.message}`, { cause: error }))
  }
  return Effect.succeed(error)
}
