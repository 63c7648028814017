import { Clock, Effect, Exit, Layer, Redacted, Result } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { type Directory, RateLimiter, Spans } from "@dropshelf/core"
import { ApiKeyAuth, CurrentCaller } from "@dropshelf/api/Api"
import { RateLimitedError } from "@dropshelf/api/ApiErrors"
import { AddressGate, refusalOf } from "./AddressGate.ts"
import { conditionalRead, matches, notModified, tagged } from "./Conditional.ts"
import { type Operation, toApiError } from "./ErrorMapping.ts"

/** Which refusal token a 401 carries: `SIGN_IN_REQUIRED` goes on the reveal and hold endpoints. */
export const operationOf = (group: string, endpoint: string): Operation =>
  group === "domains" && endpoint === "reveal"
    ? "reveal"
    : (group === "domains" && endpoint === "hold") || (group === "holds" && endpoint !== "list")
    ? "hold"
    : "read"

/**
 * The credential of an `Authorization: Bearer <key>` header, read as RFC 9110 (section 11.1)
 * and the framework's key middleware read it: the scheme in any case, then one or more spaces.
 * The REST routes, the boundary and `/mcp` all read the key with it, so they refuse alike.
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

/**
 * Counts a request of `caller` against its key's window: the decision, its headers, and the
 * refusal's fields when over the limit. The key middleware and the boundary (for answers given
 * before any handler) count with it.
 */
export const countRequest = Effect.fnUntraced(function*(limiter: RateLimiter.RateLimiter["Service"], caller: Directory.Caller) {
  const rate = yield* limiter.hit(caller.key.id, caller.plan.requestsPerMinute)
  const headers = rateLimitHeaders(rate, yield* Clock.currentTimeMillis)
  const refusal = rate.allowed ? undefined : {
    code: "rate_limited" as const,
    message: `This key is over its ${rate.limit} requests per minute; retry after ${headers["retry-after"]} s`,
    retry_after: Number(headers["retry-after"])
  }
  return { rate, headers, refusal }
})

/**
 * Authenticates the Bearer key through the address gate (the plan is read afresh on every
 * request), then counts the request against the key's window, allowed or not. A 401 happens
 * before counting: there is no key to count, only the address (a 429 past its ceiling, with
 * `Retry-After` alone). The rate-limit headers are attached to whatever response this request
 * ends with, refusals included. Its span captures no stack trace, like the use cases'
 * (docs/decisions/0505-auth-and-request-costs.md).
 *
 * A conditional read (`If-None-Match` on a read that carries an `ETag`) is counted only once its
 * answer is known not to be 304: the window is peeked, the body made as it would read without
 * this request counted (`/me` tells what is left), and a matching tag is answered 304 uncounted.
 * Otherwise the request is counted and answered as any other; `/me`, whose body tells the count,
 * is made again after it. A key whose window is spent gets the 429, conditional or not.
 */
export const ApiKeyAuthLive = Layer.effect(
  ApiKeyAuth,
  Effect.gen(function*() {
    const gate = yield* AddressGate
    const limiter = yield* RateLimiter.RateLimiter

    const counted = Effect.fnUntraced(function*(caller: Directory.Caller) {
      const { headers, rate, refusal } = yield* countRequest(limiter, caller)
      yield* HttpEffect.appendPreResponseHandler((_request, response) =>
        Effect.succeed(HttpServerResponse.setHeaders(response, headers))
      )
      if (refusal !== undefined) return yield* new RateLimitedError({ error: refusal })
      return rate
    })

    return ApiKeyAuth.of({
      bearer: Effect.fnUntraced(function*(httpEffect, { credential, endpoint, group }) {
        const secret = Redacted.value(credential)
        const request = yield* HttpServerRequest.HttpServerRequest
        const authenticated = yield* Effect.result(gate.authenticate(request, secret === "" ? undefined : secret))
        if (Result.isFailure(authenticated)) {
          const failure = authenticated.failure
          if (failure._tag === "Unauthorized") return yield* toApiError(failure, operationOf(group.identifier, endpoint.identifier))
          const refusal = refusalOf(failure)
          yield* HttpEffect.appendPreResponseHandler((_request, response) =>
            Effect.succeed(HttpServerResponse.setHeaders(response, refusal.headers))
          )
          return yield* new RateLimitedError({ error: refusal.fields })
        }
        const caller = authenticated.success
        const read = conditionalRead(group.identifier, endpoint.identifier)
        const serve = (rate: RateLimiter.RateDecision) => Effect.provideService(httpEffect, CurrentCaller, { caller, rate })
        if (read === undefined) return yield* serve(yield* counted(caller))
        const ifNoneMatch = request.headers["if-none-match"]
        const peeked = ifNoneMatch === undefined ? undefined : yield* limiter.peek(caller.key.id, caller.plan.requestsPerMinute)
        if (ifNoneMatch === undefined || peeked === undefined || !peeked.allowed) {
          return tagged(read, yield* serve(yield* counted(caller))).response
        }
        const unchanged = yield* Effect.exit(serve(peeked))
        if (Exit.isSuccess(unchanged)) {
          const { response, tag } = tagged(read, unchanged.value)
          if (tag !== undefined && matches(ifNoneMatch, tag)) {
            return notModified(tag, rateLimitHeaders(peeked, yield* Clock.currentTimeMillis))
          }
          const rate = yield* counted(caller)
          return read === "account.me" ? tagged(read, yield* serve(rate)).response : response
        }
        yield* counted(caller)
        return yield* unchanged
      }, Spans.span("ApiKeyAuth.bearer"))
    })
  })
)
