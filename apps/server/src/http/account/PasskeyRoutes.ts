import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse, type UrlParams } from "effect/http"
import { Passkeys, type WebAuthn } from "@dropshelf/core"
import { addressOf } from "../AddressGate.ts"
import { served, tooManyAttempts } from "./AccountRoutes.ts"
import { AccountSettings, field, formOf, make as makeGuards, page, signedInTo, type SignedInCaller as Caller } from "./SignedIn.ts"
import * as Pages from "./Pages.ts"
import { passkeyScript, webAuthnBrowser } from "./PasskeyAssets.ts"
import * as PasskeyPages from "./PasskeyPages.ts"
import { isSameOrigin, PAGE_HEADERS, sessionTokenOf } from "./Security.ts"

/*
 * Passkeys in the account area, over the core's `Passkeys`: the page listing them, the two
 * ceremonies' steps (options as JSON for the passkey script, then the answer as a form post),
 * and deleting one. Every POST is same-origin; those of a signed-in person carry the session's
 * CSRF token too, the script's JSON requests included.
 */

/** Every route here and its methods, for the boundary's 405 and `Allow`. */
export const PASSKEY_PATHS: Readonly<Record<string, ReadonlyArray<string>>> = {
  "/account/passkeys": ["GET", "POST"],
  "/account/passkeys/options": ["POST"],
  "/account/passkeys/:id/delete": ["POST"],
  "/signin/passkey": ["POST"],
  "/signin/passkey/options": ["POST"]
}

const json = (body: unknown) => HttpServerResponse.jsonUnsafe(body, { headers: PAGE_HEADERS })

/** The authenticator's answer as the script sent it: JSON text in a form field. */
const responseOf = (form: UrlParams.UrlParams): unknown => {
  try {
    return JSON.parse(field(form, "response") ?? "")
  } catch {
    return undefined
  }
}

export const PasskeyRoutes = Layer.unwrap(Effect.gen(function*() {
  const passkeys = yield* Passkeys.Passkeys
  const settings = yield* AccountSettings
  const { signedInForm, signedInPage } = yield* makeGuards

  /**
   * Who a ceremony is for: DROPSHELF_PUBLIC_URL's host and origin, else the request's `Host`
   * over either scheme, the same rule as the same-origin check.
   */
  const relyingPartyOf = (request: HttpServerRequest.HttpServerRequest): WebAuthn.RelyingParty => {
    if (settings.publicUrl !== undefined) {
      const url = new URL(settings.publicUrl)
      return { id: url.hostname, name: "dropshelf", origins: [url.origin] }
    }
    const host = request.headers.host ?? "127.0.0.1"
    let id = "127.0.0.1"
    try {
      id = new URL(`http://${host}`).hostname
    } catch {
      // A Host that is no host: no origin will match it.
    }
    return { id, name: "dropshelf", origins: [`http://${host}`, `https://${host}`] }
  }

  const listPage = (caller: Caller, options: { readonly refusal?: string; readonly notice?: string; readonly status?: number } = {}) =>
    Effect.map(passkeys.list(caller.account.id), (list) => page(PasskeyPages.passkeys(list, caller.signedIn, options), options.status ?? 200))

  return Layer.mergeAll(
    HttpRouter.add("GET", "/account/passkeys", signedInPage((caller) => listPage(caller))),
    HttpRouter.add("POST", "/account/passkeys/options", signedInForm((caller, _form, request) =>
      Effect.map(passkeys.beginRegistration(caller, relyingPartyOf(request)), json))),
    HttpRouter.add("POST", "/account/passkeys", signedInForm((caller, form, request) =>
      Effect.gen(function*() {
        const added = yield* Effect.result(passkeys.finishRegistration(caller, relyingPartyOf(request), {
          challengeId: field(form, "challenge") ?? "",
          name: field(form, "name") ?? "",
          response: responseOf(form)
        }))
        if (added._tag === "Success") return yield* listPage(caller, { notice: `Passkey "${added.success.name}" is added.` })
        return yield* listPage(caller, {
          refusal: added.failure._tag === "InvalidRequest"
            ? `The passkey's ${added.failure.message}.`
            : "The passkey could not be added: the attempt was too old, already used, or not verified. Try again.",
          status: 400
        })
      }))),
    HttpRouter.add("POST", "/account/passkeys/:id/delete", signedInForm((caller) =>
      Effect.gen(function*() {
        const { id } = yield* HttpRouter.params
        const removed = yield* Effect.result(passkeys.remove(caller.account.id, id ?? ""))
        if (removed._tag === "Failure") return yield* listPage(caller, { refusal: "No such passkey on your account.", status: 404 })
        return yield* listPage(caller, { notice: `Passkey "${removed.success.name}" is deleted.` })
      }))),
    HttpRouter.add("POST", "/signin/passkey/options", HttpServerRequest.HttpServerRequest.use((request) =>
      isSameOrigin(request, settings.publicUrl)
        ? passkeys.beginAuthentication(relyingPartyOf(request), addressOf(request)).pipe(
          Effect.map(json),
          Effect.catchTag("TooManyAttempts", (refused) => tooManyAttempts(refused.retryAt))
        )
        : Effect.succeed(page(Pages.forbidden(), 403)))),
    HttpRouter.add("POST", "/signin/passkey", HttpServerRequest.HttpServerRequest.use((request) =>
      Effect.gen(function*() {
        const form = yield* formOf(request)
        if (!isSameOrigin(request, settings.publicUrl)) return page(Pages.forbidden(), 403)
        const signedIn = yield* Effect.result(passkeys.finishAuthentication(
          relyingPartyOf(request),
          { challengeId: field(form, "challenge") ?? "", response: responseOf(form) },
          sessionTokenOf(request)
        ))
        if (signedIn._tag === "Failure") return page(PasskeyPages.signInRefused(), 400)
        return signedInTo(request, signedIn.success.token)
      }))),
    ...[webAuthnBrowser, passkeyScript].map((asset) => HttpRouter.add("GET", asset.path as `/${string}`, served(asset)))
  )
}))
