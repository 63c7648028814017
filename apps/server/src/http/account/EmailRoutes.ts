import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { EmailSignIn } from "@dropshelf/core"
import { addressOf } from "../AddressGate.ts"
import { tooManyAttempts } from "./AccountRoutes.ts"
import { AccountSettings, field, formOf, page } from "./SignedIn.ts"
import * as EmailPages from "./EmailPages.ts"
import * as Pages from "./Pages.ts"
import { isSameOrigin } from "./Security.ts"

/*
 * Email sign-in (`POST /signin/email`, the form on `/signin`) and self sign-up (`/signup`),
 * over the core's `EmailSignIn`. Their forms need no session, so no CSRF token: a same-origin
 * request only. The answer to a request is one page, whatever the address.
 */

/** These routes and their methods, for the boundary's 405 and `Allow`. */
export const EMAIL_PATHS: Readonly<Record<string, ReadonlyArray<string>>> = {
  "/signin/email": ["POST"],
  "/signup": ["GET", "POST"]
}

const ENTER_AN_ADDRESS = "Enter an email address, such as name@example.com."

export const EmailRoutes = Layer.unwrap(Effect.gen(function*() {
  const emailSignIn = yield* EmailSignIn.EmailSignIn
  const settings = yield* AccountSettings
  const signUpOpen = emailSignIn.signUpMode === "open"

  return Layer.mergeAll(
    HttpRouter.add("POST", "/signin/email", HttpServerRequest.HttpServerRequest.use((request) =>
      Effect.gen(function*() {
        const form = yield* formOf(request)
        if (!isSameOrigin(request, settings.publicUrl)) return page(Pages.forbidden(), 403)
        const email = field(form, "email") ?? ""
        const asked = yield* Effect.result(emailSignIn.requestLink(email, addressOf(request)))
        if (asked._tag === "Success") return page(EmailPages.linkSent(email.trim()))
        switch (asked.failure._tag) {
          case "InvalidRequest":
            return page(Pages.signIn(EmailPages.emailForm({ email, error: ENTER_AN_ADDRESS, signUpOpen })), 400)
          case "TooManyAttempts":
            return yield* tooManyAttempts(asked.failure.retryAt)
          case "MailUnavailable":
            return page(EmailPages.mailUnavailable(), 404)
        }
      })
    )),
    HttpRouter.add("GET", "/signup", Effect.succeed(page(EmailPages.signUp(emailSignIn.signUpMode, emailSignIn.mailAvailable)))),
    HttpRouter.add("POST", "/signup", HttpServerRequest.HttpServerRequest.use((request) =>
      Effect.gen(function*() {
        const form = yield* formOf(request)
        if (!isSameOrigin(request, settings.publicUrl)) return page(Pages.forbidden(), 403)
        const email = field(form, "email") ?? ""
        const name = field(form, "name")
        const signedUp = yield* Effect.result(emailSignIn.signUp({ email, name }, addressOf(request)))
        if (signedUp._tag === "Success") return page(EmailPages.signUpSent(email.trim()))
        const error = signedUp.failure
        switch (error._tag) {
          case "InvalidRequest":
            return page(
              EmailPages.signUp(emailSignIn.signUpMode, emailSignIn.mailAvailable, {
                email,
                name: name ?? "",
                ...(error.parameter === "name" ? { nameError: `The account ${error.message}.` } : { error: ENTER_AN_ADDRESS })
              }),
              400
            )
          case "TooManyAttempts":
            return yield* tooManyAttempts(error.retryAt)
          case "SignUpClosed":
            return page(EmailPages.signUp(emailSignIn.signUpMode, emailSignIn.mailAvailable), 403)
        }
      })
    ))
  )
}))
