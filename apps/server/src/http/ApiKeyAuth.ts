import { Effect, Exit, Layer, Result } from "effect"
import { HttpServerRequest } from "effect/http"
import type { HttpApiEndpoint } from "effect/http-api"
import { type Directory, type RateLimiter, Spans } from "@dropshelf/core"
import { ApiKeyAuth, CurrentCaller, DropshelfApi } from "@dropshelf/api/Api"
import { RateLimitedError } from "@dropshelf/api/ApiErrors"
import { Admission } from "./Admission.ts"
import { refusalOf } from "./AddressGate.ts"
import { conditionalReadOf, matches, notModified, tagged } from "./Conditional.ts"
import { type Operation, toApiError } from "./ErrorMapping.ts"
import { CurrentExchange, type Exchange } from "./Exchange.ts"

const { domains, holds } = DropshelfApi.groups

/** The endpoints whose 401 carries `SIGN_IN_REQUIRED`, and under which token; any other's is a plain read's. */
const SIGNED_IN_OPERATIONS: ReadonlyMap<HttpApiEndpoint.Top, Operation> = new Map<HttpApiEndpoint.Top, Operation>([
  [domains.endpoints.reveal, "reveal"],
  [domains.endpoints.hold, "hold"],
  [holds.endpoints.extend, "hold"],
  [holds.endpoints.end, "hold"]
])

/**
 * Admits the Bearer key the boundary read (`Admission`: through the address gate, the plan read
 * afresh on every request), then counts the request against the key's window, allowed or not.
 * A 401 happens before counting: there is no key to count, only the address (a 429 past its
 * ceiling, with `Retry-After` alone). The boundary puts the rate-limit headers on whatever
 * response this request ends with, refusals included. Its span captures no stack trace, like the
 * use cases' (docs/decisions/0505-auth-and-request-costs.md).
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
    const admission = yield* Admission

    const counted = Effect.fnUntraced(function*(exchange: Exchange, caller: Directory.KeyCaller) {
      const { rate, refusal } = yield* admission.count(exchange, caller)
      if (refusal !== undefined) return yield* new RateLimitedError({ error: refusal })
      return rate
    })

    return ApiKeyAuth.of({
      // The credential the framework decodes is the exchange's key, read once by the boundary.
      bearer: Effect.fnUntraced(function*(httpEffect, { endpoint }) {
        const exchange = yield* CurrentExchange
        const request = yield* HttpServerRequest.HttpServerRequest
        const authenticated = yield* Effect.result(admission.authenticate(exchange, request))
        if (Result.isFailure(authenticated)) {
          const failure = authenticated.failure
          if (failure._tag === "Unauthorized") return yield* toApiError(failure, SIGNED_IN_OPERATIONS.get(endpoint) ?? "read")
          return yield* new RateLimitedError({ error: refusalOf(failure).fields })
        }
        const caller = authenticated.success
        const serve = (rate: RateLimiter.RateDecision) => Effect.provideService(httpEffect, CurrentCaller, { caller, rate })
        const read = conditionalReadOf(endpoint)
        if (read === undefined) return yield* serve(yield* counted(exchange, caller))
        const ifNoneMatch = request.headers["if-none-match"]
        const peeked = ifNoneMatch === undefined ? undefined : yield* admission.peek(caller)
        if (ifNoneMatch === undefined || peeked === undefined || !peeked.allowed) {
          return tagged(read, yield* serve(yield* counted(exchange, caller))).response
        }
        const unchanged = yield* Effect.exit(serve(peeked))
        if (Exit.isSuccess(unchanged)) {
          const { response, tag } = tagged(read, unchanged.value)
          if (tag !== undefined && matches(ifNoneMatch, tag)) return notModified(tag, yield* admission.uncounted(exchange, peeked))
          const rate = yield* counted(exchange, caller)
          return read.tellsCount ? tagged(read, yield* serve(rate)).response : response
        }
        yield* counted(exchange, caller)
        return yield* unchanged
      }, Spans.span("ApiKeyAuth.bearer"))
    })
  })
)
