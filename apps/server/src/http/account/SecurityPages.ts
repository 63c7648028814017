import { html } from "@remix-run/html-template"
import { type Keyset, SecurityEvent } from "@dropshelf/core"
import { layout, type SignedIn, when } from "./Pages.ts"

/* The security log's page: what happened to the account's keys and sessions, the last first. */

const WHAT: Readonly<Record<string, string>> = {
  "key.created": "Key created",
  "key.revoked": "Key revoked",
  "key.rotated": "Key rotated",
  "session.signed_in": "Signed in",
  "session.signed_out": "Signed out",
  "session.signed_out_everywhere": "Signed out everywhere",
  "passkey.added": "Passkey added",
  "passkey.deleted": "Passkey deleted"
}

/** What an event says; a kind this page does not know yet is shown as it is stored. */
export const whatOf = (event: SecurityEvent.SecurityEventRecord): string => WHAT[event.kind] ?? event.kind

const detailOf = (event: SecurityEvent.SecurityEventRecord): string =>
  event.kind !== "session.signed_in"
    ? event.detail ?? ""
    : event.detail === SecurityEvent.SIGNED_IN_BY_LINK
    ? "with a one-time link"
    : event.detail === SecurityEvent.SIGNED_IN_BY_PASSKEY
    ? "with a passkey"
    : event.detail ?? ""

export const security = (log: Keyset.KeysetPage<SecurityEvent.SecurityEventRecord>, signedIn: SignedIn, first: boolean) => {
  const rows = log.data.map((event) =>
    html`<tr>
<td data-label="When">${when(event.at)}</td>
<td data-label="What">${whatOf(event)}</td>
<td data-label="Detail">${detailOf(event)}</td>
</tr>`
  )
  return layout(
    "Security log",
    html`<p>What happened to your keys and sessions, whether done here or by the operator, the latest first.</p>
${
      log.data.length === 0 ? html`<p>Nothing ${first ? "yet" : "older"}.</p>` : html`<table>
<caption class="hint">Key and session events of your account.</caption>
<thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Detail</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
    }
<nav aria-label="Pages">
${log.next === null ? "" : html`<a href="/account/security?after=${log.next}">Older events</a>`}
${first ? "" : html`<a href="/account/security">Latest events</a>`}
</nav>`,
    { signedIn }
  )
}
