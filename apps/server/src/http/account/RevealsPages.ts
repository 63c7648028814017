import { html } from "@remix-run/html-template"
import type { AccountReveals } from "@dropshelf/core"
import { layout, type SignedIn, when } from "./Pages.ts"

/* The reveal ledger's page: one calendar month (UTC) at a time, with what it spent of the allowance. */

const monthLink = (month: string, after?: string) =>
  `/account/reveals?${new URLSearchParams(after === undefined ? { month } : { month, after }).toString()}`

export const reveals = (ledger: AccountReveals.LedgerMonth, signedIn: SignedIn) => {
  const rows = ledger.rows.map(({ domain, entry }) =>
    html`<tr>
<td data-label="Revealed">${when(entry.revealedAt)}</td>
<td data-label="Name">${domain ?? html`<span class="hint">no longer listed</span>`}</td>
<td data-label="Listing"><code>${entry.listingId}</code></td>
<td data-label="Charged">${entry.charged ? "yes" : "no"}</td>
</tr>`
  )
  return layout(
    "Reveals",
    html`<h2>${ledger.month}</h2>
<p>${ledger.limit === null ? html`${ledger.used} charged (no monthly limit)` : html`${ledger.used} of ${ledger.limit} reveals used`} in ${ledger.month} (UTC).</p>
${
      ledger.rows.length === 0 ? html`<p>No reveals in ${ledger.month}.</p>` : html`<table>
<caption class="hint">Names you revealed in ${ledger.month}, oldest first. A reveal is yours for good: revealing a name again costs nothing.</caption>
<thead><tr><th scope="col">Revealed</th><th scope="col">Name</th><th scope="col">Listing</th><th scope="col">Charged</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
    }
<nav aria-label="Months">
${ledger.next === null ? "" : html`<a href="${monthLink(ledger.month, ledger.next)}">More of ${ledger.month}</a>`}
${ledger.earlier === null ? "" : html`<a href="${monthLink(ledger.earlier)}">Earlier month (${ledger.earlier})</a>`}
${ledger.later === null ? "" : html`<a href="${monthLink(ledger.later)}">Later month (${ledger.later})</a>`}
</nav>`,
    { signedIn }
  )
}
