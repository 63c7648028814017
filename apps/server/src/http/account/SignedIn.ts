import { Context, Effect } from "effect"
import { HttpServerRequest, HttpServerResponse, UrlParams } from "effect/http"
import { Sessions } from "@dropshelf/core"
import * as Pages from "./Pages.ts"
import { clearedSessionCookie, csrfTokenOf, isCsrfToken, isSameOrigin, PAGE_HEADERS, sessionTokenOf } from "./Security.ts"

/*
 * What every route of the account area shares: who the signed-in person is, and the pages and
 * forms only such a person reaches (a POST also same-origin and with the session's CSRF token,
 * Security.ts).
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

/** A form's fields; a body that is no form reads as empty, and then fails the CSRF check. */
export const formOf = (request: HttpServerRequest.HttpServerRequest) =>
  request.urlParamsBody.pipe(Effect.orElseSucceed(() => UrlParams.empty))

export const field = (form: UrlParams.UrlParams, name: string): string | undefined => {
  const value = UrlParams.getFirst(form, name)
  return value._tag === "Some" ? value.value : undefined
}

/** The helpers of the account area's routes; needs `Sessions` and `AccountSettings`. */
export const make = Effect.gen(function*() {
  const sessions = yield* Sessions.Sessions
  const settings = yield* AccountSettings

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

  /** A page for a signed-in person; anyone else is sent to sign in. */
  const signedInPage = <E, R>(
    handler: (caller: Caller, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) =>
    HttpServerRequest.HttpServerRequest.use((request) =>
      Effect.gen(function*() {
        const caller = yield* callerOf(request)
        if (caller === undefined) return seeOther("/signin", { "set-cookie": clearedSessionCookie })
        return yield* handler(caller, request)
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
        return yield* handler(caller, form, request)
      })
    )

  return { callerOf, signedInPage, signedInForm }
})

/** A signed-in person as the routes see them: session, account, token and what the layout needs. */
export type SignedInCaller = NonNullable<Effect.Success<ReturnType<Effect.Success<typeof make>["callerOf"]>>>
