import { Clock, Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { AccountArea, EmailSignIn, Sessions } from "@dropshelf/core"
import { addressOf } from "../AddressGate.ts"
import { type Asset, script, stylesheet } from "./Assets.ts"
import * as EmailPages from "./EmailPages.ts"
import * as Pages from "./Pages.ts"
import { clearedSessionCookie, isCsrfToken, isSameOrigin, sessionTokenOf } from "./Security.ts"
import * as SignedIn from "./SignedIn.ts"
import { AccountSettings, field, formOf, page, seeOther } from "./SignedIn.ts"

/*
 * The account area: server-rendered pages under /account, /signin and /signout, beside the
 * API on the same server, over the core's `Sessions` and `AccountArea`. Only these routes read
 * or set the session cookie. Every POST needs a same-origin request and, once signed in, the
 * session's CSRF token (Security.ts).
 */

export { AccountSettings } from "./SignedIn.ts"

/** The 429 page, with `Retry-After`. */
export const tooManyAttempts = (retryAt: number) =>
  Effect.map(Clock.currentTimeMillis, (now) =>
    page(EmailPages.tooManyAttempts(retryAt, now), 429, { "retry-after": String(Math.max(1, Math.ceil((retryAt - now) / 1000))) }))

/** Every route of the account area and its methods, for the boundary's 405 and `Allow`. */
export const ACCOUNT_PATHS: Readonly<Record<string, ReadonlyArray<string>>> = {
  "/signin": ["GET", "POST"],
  "/signout": ["POST"],
  "/account": ["GET"],
  "/account/keys": ["GET", "POST"],
  "/account/keys/:id/revoke": ["POST"],
  "/account/keys/:id/rotate": ["POST"],
  "/account/sessions/end-all": ["POST"],
  "/account/directory": ["GET"],
  "/account/directory/:id": ["GET"],
  "/account/directory/:id/reveal": ["GET", "POST"],
  "/account/directory/:id/hold": ["POST"],
  "/account/assets/:file": ["GET"]
}

export const served = (asset: Asset) =>
  HttpServerRequest.HttpServerRequest.use((request) =>
    Effect.succeed(
      request.headers["if-none-match"] === asset.etag
        ? HttpServerResponse.empty({ status: 304, headers: { etag: asset.etag } })
        : HttpServerResponse.uint8Array(asset.body, {
          contentType: asset.contentType,
          headers: {
            etag: asset.etag,
            "cache-control": "public, max-age=31536000, immutable",
            "x-content-type-options": "nosniff"
          }
        })
    )
  )

export const AccountRoutes = Layer.unwrap(Effect.gen(function*() {
  const sessions = yield* Sessions.Sessions
  const emailSignIn = yield* EmailSignIn.EmailSignIn
  const area = yield* AccountArea.AccountArea
  const settings = yield* AccountSettings

  /** The email form of the sign-in pages, when mail is set up. */
  const byEmail = () =>
    emailSignIn.mailAvailable ? EmailPages.emailForm({ signUpOpen: emailSignIn.signUpMode === "open" }) : undefined

  const { signedInPage, signedInForm } = yield* SignedIn.make
  type Caller = SignedIn.SignedInCaller

  const apiBaseOf = (request: HttpServerRequest.HttpServerRequest) =>
    settings.publicUrl ?? `http://${request.headers.host ?? "127.0.0.1"}`

  const keysPage = (caller: Caller, options: { readonly refusal?: string; readonly revoked?: string; readonly status?: number } = {}) =>
    Effect.gen(function*() {
      const list = yield* area.keys(caller.account.id).pipe(Effect.orDie)
      const now = yield* Clock.currentTimeMillis
      const overview = yield* area.overview(caller.account.id).pipe(Effect.orDie)
      return page(
        Pages.keys(list, now, caller.signedIn, { liveLimit: overview.plan.liveKeys, refusal: options.refusal, revoked: options.revoked }),
        options.status ?? 200
      )
    })

  return Layer.mergeAll(
    HttpRouter.add("GET", "/signin", HttpServerRequest.HttpServerRequest.use((request) => {
      const token = new URL(request.url, "http://localhost").searchParams.get("token")
      if (token !== null && token !== "") return Effect.succeed(page(Pages.continueSignIn(token)))
      return Effect.succeed(page(Pages.signIn(byEmail())))
    })),
    HttpRouter.add("POST", "/signin", HttpServerRequest.HttpServerRequest.use((request) =>
      Effect.gen(function*() {
        const form = yield* formOf(request)
        if (!isSameOrigin(request, settings.publicUrl)) return page(Pages.forbidden(), 403)
        const redeemed = yield* Effect.result(emailSignIn.redeem(field(form, "token") ?? "", sessionTokenOf(request), addressOf(request)))
        if (redeemed._tag === "Failure") {
          return redeemed.failure._tag === "TooManyAttempts"
            ? yield* tooManyAttempts(redeemed.failure.retryAt)
            : page(Pages.linkInvalid(byEmail()), 400)
        }
        return SignedIn.signedInTo(request, redeemed.success.token)
      })
    )),
    HttpRouter.add("POST", "/signout", HttpServerRequest.HttpServerRequest.use((request) =>
      Effect.gen(function*() {
        const form = yield* formOf(request)
        if (!isSameOrigin(request, settings.publicUrl)) return page(Pages.forbidden(), 403)
        const token = sessionTokenOf(request)
        if (token !== undefined) {
          if (!isCsrfToken(token, field(form, "csrf"))) return page(Pages.forbidden(), 403)
          yield* sessions.signOut(token)
        }
        return seeOther("/signin", { "set-cookie": clearedSessionCookie })
      })
    )),
    HttpRouter.add("GET", "/account", signedInPage((caller) =>
      Effect.map(area.overview(caller.account.id).pipe(Effect.orDie), (view) =>
        page(Pages.overview(view, caller.signedIn, settings.upgradeUrl))))),
    HttpRouter.add("GET", "/account/keys", signedInPage((caller) => keysPage(caller))),
    HttpRouter.add("POST", "/account/keys", signedInForm((caller, form, request) =>
      Effect.gen(function*() {
        const expiry = Pages.EXPIRIES.find(([value]) => value === (field(form, "expires") ?? "never"))
        if (expiry === undefined) return yield* keysPage(caller, { refusal: "Choose when the key expires from the list.", status: 400 })
        const created = yield* Effect.result(area.createKey(caller.account.id, field(form, "name") ?? "", expiry[2]))
        if (created._tag === "Success") {
          return page(Pages.created(created.success.secret, created.success.key, apiBaseOf(request), caller.signedIn))
        }
        const error = created.failure
        switch (error._tag) {
          case "KeyLimitReached":
            return yield* keysPage(caller, {
              refusal: `Your plan allows ${error.limit} live keys, and you have them all. Revoke one to create another.`,
              status: 409
            })
          case "InvalidRequest":
            return yield* keysPage(caller, { refusal: `The key's ${error.message}.`, status: 400 })
          case "AccountNotFound":
            return seeOther("/signin", { "set-cookie": clearedSessionCookie })
        }
      }))),
    HttpRouter.add("POST", "/account/keys/:id/revoke", signedInForm((caller) =>
      Effect.gen(function*() {
        const { id } = yield* HttpRouter.params
        const revoked = yield* Effect.result(area.revokeKey(caller.account.id, id ?? ""))
        if (revoked._tag === "Failure") return yield* keysPage(caller, { refusal: "No such key on your account.", status: 404 })
        return yield* keysPage(caller, { revoked: revoked.success.prefix })
      }))),
    HttpRouter.add("POST", "/account/keys/:id/rotate", signedInForm((caller, _form, request) =>
      Effect.gen(function*() {
        const { id } = yield* HttpRouter.params
        const rotated = yield* Effect.result(area.rotateKey(caller.account.id, id ?? ""))
        if (rotated._tag === "Success") {
          const { key, retired, secret } = rotated.success
          return page(Pages.created(secret, key, apiBaseOf(request), caller.signedIn, retired))
        }
        const error = rotated.failure
        switch (error._tag) {
          case "KeyLimitReached":
            return yield* keysPage(caller, { refusal: `Your plan allows ${error.limit} live keys, and you have them all. Revoke one to rotate another.`, status: 409 })
          case "InvalidRequest":
            return yield* keysPage(caller, { refusal: `${error.message}.`, status: 400 })
          case "KeyNotFound":
            return yield* keysPage(caller, { refusal: "No live key of that name on your account.", status: 404 })
        }
      }))),
    HttpRouter.add("POST", "/account/sessions/end-all", signedInForm((caller) =>
      Effect.gen(function*() {
        yield* sessions.signOutEverywhere(caller.account.id)
        return seeOther("/signin", { "set-cookie": clearedSessionCookie })
      }))),
    HttpRouter.add("GET", "/account/assets/:file", Effect.gen(function*() {
      const { file } = yield* HttpRouter.params
      const path = `/account/assets/${file}`
      if (path === stylesheet.path) return yield* served(stylesheet)
      if (path === script.path) return yield* served(script)
      return page(Pages.layout("Not found", Pages.notFound()), 404)
    }))
  )
}))
