import { Context, Effect } from "effect"
import { HttpRouter } from "effect/http"
import type { Directory, Errors, RateLimiter } from "@dropshelf/core"
import type { AddressLimited } from "./AddressGate.ts"

/**
 * One request as the edge sees it, made by the boundary around every route: its id, the key its
 * `Authorization` header carries (read there, once), the route the router matched, and how the
 * key was admitted (`Admission.ts`), so that each is decided once and read by whoever needs it.
 */
export class Exchange {
  /** The route template the router matched (`/api/v1/domains/:id`); none while no route has. */
  route: string | undefined = undefined
  /** The key's authentication, once tried; `pending` while it runs (a defect leaves it so). */
  authenticated: "pending" | AuthenticationOutcome | undefined = undefined
  /** Whether the key's window was counted or peeked for this request: the boundary counts it otherwise. */
  admitted = false
  /** The key's window as the answer tells it: the lowest remaining of the counts this request made. */
  rate: RateLimiter.RateDecision | undefined = undefined
  /** The headers that tell it (or, past the address's ceiling, its `Retry-After`), for the answer. */
  headers: Record<string, string> | undefined = undefined
  readonly requestId: string
  /** The key of `Authorization: Bearer <key>`, if the request sent one. */
  readonly secret: string | undefined
  constructor(requestId: string, secret: string | undefined) {
    this.requestId = requestId
    this.secret = secret
  }
}

export type AuthenticationOutcome =
  | { readonly _tag: "Success"; readonly caller: Directory.KeyCaller }
  | { readonly _tag: "Failure"; readonly failure: Errors.Unauthorized | AddressLimited }

/** This request's exchange, provided by the boundary; outside one (a unit test), an exchange without a key. */
export const CurrentExchange = Context.Reference<Exchange>("@dropshelf/server/Exchange", {
  defaultValue: () => new Exchange("", undefined)
})

/** Tells the exchange which route the router matched, from inside it (`HttpRouter.RouteContext` exists only there). */
export const RecordRoute = HttpRouter.middleware((httpEffect) =>
  Effect.withFiber((fiber) => {
    Context.get(fiber.context, CurrentExchange).route = Context.getUnsafe(fiber.context, HttpRouter.RouteContext).route.path
    return httpEffect
  })
)
