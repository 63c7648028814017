import { html } from "@remix-run/html-template"
import { Hold, Plan, Time } from "@dropshelf/core"
import { layout, type SignedIn, when } from "./Pages.ts"

/*
 * The holds page: the account's running and recently ended holds as GET /api/v1/holds lists
 * them, with the forms that extend and end them.
 */

const at = (iso: string | null) => when(iso === null ? null : Date.parse(iso))

const LISTED_DAYS = Hold.ENDED_HOLD_LISTING_MS / Time.DAY
const COOLDOWN_DAYS = Plan.HOLD_COOLDOWN_MS / Time.DAY

export const holds = (
  list: ReadonlyArray<Hold.HoldView>,
  plan: Plan.PlanLimits,
  signedIn: SignedIn,
  options: { readonly notice?: string | undefined; readonly refusal?: string | undefined } = {}
) => {
  const running = list.filter((hold) => hold.state === "running").length
  const csrf = html`<input type="hidden" name="csrf" value="${signedIn.csrf}">`
  const rows = list.map((hold) =>
    html`<tr>
<td data-label="Listing"><code>${hold.listing_id}</code></td>
<td data-label="State">${hold.state}</td>
<td data-label="Held">${at(hold.held_at)}</td>
<td data-label="${hold.state === "running" ? "Ends" : "Was to end"}">${at(hold.expires_at)}</td>
<td data-label="Ended">${hold.ended_at === null ? "—" : at(hold.ended_at)}</td>
<td data-label="Action">${
      hold.state !== "running" ? "" : html`${
        hold.can_extend
          ? html`<form class="inline" method="post" action="/account/holds/${hold.id}/extend">${csrf}
<button class="quiet" type="submit" aria-label="Extend the hold on ${hold.listing_id} by ${hold.extend_hours} hours">Extend</button>
</form>`
          : ""
      }
<form class="inline" method="post" action="/account/holds/${hold.id}/end">${csrf}
<button class="quiet" type="submit" name="outcome" value="registered" aria-label="Registered: end the hold on ${hold.listing_id}">Registered</button>
<button class="quiet" type="submit" name="outcome" value="released" aria-label="Release the hold on ${hold.listing_id}">Release</button>
</form>`
    }</td>
</tr>`
  )
  return layout(
    "Holds",
    html`${options.notice === undefined ? "" : html`<p class="notice good" role="status">${options.notice}</p>`}
${options.refusal === undefined ? "" : html`<p class="notice bad" role="alert">${options.refusal}</p>`}
<p>${
      plan.concurrentHolds === 0
        ? "Your plan has no holds."
        : html`${running} of ${plan.concurrentHolds} holds running. A hold lasts ${plan.holdHours} hours and can be extended once by ${plan.extendHours}.`
    }</p>
${
      list.length === 0 ? html`<p>No holds running or ended in the last ${LISTED_DAYS} days.</p>` : html`<table>
<caption class="hint">Your holds running and ended in the last ${LISTED_DAYS} days, as <code>GET /api/v1/holds</code> lists them.</caption>
<thead><tr><th scope="col">Listing</th><th scope="col">State</th><th scope="col">Held</th><th scope="col">Ends</th><th scope="col">Ended</th><th scope="col">Action</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
    }
<p class="hint">You start a hold on a listing you revealed through the API (<code>POST /api/v1/domains/{id}/hold</code>).
End it as registered once the name is yours, or release it; either way you cannot hold that listing again for ${COOLDOWN_DAYS} days.</p>`,
    { signedIn }
  )
}
