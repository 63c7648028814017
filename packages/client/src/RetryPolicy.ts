import { Clock, Duration, Effect, Random, Result, Stream } from "effect"
import { Headers, HttpClient, HttpClientError, type HttpClientRequest, HttpClientResponse } from "effect/http"
import { parseList } from "structured-headers"

/*
 * When the client sends a request again: the API's retry table (429 after the wait the server
 * names, 5xx with backoff, nothing else) plus the network failing before any answer. Applied
 * below the typed client, so a retry re-sends the very request built for the call: the same
 * body and the same `Idempotency-Key`.
 */

export interface Options {
  /** Retries after the first attempt; `0` sends every request once. Default 4. */
  readonly maxRetries?: number | undefined
  /** First backoff delay, doubled on each retry (5xx and network failures). Default 500 ms. */
  readonly baseDelayMs?: number | undefined
  /** Ceiling of one backoff delay. Default 20 s. */
  readonly maxDelayMs?: number | undefined
  /**
   * Longest wait the client accepts from the server (`Retry-After`, or the `t` of an exhausted
   * `RateLimit` policy). A longer one is not waited out: the 429 (or 503) is answered at once.
   * Default 60 s, one rate-limit window.
   */
  readonly maxWaitMs?: number | undefined
  /** Told of every retry before its wait, for logging. */
  readonly onRetry?: ((retry: Retry) => void) | undefined
}

export type Reason = "rate-limited" | "server-error" | "network"

export interface Retry {
  /** 1 for the first retry. */
  readonly attempt: number
  readonly delayMs: number
  readonly reason: Reason
  /** The status answered, absent when the network failed. */
  readonly status?: number | undefined
  readonly method: string
  readonly url: string
}

export interface Policy {
  readonly maxRetries: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  readonly maxWaitMs: number
}

export const DEFAULTS: Policy = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 20_000, maxWaitMs: 60_000 }

const nonNegative = (value: number | undefined, fallback: number) =>
  value !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback

export const policyOf = (options: Options | undefined): Policy => ({
  maxRetries: Math.floor(nonNegative(options?.maxRetries, DEFAULTS.maxRetries)),
  baseDelayMs: nonNegative(options?.baseDelayMs, DEFAULTS.baseDelayMs),
  maxDelayMs: nonNegative(options?.maxDelayMs, DEFAULTS.maxDelayMs),
  maxWaitMs: nonNegative(options?.maxWaitMs, DEFAULTS.maxWaitMs)
})

/** Response headers by lower-case name. */
export type HeaderValues = { readonly [name: string]: string | undefined }

/** `Retry-After` (seconds or an HTTP date) as milliseconds from `now`; undefined when absent or unreadable. */
export const retryAfterMs = (headers: HeaderValues, now: number): number | undefined => {
  const value = headers["retry-after"]
  if (value === undefined) return undefined
  const parsed = Headers.parseRetryAfter(value)
  return Result.isSuccess(parsed) ? Duration.toMillis(Headers.retryAfterDelay(parsed.success, now)) : undefined
}

/**
 * From the IETF `RateLimit` field (draft-ietf-httpapi-ratelimit-headers: a list of policies,
 * each with `r`, the units remaining, and `t`, the seconds until its quota resets): the longest
 * `t` among the policies with nothing remaining, in milliseconds. Undefined when the field is
 * absent, unreadable or names no exhausted policy.
 */
export const rateLimitResetMs = (headers: HeaderValues): number | undefined => {
  const value = headers["ratelimit"]
  if (value === undefined) return undefined
  let members
  try {
    members = parseList(value)
  } catch {
    return undefined
  }
  let longest: number | undefined
  for (const [, parameters] of members) {
    const remaining = parameters.get("r")
    const reset = parameters.get("t")
    if (remaining === 0 && typeof reset === "number" && Number.isInteger(reset) && reset >= 0) {
      longest = Math.max(longest ?? 0, reset * 1000)
    }
  }
  return longest
}

/** The answer of one attempt, as far as retrying is concerned. */
export type Outcome =
  | { readonly _tag: "Answered"; readonly status: number; readonly headers: HeaderValues }
  | { readonly _tag: "NetworkFailed" }

export interface Decision {
  readonly delayMs: number
  readonly reason: Reason
}

/** Exponential, capped, with the upper half jittered so that clients refused together spread out. */
const backoffMs = (policy: Policy, retriesSoFar: number, random: number) => {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retriesSoFar)
  return Math.round(ceiling / 2 + (ceiling / 2) * random)
}

/**
 * Whether to send again after `outcome`, and after how long; undefined when the outcome is
 * final. A 4xx other than 429 is always final (the request itself is refused), and so is any
 * answer once `maxRetries` retries were made.
 */
export const decide = (
  policy: Policy,
  outcome: Outcome,
  retriesSoFar: number,
  now: number,
  random: number
): Decision | undefined => {
  if (retriesSoFar >= policy.maxRetries) return undefined
  if (outcome._tag === "NetworkFailed") return { delayMs: backoffMs(policy, retriesSoFar, random), reason: "network" }
  const { headers, status } = outcome
  if (status === 429) {
    const told = retryAfterMs(headers, now) ?? rateLimitResetMs(headers)
    const delayMs = told ?? backoffMs(policy, retriesSoFar, random)
    return delayMs <= policy.maxWaitMs ? { delayMs, reason: "rate-limited" } : undefined
  }
  if (status >= 500) {
    const told = retryAfterMs(headers, now)
    if (told !== undefined && told > policy.maxWaitMs) return undefined
    return { delayMs: Math.max(told ?? 0, backoffMs(policy, retriesSoFar, random)), reason: "server-error" }
  }
  return undefined
}

const isNetworkFailure = (error: unknown) =>
  HttpClientError.isHttpClientError(error) && error.reason._tag === "TransportError"

const stalled = (request: HttpClientRequest.HttpClientRequest, timeoutMs: number, what: string) =>
  new HttpClientError.HttpClientError({
    reason: new HttpClientError.TransportError({ request, description: `${what} within ${timeoutMs} ms` })
  })

/** Whether an answer is a stream to be read as it arrives (the bulk snapshot's NDJSON), not a document. */
const isStream = (response: HttpClientResponse.HttpClientResponse) =>
  (response.headers["content-type"] ?? "").toLowerCase().startsWith("application/x-ndjson")

/**
 * The answer with its body read within the attempt: a document whole (it is small), a stream
 * as it arrives, failing once no byte has come for `timeoutMs` (an idle bound: a snapshot may
 * rightly take minutes) or the attempt has lasted until `streamDeadline` (a total bound: a
 * server or proxy trickling a byte now and then would otherwise keep the caller for ever).
 */
const readWithin = (request: HttpClientRequest.HttpClientRequest, timeoutMs: number, streamTimeoutMs: number, streamDeadline: number) =>
(response: HttpClientResponse.HttpClientResponse) => {
  const rebuilt = (body: ConstructorParameters<typeof Response>[0]) =>
    HttpClientResponse.fromWeb(request, new Response(body, { status: response.status, headers: response.headers }))
  if (isStream(response)) {
    const idle = Stream.timeoutOrElse(response.stream, {
      duration: Duration.millis(timeoutMs),
      orElse: () => Stream.fail(stalled(request, timeoutMs, "no byte of the answer's body"))
    })
    const overdue = Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sleep(Duration.millis(Math.max(0, streamDeadline - now)))).pipe(
      Effect.andThen(Effect.fail(stalled(request, streamTimeoutMs, "not the whole streamed answer")))
    )
    return Effect.succeed(rebuilt(Stream.toReadableStream(Stream.interruptWhen(idle, overdue))))
  }
  return Effect.map(response.arrayBuffer, (bytes) => rebuilt(bytes.byteLength === 0 ? null : bytes))
}

/**
 * Each attempt ends after `timeoutMs` without its whole answer (its request is aborted), as a
 * network failure, so the retries treat it like a dropped connection: a document's body must
 * arrive whole within that time, however its bytes come. A stream (the bulk snapshot) is read
 * by the caller after the attempt: it fails once no byte has come for `timeoutMs`, and once
 * `streamTimeoutMs` have passed since the attempt began, whatever still arrives.
 */
export const withTimeout = (timeoutMs: number, streamTimeoutMs: number) => <E, R>(client: HttpClient.HttpClient.With<E, R>) =>
  HttpClient.transform(client, (send, request) =>
    Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
      Effect.timeoutOrElse(Effect.flatMap(send, readWithin(request, timeoutMs, streamTimeoutMs, startedAt + streamTimeoutMs)), {
        duration: Duration.millis(timeoutMs),
        orElse: () => Effect.fail(stalled(request, timeoutMs, "no answer"))
      })))

/** Sends each request again while `decide` says so, waiting the delay it names. */
export const withRetries = (options?: Options) => <E, R>(client: HttpClient.HttpClient.With<E, R>) => {
  const policy = policyOf(options)
  return HttpClient.transform(client, (send, request) =>
    Effect.gen(function*() {
      for (let retries = 0;; retries++) {
        const attempt = yield* Effect.result(send)
        const outcome: Outcome | undefined = Result.isSuccess(attempt)
          ? { _tag: "Answered", status: attempt.success.status, headers: attempt.success.headers }
          : isNetworkFailure(attempt.failure)
          ? { _tag: "NetworkFailed" }
          : undefined
        if (outcome === undefined) return yield* Effect.fromResult(attempt)
        const decision = decide(policy, outcome, retries, yield* Clock.currentTimeMillis, yield* Random.next)
        if (decision === undefined) return yield* Effect.fromResult(attempt)
        if (Result.isSuccess(attempt)) yield* discardBody(attempt.success)
        options?.onRetry?.({
          attempt: retries + 1,
          delayMs: decision.delayMs,
          reason: decision.reason,
          status: outcome._tag === "Answered" ? outcome.status : undefined,
          method: request.method,
          url: request.url
        })
        yield* Effect.sleep(Duration.millis(decision.delayMs))
      }
    }))
}

/** Reads away the body of an answer that will not be used, so its connection is free again. */
const discardBody = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.ignore(response.arrayBuffer)
