import { html } from "@remix-run/html-template"
import { Scope } from "@dropshelf/core"
import { layout, type SignedIn } from "../http/account/Pages.ts"

/* The consent page an assistant's sign-in ends on, and its refusals. */

export interface ConsentView {
  readonly uid: string
  readonly clientName: string
  readonly clientId: string
  /** Where the browser goes once the person decides. */
  readonly redirectTo: URL
  readonly requested: ReadonlyArray<Scope.Scope>
  readonly accountName: string
  readonly planName: string
}

export const consent = (view: ConsentView, signedIn: SignedIn, refusal?: string) =>
  layout(
    `Connect ${view.clientName}?`,
    html`${refusal === undefined ? "" : html`<p class="notice bad" role="alert">${refusal}</p>`}
<p><strong>${view.clientName}</strong> asks to use dropshelf as <strong>${view.accountName}</strong> (${view.planName} plan).
It will be sent back to <code>${view.redirectTo.origin === "null" ? view.redirectTo.protocol : view.redirectTo.origin}</code>.</p>
<p class="hint">Application id: <code>${view.clientId}</code></p>
<form method="post" action="/oauth/consent/${view.uid}">
<input type="hidden" name="csrf" value="${signedIn.csrf}">
<fieldset>
<legend>It will be able to</legend>
${
      Scope.SCOPES.filter((scope) => view.requested.includes(scope)).map((scope) =>
        scope === "read"
          ? html`<p><input type="checkbox" id="scope-read" checked disabled> <label for="scope-read"><strong>read</strong>: ${
            Scope.SCOPE_DESCRIPTIONS.read
          }</label></p>`
          : html`<p><input type="checkbox" id="scope-${scope}" name="scope" value="${scope}" checked> <label for="scope-${scope}"><strong>${scope}</strong>: ${
            Scope.SCOPE_DESCRIPTIONS[scope]
          }</label></p>`
      )
    }
</fieldset>
<p class="hint">Its calls count against your plan's requests per minute like a key's, and it shows under Keys, where you can disconnect it.</p>
<p><button type="submit" name="decision" value="allow">Allow</button>
<button class="quiet" type="submit" name="decision" value="deny">Deny</button></p>
</form>`,
    { signedIn }
  )

/** An interaction that is over, expired, or started in another browser. */
export const expired = () =>
  layout(
    "This sign-in has expired",
    html`<p class="notice bad" role="alert">This request to connect an application has expired, was already answered, or was started in another browser.</p>
<p>Start connecting again from the application.</p>
<p><a href="/account">Your account</a></p>`
  )
