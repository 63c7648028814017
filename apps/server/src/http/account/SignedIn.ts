import { Clock, Context, Effect } from "effect"
import { HttpServerRequest, HttpServerResponse, UrlParams } from "effect/http"
import { html } from "@remix-run/html-template"
import { Plan, RateLimiter, Sessions } from "@dropshelf/core"
import * as Pages from "./Pages.ts"
import {
  clearedSessionCookie,
  csrfTokenOf,
  isCsrfToken,
  isSameOrigin,
  PAGE_HEADERS,
  RETURN_COOKIE,
  returnPathOf,
  sessionCookie,
  sessionTokenOf
} from "./Security.ts"

/*
 * What every route of the account area shares: who the signed-in person is, the pages and
 * forms only such a person reaches (a POST also same-origin and with the session's CSRF token,
 * Security.ts), and the person's per-minute ceiling of requests, counted apart from any key's.
 */

/** The account area's settings, from the server's options. */
export class AccountSettings extends Context.Service<AccountSettings, {
  /** The origin people reach the area at (DROPSHELF_PUBLIC_URL); unset: the request's own `Host`. */
  readonly publicUrl: string | undefined
  /** Where a person whose plan lacks a feature may upgrade (DROPSHELF_UPGRADE_URL). */
  readonly upgradeUrl: string | undefined
}>()("@dropshelf/server/AccountSettings") {}

export const page = (body: string, status = 200, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8", headers: { ...PAGE_HEADERS, ...headers } })

export const seeOther = (location: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.empty({ status: 303, headers: { ...PAGE_HEADERS, location, ...headers } })

/**
 * The answer to a sign-in that worked: the session cookie, and the person sent on to the page
 * that sent them to sign in (an application's consent page), else to their overview.
 */
export const signedInTo = (request: HttpServerRequest.HttpServerRequest, sessionToken: string) => {
  const back = returnPathOf(request)
  const response = seeOther(back ?? "/account", { "set-cookie": sessionCookie(sessionToken) })
  return back === undefined
    ? response
    : HttpServerResponse.setCookieUnsafe(response, RETURN_COOKIE, "", { path: "/", secure: true, httpOnly: true, sameSite: "lax", maxAge: 0 })
}

/** A form's fields; a body that is no form reads as empty, and then fails the CSRF check. */
export const formOf = (request: HttpServerRequest.HttpServerRequest) =>
  request.urlParamsBody.pipe(Effect.orElseSucceed(() => UrlParams.empty))

export const field = (form: UrlParams.UrlParams, name: string): string | undefined => {
  const value = UrlParams.getFirst(form, name)
  return value._tag === "Some" ? value.value : undefined
}

/**
 * The rate limiter's counter of a person's requests to the account area: one per account, named
 * apart from the keys' counters, so the website and the API never spend each other's minute.
 */
export const webCounter = (accountId: string): string => `web:${accountId}`

const tooManyRequests = (retryAfter: number, limit: number, signedIn: Pages.SignedIn) =>
  Pages.layout(
    "Too many requests",
    html`<p class="notice bad" role="alert">Your plan allows ${limit} requests a minute in the account area, and this minute's are used.
Try again in ${retryAfter} seconds.</p>`,
    { signedIn }
  )

/** The helpers of the account area's routes; needs `Sessions`, `AccountSettings` and the `RateLimiter`. */
export const make = Effect.gen(function*() {
  const sessions = yield* Sessions.Sessions
  const settings = yield* AccountSettings
  const limiter = yield* RateLimiter.RateLimiter

  /** The signed-in person of this request, or `undefined`. */
  const callerOf = (request: HttpServerRequest.HttpServerRequest) => {
    const token = sessionTokenOf(request)
    if (token === undefined) return Effect.succeed(undefined)
    return sessions.authenticate(token).pipe(
      Effect.map((caller) => ({
        ...caller,
        token,
        signedIn: { accountName: caller.account.name, csrf: csrfTokenOf(token) } satisfies Pages.SignedIn
      })),
      Effect.orElseSucceed(() => undefined)
    )
  }
  type Caller = NonNullable<Effect.Success<ReturnType<typeof callerOf>>>

  /**
   * Counts the request against the account's ceiling, its plan's requests per minute; past it,
   * the 429 page with `Retry-After`, else `undefined`.
   */
  const refusedOverLimit = Effect.fnUntraced(function*(caller: Caller) {
    const rate = yield* limiter.hit(webCounter(caller.account.id), Plan.effectivePlan(caller.account.plan).requestsPerMinute)
    if (rate.allowed) return undefined
    const retryAfter = Math.max(1, Math.ceil((rate.resetAt - (yield* Clock.currentTimeMillis)) / 1000))
    return page(tooManyRequests(retryAfter, rate.limit, caller.signedIn), 429, { "retry-after": String(retryAfter) })
  })

  /** A page for a signed-in person; anyone else is sent to sign in. */
  const signedInPage = <E, R>(
    handler: (caller: Caller, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) =>
    HttpServerRequest.HttpServerRequest.use((request) =>
      Effect.gen(function*() {
        const caller = yield* callerOf(request)
        if (caller === undefined) return seeOther("/signin", { "set-cookie": clearedSessionCookie })
        return (yield* refusedOverLimit(caller)) ?? (yield* handler(caller, request))
      })
    )

  /** A state-changing request of a signed-in person: same-origin, with the session's CSRF token. */
  const signedInForm = <E, R>(
    handler: (caller: Caller, form: UrlParams.UrlParams, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) =>
    HttpServerRequest.HttpServerRequest.use((request) =>
      Effect.gen(function*() {
        const form = yield* formOf(request)
        if (!isSameOrigin(request, settings.publicUrl)) return page(Pages.forbidden(), 403)
        const caller = yield* callerOf(request)
        if (caller === undefined) return seeOther("/signin", { "set-cookie": clearedSessionCookie })
        if (!isCsrfToken(caller.token, field(form, "csrf"))) return page(Pages.forbidden(), 403)
        return (yield* refusedOverLimit(caller)) ?? (yield* handler(caller, form, request))
      })
    )

  return { callerOf, signedInPage, signedInForm }
})

/** A signed-in person as the routes see them: session, account, token and what the layout needs. */
export type SignedInCaller = NonNullable<Effect.Success<ReturnType<Effect.Success<typeof make>["callerOf"]>>>
