import { html } from "@remix-run/html-template"
import { Passkey } from "@dropshelf/core"
import { PASSKEY_SCRIPTS } from "./PasskeyAssets.ts"
import { layout, type SignedIn, when } from "./Pages.ts"

/*
 * The passkey pages: the account's passkeys, a form to add one and a button to delete each.
 * Adding needs JavaScript (the browser's WebAuthn API); the page says so without it, and
 * deleting works without it.
 */

export const passkeys = (
  list: ReadonlyArray<Passkey.PasskeyRecord>,
  signedIn: SignedIn,
  options: { readonly refusal?: string | undefined; readonly notice?: string | undefined } = {}
) => {
  const rows = list.map((passkey) =>
    html`<tr>
<td data-label="Name">${passkey.name}</td>
<td data-label="Added">${when(passkey.createdAt)}</td>
<td data-label="Last used">${when(passkey.lastUsedAt)}</td>
<td data-label="Action"><form class="inline" method="post" action="/account/passkeys/${passkey.id}/delete">
<input type="hidden" name="csrf" value="${signedIn.csrf}">
<button class="quiet" type="submit" aria-label="Delete passkey ${passkey.name}">Delete</button>
</form></td>
</tr>`
  )
  return layout(
    "Passkeys",
    html`${options.notice === undefined ? "" : html`<p class="notice good" role="status">${options.notice}</p>`}
${options.refusal === undefined ? "" : html`<p class="notice bad" role="alert">${options.refusal}</p>`}
<p>A passkey signs you in with your device's screen lock or a security key, without a link.</p>
${
      list.length === 0 ? html`<p>No passkeys yet.</p>` : html`<table>
<caption class="hint">Your passkeys, oldest first.</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col">Action</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
    }
<h2>Add a passkey</h2>
<noscript><p class="notice">Adding a passkey needs JavaScript: your browser creates it through its WebAuthn API.</p></noscript>
<form method="post" action="/account/passkeys" data-passkey="register" data-options="/account/passkeys/options" data-status="passkey-status">
<input type="hidden" name="csrf" value="${signedIn.csrf}">
<input type="hidden" name="challenge" value="">
<input type="hidden" name="response" value="">
<label for="passkey-name">Name</label>
<input type="text" id="passkey-name" name="name" required maxlength="${Passkey.MAX_NAME_LENGTH}" aria-describedby="passkey-name-hint">
<p class="hint" id="passkey-name-hint">Which device or key it is, e.g. "phone" or "laptop".</p>
<p><button type="submit" data-needs-script hidden>Add a passkey</button></p>
</form>
<p class="hint" id="passkey-status" role="status"></p>`,
    { signedIn, scripts: PASSKEY_SCRIPTS }
  )
}

/** A passkey sign-in that did not prove anything: how to try again. */
export const signInRefused = () =>
  layout(
    "Passkey sign-in failed",
    html`<p class="notice bad">This passkey could not sign you in: it is not registered here, or the attempt was too old or was already used.</p>
<p><a href="/signin">Try again</a>, or sign in with a one-time link and add the passkey under Passkeys.</p>`
  )
