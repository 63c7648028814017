import { Clock, Context, Effect, Layer, Result } from "effect"
import type { HttpServerRequest, HttpServerResponse } from "effect/http"
import { type Directory, type Errors, RateLimiter } from "@dropshelf/core"
import { AddressGate, type AddressLimited, refusalOf } from "./AddressGate.ts"
import type { Exchange } from "./Exchange.ts"
import { errorResponse } from "./Refusals.ts"

/*
 * Every keyed request is authenticated and counted here, once (spec, Limits rule 2): by the key
 * middleware before a REST handler runs, by `/mcp` for each POST, and by the boundary for an
 * answer given without either (404, 405, 413, a keyed OPTIONS). The request's `Exchange` records
 * what was decided, so the boundary counts only what nothing else did, and the rate-limit headers
 * it records go on whatever answer the request ends with.
 */

/**
 * The credential of an `Authorization: Bearer <key>` header, read as RFC 9110 (section 11.1)
 * and the framework's key middleware read it: the scheme in any case, then one or more spaces.
 */
export const bearerOf = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined || authorization.length <= 6 || authorization.charCodeAt(6) !== 32) return undefined
  if (authorization.slice(0, 6).toLowerCase() !== "bearer") return undefined
  let start = 7
  while (authorization.charCodeAt(start) === 32) start++
  return start === authorization.length ? undefined : authorization.slice(start)
}

/**
 * The name of the one quota policy in the IETF fields: a key's requests per wall-clock minute
 * (draft-ietf-httpapi-ratelimit-headers-11; docs/decisions/0210-conditional-reads-and-standard-headers.md).
 */
export const RATE_POLICY = "per-minute"

/**
 * The rate-limit headers of a decision: `X-RateLimit-Reset` is Unix seconds, `Retry-After` whole
 * seconds ≥ 1 (on a refusal only), and the IETF `RateLimit-Policy` and `RateLimit` fields say the
 * same in their own terms, the window's end as the same whole seconds as `Retry-After`.
 */
export const rateLimitHeaders = (rate: RateLimiter.RateDecision, now: number): Record<string, string> => {
  const secondsLeft = String(Math.max(1, Math.ceil((rate.resetAt - now) / 1000)))
  const headers: Record<string, string> = {
    "x-ratelimit-limit": String(rate.limit),
    "x-ratelimit-remaining": String(rate.remaining),
    "x-ratelimit-reset": String(Math.ceil(rate.resetAt / 1000)),
    "ratelimit-policy": `"${RATE_POLICY}";q=${rate.limit};w=60`,
    ratelimit: `"${RATE_POLICY}";r=${rate.remaining};t=${secondsLeft}`
  }
  if (!rate.allowed) headers["retry-after"] = secondsLeft
  return headers
}

/** A counted request: the decision and, over the limit, the refusal's fields. */
export interface Counted {
  readonly rate: RateLimiter.RateDecision
  readonly refusal: { readonly code: "rate_limited"; readonly message: string; readonly retry_after: number } | undefined
}

export class Admission extends Context.Service<Admission, {
  /**
   * The caller the exchange's key names, through the address gate (a refused key counts against
   * the address; past its ceiling, the 429's `Retry-After` is recorded for the answer).
   */
  readonly authenticate: (
    exchange: Exchange,
    request: HttpServerRequest.HttpServerRequest
  ) => Effect.Effect<Directory.KeyCaller, Errors.Unauthorized | AddressLimited>
  /**
   * Counts one request of `caller` against its key's window, allowed or not. A POST to `/mcp`
   * counts once more for each later tool call of a batch; its answer tells the lowest remaining.
   */
  readonly count: (exchange: Exchange, caller: Directory.KeyCaller) => Effect.Effect<Counted>
  /** The key's window as it stands, without counting. */
  readonly peek: (caller: Directory.KeyCaller) => Effect.Effect<RateLimiter.RateDecision>
  /** Admits the request uncounted (a 304, the MCP stream probe): the answer tells `rate`, never `Retry-After`. */
  readonly uncounted: (exchange: Exchange, rate: RateLimiter.RateDecision) => Effect.Effect<Record<string, string>>
  /**
   * The boundary's part: an answer to a keyed request that nothing admitted (no handler ran)
   * counts like any other, or, with `spend` false, tells the window uncounted; over the limit it
   * is the 429 any other request would get. A refused key leaves the answer as it is.
   */
  readonly settle: (
    exchange: Exchange,
    request: HttpServerRequest.HttpServerRequest,
    response: HttpServerResponse.HttpServerResponse,
    spend: boolean
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse>
}>()("@dropshelf/server/Admission") {
  /** Needs the `AddressGate` and the `RateLimiter` the key counters use. */
  static readonly layer = Layer.effect(
    Admission,
    Effect.gen(function*() {
      const gate = yield* AddressGate
      const limiter = yield* RateLimiter.RateLimiter

      const authenticate = (exchange: Exchange, request: HttpServerRequest.HttpServerRequest) => {
        exchange.authenticated = "pending"
        return Effect.matchEffect(gate.authenticate(request, exchange.secret), {
          onSuccess: (caller) => {
            exchange.authenticated = { _tag: "Success", caller }
            return Effect.succeed(caller)
          },
          onFailure: (failure) => {
            exchange.authenticated = { _tag: "Failure", failure }
            if (failure._tag === "AddressLimited") exchange.headers = refusalOf(failure).headers
            return Effect.fail(failure)
          }
        })
      }

      const count = Effect.fnUntraced(function*(exchange: Exchange, caller: Directory.KeyCaller) {
        const rate = yield* limiter.hit(caller.key.id, caller.plan.requestsPerMinute)
        const headers = rateLimitHeaders(rate, yield* Clock.currentTimeMillis)
        if (exchange.rate === undefined || rate.remaining <= exchange.rate.remaining) {
          exchange.rate = rate
          exchange.headers = headers
        }
        exchange.admitted = true
        const refusal = rate.allowed ? undefined : {
          code: "rate_limited" as const,
          message: `This key is over its ${rate.limit} requests per minute; retry after ${headers["retry-after"]} s`,
          retry_after: Number(headers["retry-after"])
        }
        return { rate, refusal }
      })

      const uncounted = Effect.fnUntraced(function*(exchange: Exchange, rate: RateLimiter.RateDecision) {
        const { "retry-after": _refusalOnly, ...headers } = rateLimitHeaders(rate, yield* Clock.currentTimeMillis)
        exchange.rate = rate
        exchange.headers = headers
        exchange.admitted = true
        return headers
      })

      const peek = (caller: Directory.KeyCaller) => limiter.peek(caller.key.id, caller.plan.requestsPerMinute)

      const settle = Effect.fnUntraced(function*(
        exchange: Exchange,
        request: HttpServerRequest.HttpServerRequest,
        response: HttpServerResponse.HttpServerResponse,
        spend: boolean
      ) {
        const caller = yield* Effect.result(authenticate(exchange, request))
        if (Result.isFailure(caller)) {
          return caller.failure._tag === "Unauthorized" ? response : errorResponse(429, refusalOf(caller.failure).fields)
        }
        if (!spend) {
          yield* uncounted(exchange, yield* peek(caller.success))
          return response
        }
        const { refusal } = yield* count(exchange, caller.success)
        return refusal === undefined ? response : errorResponse(429, refusal)
      })

      return Admission.of({ authenticate, count, peek, uncounted, settle })
    })
  )
}
