import { Clock, Context, Data, Effect, Layer, Option, Result } from "effect"
import type { HttpServerRequest } from "effect/http"
import { IpNetwork, NetAddress } from "effect/net"
import { ApiKey, Directory, Errors, RateLimiter } from "@dropshelf/core"
import { AccessTokens } from "./AccessTokens.ts"
import { pathnameOf } from "./Refusals.ts"

/*
 * Every path that reads a key (the REST key middleware, the boundary's answers given before a
 * handler, `/mcp`) authenticates through this gate. A refused key (a 401) is counted against the
 * client's address in the `RateLimiter` (so with Redis the count is shared by every instance);
 * past the ceiling the address is answered 429 until the window turns, without looking any key
 * up, a valid one included (docs/decisions/0009-keys-and-refused-requests.md).
 */

/** Refused keys an address may send in one wall-clock minute (`DROPSHELF_AUTH_FAILURES_PER_MINUTE`). */
export const DEFAULT_AUTH_FAILURES_PER_MINUTE = 30

/** The rate limiter's counter for an address. Key ids are `key_` and letters or digits, so no key shares it. */
export const addressCounter = (address: string): string => `address:${address}`

/**
 * The address a request counts under: its peer's (behind trusted proxies, the client they name;
 * see `Server.Options.trustedProxies`), an IPv4-mapped one as IPv4, and IPv6 by its /64, the
 * block one subscriber is usually given.
 */
export const addressOf = (request: HttpServerRequest.HttpServerRequest): string => {
  const remote = Option.getOrUndefined(request.remoteAddress)
  if (remote === undefined) return "unknown"
  const parsed = NetAddress.ipFromString(remote)
  if (Result.isFailure(parsed)) return remote
  const address = NetAddress.toCanonical(parsed.success)
  return NetAddress.isIpv6Address(address)
    ? IpNetwork.format(IpNetwork.fromAddressUnsafe(address, 64))
    : NetAddress.formatIp(address)
}

/** The address is over its ceiling of refused keys until the window turns. */
export class AddressLimited extends Data.TaggedError("AddressLimited")<{
  readonly limit: number
  /** Whole seconds, at least 1, until the window turns. */
  readonly retryAfter: number
}> {}

/** The 429's envelope fields and headers: `Retry-After`, and no `X-RateLimit-*` (there is no key to speak for). */
export const refusalOf = (limited: AddressLimited) => ({
  fields: {
    code: "rate_limited" as const,
    message: `Over ${limited.limit} requests a minute from this address without a valid API key; retry after ${limited.retryAfter} s`,
    retry_after: limited.retryAfter
  },
  headers: { "retry-after": String(limited.retryAfter) }
})

/** Addresses known to be over the ceiling are remembered up to this many; past it the shared count still refuses them. */
const MAX_REMEMBERED = 100_000

/**
 * A refusal for want of a key, when an `Authorization` header did come: it says what was wrong
 * with the header (a key without `Bearer `, another scheme), never quoting the credential.
 */
const withoutScheme = (failure: Errors.Unauthorized, secret: string | undefined, authorization: string | undefined) => {
  const sent = authorization?.trim() ?? ""
  if (secret !== undefined || sent === "") return failure
  if (/^(dsk_|ds_live_)/.test(sent)) {
    return new Errors.Unauthorized({ message: "The API key was sent without its scheme: send Authorization: Bearer <API_KEY>, with the word Bearer and a space before the key" })
  }
  const scheme = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}$/.exec(sent.split(/\s+/)[0] ?? "")?.[0]
  if (scheme !== undefined && sent.includes(" ") && scheme.toLowerCase() !== "bearer") {
    return new Errors.Unauthorized({ message: `Authorization uses the ${scheme} scheme; this API takes Authorization: Bearer <API_KEY>` })
  }
  return new Errors.Unauthorized({ message: "Authorization carries no Bearer key: send Authorization: Bearer <API_KEY>" })
}

export class AddressGate extends Context.Service<AddressGate, {
  /**
   * `Directory.authenticate`, unless the request's address is over its ceiling of refused keys
   * (then no key is looked up); a refusal counts against the address.
   */
  readonly authenticate: (
    request: HttpServerRequest.HttpServerRequest,
    secret: string | undefined
  ) => Effect.Effect<Directory.KeyCaller, Errors.Unauthorized | AddressLimited>
}>()("@dropshelf/server/AddressGate") {
  /** Needs `Directory` and the `RateLimiter` the key counters use. */
  static readonly layer = (failuresPerMinute: number) =>
    Layer.effect(
      AddressGate,
      Effect.gen(function*() {
        const directory = yield* Directory.Directory
        const limiter = yield* RateLimiter.RateLimiter
        const tokens = yield* Effect.serviceOption(AccessTokens)
        /** A key, or where the path takes them, an access token. */
        const callerOf = (request: HttpServerRequest.HttpServerRequest, secret: string | undefined) =>
          (secret !== undefined && tokens._tag === "Some" && !ApiKey.isWellFormedKey(secret)
            ? tokens.value.callerAt(pathnameOf(request.url), secret)
            : undefined) ?? directory.authenticate(secret)
        // Addresses over the ceiling and when their window turns: answered here, with no count
        // and no look-up. Another instance learns it from its own next refusal (the count is shared).
        const over = new Map<string, number>()
        const remember = (address: string, until: number, now: number) => {
          if (over.size >= MAX_REMEMBERED) for (const [known, end] of over) if (end <= now) over.delete(known)
          if (over.size < MAX_REMEMBERED) over.set(address, until)
        }
        const limited = (until: number, now: number) =>
          new AddressLimited({ limit: failuresPerMinute, retryAfter: Math.max(1, Math.ceil((until - now) / 1000)) })

        return AddressGate.of({
          authenticate: Effect.fnUntraced(function*(request, secret) {
            const address = addressOf(request)
            const until = over.get(address)
            if (until !== undefined) {
              const now = yield* Clock.currentTimeMillis
              if (until > now) return yield* limited(until, now)
              over.delete(address)
            }
            const authenticated = yield* Effect.result(callerOf(request, secret))
            if (Result.isSuccess(authenticated)) return authenticated.success
            const count = yield* limiter.hit(addressCounter(address), failuresPerMinute)
            if (count.allowed) return yield* withoutScheme(authenticated.failure, secret, request.headers.authorization)
            const now = yield* Clock.currentTimeMillis
            remember(address, count.resetAt, now)
            return yield* limited(count.resetAt, now)
          })
        })
      })
    )
}
