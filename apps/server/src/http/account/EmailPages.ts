import { html, type SafeHtml } from "@remix-run/html-template"
import { Email, EmailSignIn, Session, Time } from "@dropshelf/core"
import { layout } from "./Pages.ts"

/*
 * The pages of email sign-in and self sign-up. What they say after a request is the same
 * whether or not the address has an account.
 */

const at = (instant: number) => `${Time.toIso(instant).slice(11, 16)} UTC`

const LINK_LIFE = html`<p class="hint">A link works once, for ${Session.LINK_LIFETIME_MS / Time.MINUTE} minutes.</p>`

const emailField = (email: string, error: string | undefined, hint: string) =>
  html`<label for="email">Email address</label>
${error === undefined ? "" : html`<p class="notice bad" role="alert" id="email-error">${error}</p>`}
<input type="email" id="email" name="email" autocomplete="email" required maxlength="${Email.MAX_LENGTH}" value="${email}" aria-describedby="${
    error === undefined ? "email-hint" : "email-error email-hint"
  }"${error === undefined ? "" : html` aria-invalid="true"`}>
<p class="hint" id="email-hint">${hint}</p>`

/** The sign-in page's email form, shown when mail is configured. */
export const emailForm = (options: { readonly email?: string; readonly error?: string | undefined; readonly signUpOpen?: boolean } = {}): SafeHtml =>
  html`<h2>Sign in by email</h2>
<form method="post" action="/signin/email">
${emailField(options.email ?? "", options.error, "We mail a one-time sign-in link to this address if it has an account.")}
<p><button type="submit">Email me a sign-in link</button></p>
</form>
${options.signUpOpen === true ? html`<p>No account yet? <a href="/signup">Sign up</a>.</p>` : ""}
<h2>Or ask the operator</h2>`

/** The answer to a sign-in request, whether or not the address has an account. */
export const linkSent = (email: string) =>
  layout(
    "Check your mail",
    html`<p class="notice good" role="status">If an account has the address ${email}, a sign-in link is on its way to it.</p>
<p>Open it in the browser you want to be signed in on. Nothing arrived within a few minutes? Check the spam folder, or
<a href="/signin">ask for another link</a>.</p>
${LINK_LIFE}`
  )

/** The answer to a sign-up, whether the address was new or had an account. */
export const signUpSent = (email: string) =>
  layout(
    "Check your mail",
    html`<p class="notice good" role="status">A sign-in link is on its way to ${email}.</p>
<p>If the address is new here, the link signs you in to your new account, on the free plan; if it
already has an account, the link signs you in to that one. Nothing arrived within a few minutes?
Check the spam folder, or <a href="/signup">try again</a>.</p>
${LINK_LIFE}`
  )

/** `GET /signup` (and a refused or mistyped `POST`), as the sign-up setting and mail allow. */
export const signUp = (
  mode: EmailSignIn.SignUpMode,
  mailAvailable: boolean,
  form: { readonly email?: string; readonly name?: string; readonly error?: string | undefined; readonly nameError?: string | undefined } = {}
) => {
  if (mode === "off") {
    return layout("Sign-up is closed", html`<p>This server does not take new accounts. If you have one, <a href="/signin">sign in</a>.</p>`)
  }
  if (mode === "invite") {
    return layout(
      "Accounts by invitation",
      html`<p>Accounts on this server come by invitation: its operator creates your account and gives you a
one-time sign-in link. If you have an account, <a href="/signin">sign in</a>.</p>`
    )
  }
  if (!mailAvailable) {
    return layout(
      "Sign-up needs mail",
      html`<p>Sign-up is open here, but it works by mailing you a link, and this server sends no mail yet.
Ask its operator for an account, or try again later. If you have an account, <a href="/signin">sign in</a>.</p>`
    )
  }
  return layout(
    "Sign up",
    html`<p>Create an account on the free plan: we mail a one-time link to your address, and the link signs you in.</p>
<form method="post" action="/signup">
${emailField(form.email ?? "", form.error, "The account's owner address: sign-in links go there.")}
<label for="account-name">Account name <span class="hint">(optional)</span></label>
${form.nameError === undefined ? "" : html`<p class="notice bad" role="alert" id="name-error">${form.nameError}</p>`}
<input type="text" id="account-name" name="name" maxlength="${EmailSignIn.MAX_ACCOUNT_NAME_LENGTH}" value="${form.name ?? ""}" aria-describedby="${
      form.nameError === undefined ? "name-hint" : "name-error name-hint"
    }">
<p class="hint" id="name-hint">How the account is shown; left empty, the part of the address before the @.</p>
<p><button type="submit">Sign up</button></p>
</form>
<p>Already have an account? <a href="/signin">Sign in</a>.</p>
${LINK_LIFE}`
  )
}

/** Past a limit: when to try again, and nothing about any address. */
export const tooManyAttempts = (retryAt: number, now: number) =>
  layout(
    "Too many attempts",
    html`<p class="notice bad" role="alert">Too many sign-in attempts from here or for this address.
Try again after ${at(retryAt)} (in about ${Math.max(1, Math.ceil((retryAt - now) / Time.MINUTE))} minutes).</p>
<p><a href="/signin">Sign in</a></p>`
  )

/** Email sign-in asked of a server that sends no mail. */
export const mailUnavailable = () =>
  layout("Sign-in by email is not set up", html`<p>This server sends no mail. <a href="/signin">Sign in</a> with a link from its operator.</p>`)
