import { html, type SafeHtml } from "@remix-run/html-template"
import { AccountArea, ApiKey, type KeyStore, Session, Time } from "@dropshelf/core"
import { script, stylesheet } from "./Assets.ts"
import { PASSKEY_SCRIPTS } from "./PasskeyAssets.ts"

/*
 * The account area's pages: server-rendered HTML from `html` templates, which escape every
 * interpolated value (docs/decisions/0801-html-templates.md). Forms work without JavaScript;
 * the one script only adds copy buttons.
 */

/** What the layout needs of a signed-in person: the CSRF token for the sign-out form. */
export interface SignedIn {
  readonly accountName: string
  readonly csrf: string
}

export const when = (instant: number | null): SafeHtml =>
  instant === null ? html`never` : html`<time datetime="${Time.toIso(instant)}">${Time.toIso(instant).slice(0, 16).replace("T", " ")} UTC</time>`

export const layout = (
  title: string,
  main: SafeHtml,
  options: { readonly signedIn?: SignedIn | undefined; readonly withScript?: boolean; readonly scripts?: ReadonlyArray<string> } = {}
): string =>
  String(html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · dropshelf</title>
<link rel="stylesheet" href="${stylesheet.path}">
${options.withScript === true ? html`<script src="${script.path}" defer></script>` : ""}
${(options.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<nav aria-label="Account">
<a class="brand" href="/account">dropshelf</a>
${
    options.signedIn === undefined ? "" : html`<a href="/account">Overview</a>
<a href="/account/keys">Keys</a>
<a href="/account/directory">Directory</a>
<a href="/account/holds">Holds</a>
<a href="/account/reveals">Reveals</a>
<a href="/account/watches">Watches</a>
<a href="/account/security">Security</a>
<a href="/account/passkeys">Passkeys</a>
<form class="inline" method="post" action="/signout">
<input type="hidden" name="csrf" value="${options.signedIn.csrf}">
<button class="quiet" type="submit">Sign out</button>
</form>`
  }
</nav>
</header>
<main id="main">
<h1>${title}</h1>
${main}
</main>
</body>
</html>
`)

const HOW_TO_GET_A_LINK = html`<p>You sign in with a one-time link. Ask the operator of this server for one: they run
<code>dropshelf accounts sign-in-link &lt;account-id&gt;</code>. On the demo (<code>npm start</code>), the terminal
prints a link for each demo account.</p>
<p class="hint">A link works once, for ${Session.LINK_LIFETIME_MS / Time.MINUTE} minutes.</p>`

/** `GET /signin` with a token: one button, so that a mail scanner following the link does not spend it. */
export const continueSignIn = (token: string) =>
  layout(
    "Sign in",
    html`<p>Continue to sign in to your account area.</p>
<form method="post" action="/signin">
<input type="hidden" name="token" value="${token}">
<button type="submit">Continue</button>
</form>`
  )

/** Signing in with a passkey: a button the passkey script shows and runs (PasskeyAssets.ts). */
const PASSKEY_SIGN_IN = html`<form method="post" action="/signin/passkey" data-passkey="authenticate" data-options="/signin/passkey/options" data-status="passkey-status">
<input type="hidden" name="challenge" value="">
<input type="hidden" name="response" value="">
<button type="submit" data-needs-script hidden>Sign in with a passkey</button>
</form>
<p class="hint" id="passkey-status" role="status"></p>
<noscript><p class="hint">Signing in with a passkey needs JavaScript; a one-time link works without it.</p></noscript>`

/** `GET /signin` without a token, and where a signed-out person is sent; `byEmail`: the email form, when mail is set up. */
export const signIn = (byEmail?: SafeHtml) =>
  layout("Sign in", html`<h2>With a passkey</h2>${PASSKEY_SIGN_IN}<h2>With a one-time link</h2>${byEmail ?? ""}${HOW_TO_GET_A_LINK}`, {
    scripts: PASSKEY_SCRIPTS
  })

/** A used, expired or unknown link; `byEmail`: the email form, when mail is set up. */
export const linkInvalid = (byEmail?: SafeHtml) =>
  layout(
    "This sign-in link cannot be used",
    html`<p class="notice bad">The link was already used, has expired, or was mistyped.</p>${byEmail ?? ""}${HOW_TO_GET_A_LINK}`
  )

/** A refused state-changing request: not from this site's own page, or without its token. */
export const forbidden = () =>
  layout(
    "Request refused",
    html`<p class="notice bad">This form was not sent from this site's own page, or the page was too old.
Go back, reload the page and try again.</p><p><a href="/account">Your account</a></p>`
  )

const upgradeLine = (lacks: string, upgradeUrl: string | undefined) =>
  html`<p class="notice">${lacks}${upgradeUrl === undefined ? "" : html` <a href="${upgradeUrl}">Upgrade your plan</a>.`}</p>`

export const overview = (view: AccountArea.AreaOverview, signedIn: SignedIn, upgradeUrl: string | undefined) => {
  const plan = view.plan
  const lacks = [
    plan.concurrentHolds === 0 ? "Your plan has no holds." : undefined,
    plan.sinceFeed ? undefined : "Your plan has no since feed (the changes-only sync).",
    plan.revealFeatured ? undefined : "Your plan cannot reveal featured names."
  ].filter((line): line is string => line !== undefined)
  return layout(
    "Your account",
    html`<dl>
<dt>Account</dt><dd>${view.account.name} <span class="hint">(${view.account.id})</span></dd>
<dt>Plan</dt><dd>${plan.name}${view.account.plan === "lapsed" ? " (lapsed: reads as free)" : ""}</dd>
<dt>Reveals this month</dt><dd>${view.reveals.limit === null ? html`${view.reveals.used} (no monthly limit)` : html`${view.reveals.used} of ${view.reveals.limit}`}, resets ${when(view.reveals.resetsAt)}</dd>
<dt>Rate limit</dt><dd>${plan.requestsPerMinute} requests a minute per key</dd>
<dt>Holds running</dt><dd>${plan.concurrentHolds === 0 ? "none (not on this plan)" : html`${view.runningHolds} of ${plan.concurrentHolds}`}</dd>
<dt>Watches</dt><dd>${view.watches} of ${plan.watches}</dd>
<dt>Since feed</dt><dd>${plan.sinceFeed ? "available" : "not on this plan"}</dd>
<dt>Keys live</dt><dd>${view.liveKeys} of ${plan.liveKeys} <a href="/account/keys">Manage keys</a></dd>
</dl>
${lacks.map((line) => upgradeLine(line, upgradeUrl))}
<h2>Sessions</h2>
<p>Signed in on another device you no longer use? End every session of this account, this one included.</p>
<form method="post" action="/account/sessions/end-all">
<input type="hidden" name="csrf" value="${signedIn.csrf}">
<button type="submit">Sign out everywhere</button>
</form>`,
    { signedIn }
  )
}

/** The choices of a new key's lifetime: the value sent, what it says, and its length. */
export const EXPIRIES: ReadonlyArray<readonly [string, string, number | undefined]> = [
  ["never", "Never", undefined],
  ["30d", "In 30 days", 30 * Time.DAY],
  ["90d", "In 90 days", 90 * Time.DAY],
  ["365d", "In a year", 365 * Time.DAY]
]

/** One button's form acting on a key: `/account/keys/{id}/{action}`, with the session's CSRF token. */
const keyAction = (key: KeyStore.KeyRecord, action: "rotate" | "revoke", text: string, label: string, signedIn: SignedIn) =>
  html`<form class="inline" method="post" action="/account/keys/${key.id}/${action}">
<input type="hidden" name="csrf" value="${signedIn.csrf}">
<button class="quiet" type="submit" aria-label="${label}">${text}</button>
</form>`

export const keys = (
  list: ReadonlyArray<KeyStore.KeyRecord>,
  now: number,
  signedIn: SignedIn,
  options: { readonly liveLimit: number; readonly refusal?: string | undefined; readonly revoked?: string | undefined }
) => {
  const live = list.filter((key) => ApiKey.isLiveAt(key, now)).length
  const applications = list.filter((key) => key.application)
  const rows = list.filter((key) => !key.application).map((key) => {
    const state = ApiKey.keyStateAt(key, now)
    return html`<tr>
<td data-label="Prefix"><code>${key.prefix}</code></td>
<td data-label="Name">${key.name}</td>
<td data-label="State">${state}</td>
<td data-label="Created">${when(key.createdAt)}</td>
<td data-label="Last used">${key.lastUsedAt === null ? "never" : when(key.lastUsedAt)}</td>
<td data-label="Expires">${when(key.expiresAt)}</td>
<td data-label="Action">${
      state === "live"
        ? html`${keyAction(key, "rotate", "Rotate", `Rotate key ${key.prefix} (${key.name})`, signedIn)}
${keyAction(key, "revoke", "Revoke", `Revoke key ${key.prefix} (${key.name})`, signedIn)}`
        : ""
    }</td>
</tr>`
  })
  return layout(
    "API keys",
    html`${options.revoked === undefined ? "" : html`<p class="notice good" role="status">Key ${options.revoked} is revoked.</p>`}
${options.refusal === undefined ? "" : html`<p class="notice bad" role="alert">${options.refusal}</p>`}
<p>${live} of ${options.liveLimit} keys live on your plan, connected applications included.</p>
${
      rows.length === 0 ? html`<p>No keys yet.</p>` : html`<table>
<caption class="hint">Your keys, oldest first. A key is shown in full only once, when it is created.</caption>
<thead><tr><th scope="col">Prefix</th><th scope="col">Name</th><th scope="col">State</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Action</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
    }
${connectedApplications(applications, now, signedIn)}
<p class="hint">Rotate gives a key a successor and keeps the old key working for ${AccountArea.ROTATION_GRACE_MS / Time.HOUR} hours, to swap it
without downtime; revoke stops a key at once.</p>
<h2>Create a key</h2>
<form method="post" action="/account/keys">
<input type="hidden" name="csrf" value="${signedIn.csrf}">
<label for="key-name">Name</label>
<input type="text" id="key-name" name="name" required maxlength="${ApiKey.MAX_NAME_LENGTH}" aria-describedby="key-name-hint">
<p class="hint" id="key-name-hint">Where you will use it, e.g. "laptop" or "CI".</p>
<label for="key-expiry">Expires</label>
<select id="key-expiry" name="expires">
${EXPIRIES.map(([value, label]) => html`<option value="${value}">${label}</option>`)}
</select>
<p><button type="submit">Create key</button></p>
</form>`,
    { signedIn }
  )
}

/** The assistants the person connected by signing in: each a key, revoked here like one. */
const connectedApplications = (list: ReadonlyArray<KeyStore.KeyRecord>, now: number, signedIn: SignedIn) => {
  if (list.length === 0) return ""
  const rows = list.map((key) => {
    const state = ApiKey.keyStateAt(key, now)
    return html`<tr>
<td data-label="Application">${key.name}<br><span class="hint">${key.application?.clientId ?? ""}</span></td>
<td data-label="May">${(key.application?.scopes ?? []).join(", ")}</td>
<td data-label="State">${state}</td>
<td data-label="Connected">${when(key.createdAt)}</td>
<td data-label="Last used">${key.lastUsedAt === null ? "never" : when(key.lastUsedAt)}</td>
<td data-label="Action">${
      state === "live"
        ? keyAction(key, "revoke", "Disconnect", `Disconnect ${key.name} (${key.prefix})`, signedIn)
        : ""
    }</td>
</tr>`
  })
  return html`<h2 id="applications">Connected applications</h2>
<table aria-labelledby="applications">
<thead><tr><th scope="col">Application</th><th scope="col">May</th><th scope="col">State</th><th scope="col">Connected</th><th scope="col">Last used</th><th scope="col">Action</th></tr></thead>
<tbody>${rows}</tbody>
</table>
<p class="hint">An assistant you signed in to from its own settings. Disconnect stops its access at once.</p>`
}

/**
 * The new key, shown this once, with a copy button and a ready `curl` line; after a rotation,
 * `retired` is the key it replaces.
 */
export const created = (
  secret: string,
  key: KeyStore.KeyRecord,
  apiBase: string,
  signedIn: SignedIn,
  retired?: KeyStore.KeyRecord | undefined
) => {
  const curl = `curl -H "Authorization: Bearer ${secret}" "${apiBase}/api/v1/me"`
  return layout(
    retired === undefined ? "Key created" : "Key rotated",
    html`${
      retired === undefined ? "" : html`<p class="notice">The old key <code>${retired.prefix}</code> keeps working until ${when(retired.expiresAt)}.
Put the new key in its place before then.</p>`
    }
<p class="notice good" role="status">Key <code>${key.prefix}</code> (${key.name}) is live${
      key.expiresAt === null ? "" : html` until ${when(key.expiresAt)}`
    }. Copy it now: it is shown only this once.</p>
<h2>Your key</h2>
<div class="secret">
<code id="secret">${secret}</code>
<button type="button" data-copy="secret" data-status="copy-status" hidden>Copy key</button>
</div>
<p class="hint" id="copy-status" role="status"></p>
<h2>Try it</h2>
<pre><code id="curl">${curl}</code></pre>
<button type="button" data-copy="curl" data-status="curl-status" hidden>Copy command</button>
<p class="hint" id="curl-status" role="status"></p>
<p><a href="/account/keys">Back to your keys</a></p>`,
    { signedIn, withScript: true }
  )
}

export const notFound = () => html`<p>Nothing is here. <a href="/account">Your account</a></p>`
