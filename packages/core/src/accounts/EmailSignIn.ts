import { Clock, Context, Effect, FiberSet, Layer, Option, Result, Schema } from "effect"
import { Digest } from "effect/crypto"
import * as Email from "../domain/Email.ts"
import { InvalidRequest, type SignInLinkInvalid } from "../domain/errors.ts"
import { storable } from "../domain/Text.ts"
import { MINUTE } from "../domain/Time.ts"
import { type AccountRecord, AccountStore } from "../ports/AccountStore.ts"
import { type RateDecision, RateLimiter } from "../ports/RateLimiter.ts"
import { SignInMail } from "../ports/SignInMail.ts"
import { makeIssueSignInLink, type SignedIn, Sessions } from "./Sessions.ts"

/*
 * Signing in by a link mailed to the owner's address, self sign-up, and the limits on both and
 * on spending links (docs/decisions/0803-sign-in-attempts.md). Nothing the caller is told, nor
 * how long the answer takes, depends on whether an address has an account: the look-up, the
 * account's creation and the mail happen after the answer, in the background.
 */

/** Who may create an account themselves (DROPSHELF_SIGNUP): anyone with an address, nobody without an operator's link, or nobody. */
export type SignUpMode = "open" | "invite" | "off"
export const SIGN_UP_MODES: ReadonlyArray<SignUpMode> = ["open", "invite", "off"]

export const SignUpPolicy = Context.Reference<SignUpMode>("@dropshelf/core/SignUpPolicy", { defaultValue: () => "invite" })

/** How many link requests and bad links are admitted per window, per client address and per email address. */
export interface AttemptLimits {
  readonly windowMs: number
  /** Sign-in and sign-up requests from one client address. */
  readonly requestsPerAddress: number
  /** Sign-in and sign-up requests naming one email address, whoever sends them. */
  readonly requestsPerEmail: number
  /** Unknown, used or expired links sent from one client address. */
  readonly badLinksPerAddress: number
  /** Passkey sign-in ceremonies begun from one client address: each stores a challenge. */
  readonly passkeySignInsPerAddress: number
}

export const DEFAULT_ATTEMPT_LIMITS: AttemptLimits = {
  windowMs: 15 * MINUTE,
  requestsPerAddress: 10,
  requestsPerEmail: 3,
  badLinksPerAddress: 10,
  passkeySignInsPerAddress: 30
}

export const SignInAttemptLimits = Context.Reference<AttemptLimits>("@dropshelf/core/SignInAttemptLimits", {
  defaultValue: () => DEFAULT_ATTEMPT_LIMITS
})

/** An account's name as a person signing up writes it. */
export const MAX_ACCOUNT_NAME_LENGTH = 100

/** Past a limit: no more tries from this client address, or for this email address, until `retryAt`. */
export class TooManyAttempts extends Schema.TaggedError<TooManyAttempts>()("TooManyAttempts", {
  retryAt: Schema.Number
}) {}

/** Self sign-up is refused: accounts come by invitation, sign-up is off, or it is open but no mail is configured. */
export class SignUpClosed extends Schema.TaggedError<SignUpClosed>()("SignUpClosed", {
  reason: Schema.Literals(["invite", "off", "no-mail"])
}) {}

/** Email sign-in is asked of a server that sends no mail. */
export class MailUnavailable extends Schema.TaggedError<MailUnavailable>()("MailUnavailable", {}) {}

/** The account name a person asked for, or, left empty, their address's local part. */
export const decodeAccountName = (text: string | undefined, email: string): Result.Result<string, InvalidRequest> => {
  const name = (text ?? "").trim()
  if (name === "") return Result.succeed(email.slice(0, email.lastIndexOf("@")).slice(0, MAX_ACCOUNT_NAME_LENGTH))
  if (name.length > MAX_ACCOUNT_NAME_LENGTH) {
    return Result.fail(new InvalidRequest({ parameter: "name", message: `name must be at most ${MAX_ACCOUNT_NAME_LENGTH} characters` }))
  }
  return storable("name", name)
}

export class EmailSignIn extends Context.Service<EmailSignIn, {
  /** Whether sign-in links can be mailed (a SignInMail is provided). */
  readonly mailAvailable: boolean
  readonly signUpMode: SignUpMode
  /**
   * Mails a sign-in link to the account whose owner has this address, if there is one; the
   * same answer, at once, either way. `client` is the requesting address, for the limits.
   */
  readonly requestLink: (email: string, client: string) => Effect.Effect<void, InvalidRequest | TooManyAttempts | MailUnavailable>
  /**
   * With sign-up open: a `free` account owned by this address, named `name` (or after the
   * address), and a sign-in link mailed to it; an address that has an account gets a sign-in
   * link instead. The same answer, at once, either way.
   */
  readonly signUp: (
    request: { readonly email: string; readonly name?: string | undefined },
    client: string
  ) => Effect.Effect<void, InvalidRequest | TooManyAttempts | SignUpClosed>
  /** `Sessions.redeem`, with unknown, used and expired links counted per client address: past the limit, none is tried. */
  readonly redeem: (
    linkToken: string,
    previous: string | undefined,
    client: string
  ) => Effect.Effect<SignedIn, SignInLinkInvalid | TooManyAttempts>
}>()("@dropshelf/core/EmailSignIn") {
  static readonly layer = Layer.effect(
    EmailSignIn,
    Effect.gen(function*() {
      const accounts = yield* AccountStore
      const limiter = yield* RateLimiter
      const sessions = yield* Sessions
      const digest = yield* Digest.Digest
      const mail = Option.getOrUndefined(yield* Effect.serviceOption(SignInMail))
      const signUpMode = yield* SignUpPolicy
      const limits = yield* SignInAttemptLimits
      const issueSignInLink = yield* makeIssueSignInLink
      const background = yield* FiberSet.make<void, never>()

      /** Counted under a digest, so no counter store ever holds an address. */
      const emailCounter = (email: string) =>
        Effect.map(digest.digestHex(Digest.sha256, new TextEncoder().encode(Email.key(email))), (hex) => `signin-email:${hex.slice(0, 32)}`)

      const refusal = (decisions: ReadonlyArray<RateDecision>) => {
        const refused = decisions.filter((decision) => !decision.allowed)
        return refused.length === 0 ? Effect.void : Effect.fail(new TooManyAttempts({ retryAt: Math.max(...refused.map((decision) => decision.resetAt)) }))
      }

      const countRequest = Effect.fnUntraced(function*(email: string, client: string) {
        const byAddress = yield* limiter.hit(`signin-address:${client}`, limits.requestsPerAddress, limits.windowMs)
        const byEmail = yield* limiter.hit(yield* emailCounter(email), limits.requestsPerEmail, limits.windowMs)
        yield* refusal([byAddress, byEmail])
      })

      const mailLink = (send: SignInMail["Service"]["send"], account: AccountRecord, to: string, purpose: "sign-in" | "sign-up") =>
        Effect.flatMap(Effect.orDie(issueSignInLink(account.id)), (link) => send({ to, token: link.token, expiresAt: link.expiresAt, purpose }))

      /** After the answer: a failure is logged, never told. */
      const inBackground = (what: string, effect: Effect.Effect<void>) =>
        FiberSet.run(background)(effect.pipe(Effect.catchCause((cause) => Effect.logWarning(`dropshelf: ${what} failed`, cause))))

      const requestLink = Effect.fn("EmailSignIn.requestLink")(function*(text: string, client: string) {
        if (mail === undefined) return yield* new MailUnavailable()
        const email = yield* Effect.fromResult(Email.decode("email", text))
        yield* countRequest(email, client)
        yield* inBackground(
          "mailing a sign-in link",
          Effect.flatMap(accounts.findByEmail(email), (account) => account === undefined ? Effect.void : mailLink(mail.send, account, email, "sign-in"))
        )
      })

      const signUp = Effect.fn("EmailSignIn.signUp")(function*(request: { readonly email: string; readonly name?: string | undefined }, client: string) {
        if (signUpMode !== "open") return yield* new SignUpClosed({ reason: signUpMode })
        if (mail === undefined) return yield* new SignUpClosed({ reason: "no-mail" })
        const email = yield* Effect.fromResult(Email.decode("email", request.email))
        const name = yield* Effect.fromResult(decodeAccountName(request.name, email))
        yield* countRequest(email, client)
        yield* inBackground(
          "signing up",
          Effect.gen(function*() {
            const existing = yield* accounts.findByEmail(email)
            if (existing !== undefined) return yield* mailLink(mail.send, existing, email, "sign-in")
            const created = yield* accounts.create({ name, plan: "free", email, at: yield* Clock.currentTimeMillis }).pipe(Effect.result)
            if (created._tag === "Success") return yield* mailLink(mail.send, created.success, email, "sign-up")
            // Another request signed the address up meanwhile: it is an account's now.
            const raced = yield* accounts.findByEmail(email)
            if (raced !== undefined) yield* mailLink(mail.send, raced, email, "sign-in")
          })
        )
      })

      const redeem = Effect.fn("EmailSignIn.redeem")(function*(linkToken: string, previous: string | undefined, client: string) {
        const counter = `signin-link-address:${client}`
        const state = yield* limiter.peek(counter, limits.badLinksPerAddress, limits.windowMs)
        if (!state.allowed) return yield* new TooManyAttempts({ retryAt: state.resetAt })
        return yield* sessions.redeem(linkToken, previous).pipe(
          Effect.tapError(() => limiter.hit(counter, limits.badLinksPerAddress, limits.windowMs))
        )
      })

      return EmailSignIn.of({ mailAvailable: mail !== undefined, signUpMode, requestLink, signUp, redeem })
    })
  )
}
