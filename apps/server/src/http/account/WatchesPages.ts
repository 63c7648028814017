import { html, type SafeHtml } from "@remix-run/html-template"
import { Watch, type WatchView } from "@dropshelf/core"
import { layout, type SignedIn, when } from "./Pages.ts"

/*
 * The watches pages: the list with the form that creates one, a watch with its forms and its
 * deliveries log, and a webhook secret shown once.
 */

const at = (iso: string | null) => when(iso === null ? null : Date.parse(iso))

/** A watch's filters as the `GET /domains` query string that carries them. */
export const queryText = (query: Readonly<Record<string, string>>) => new URLSearchParams(query).toString()

const notices = (options: { readonly notice?: string | undefined; readonly refusal?: string | undefined }) =>
  html`${options.notice === undefined ? "" : html`<p class="notice good" role="status">${options.notice}</p>`}
${options.refusal === undefined ? "" : html`<p class="notice bad" role="alert">${options.refusal}</p>`}`

const csrfField = (signedIn: SignedIn) => html`<input type="hidden" name="csrf" value="${signedIn.csrf}">`

const webhookState = (watch: WatchView.WatchView): SafeHtml | string =>
  watch.webhook === null
    ? "no webhook"
    : html`${watch.webhook.state}${watch.webhook.state_reason === null ? "" : html` (${watch.webhook.state_reason})`}`

/** What a form sent, to fill it again after a refusal. */
export interface WatchForm {
  readonly name: string
  readonly query: string
  readonly webhookUrl: string
}

export const watches = (
  list: ReadonlyArray<WatchView.WatchView>,
  limit: number,
  signedIn: SignedIn,
  options: { readonly notice?: string | undefined; readonly refusal?: string | undefined; readonly form?: WatchForm | undefined } = {}
) => {
  const rows = list.map((watch) =>
    html`<tr>
<td data-label="Name"><a href="/account/watches/${watch.id}">${watch.name}</a></td>
<td data-label="Query"><code>${queryText(watch.query) || "(every listing)"}</code></td>
<td data-label="State">${watch.paused ? "paused" : "running"}</td>
<td data-label="Webhook">${webhookState(watch)}</td>
<td data-label="Created">${at(watch.created_at)}</td>
</tr>`
  )
  const form = options.form
  return layout(
    "Watches",
    html`${notices(options)}
<p>${list.length} of ${limit} watches on your plan.</p>
${
      list.length === 0 ? html`<p>No watches yet.</p>` : html`<table>
<caption class="hint">Your watches, oldest first.</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Query</th><th scope="col">State</th><th scope="col">Webhook</th><th scope="col">Created</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
    }
<h2 id="new-watch">Create a watch</h2>
<form method="post" action="/account/watches">
${csrfField(signedIn)}
<label for="watch-name">Name</label>
<input type="text" id="watch-name" name="name" required maxlength="${Watch.NAME_MAX_LENGTH}" value="${form?.name ?? ""}">
<label for="watch-query">Query</label>
<input type="text" id="watch-query" name="query" value="${form?.query ?? ""}" aria-describedby="watch-query-hint">
<p class="hint" id="watch-query-hint">The filters of <code>GET /api/v1/domains</code> as its query string, e.g. <code>tld=com&amp;ageMin=5</code>. Empty: every listing.</p>
<label for="watch-webhook">Webhook URL (optional)</label>
<input type="text" id="watch-webhook" name="webhook_url" inputmode="url" value="${form?.webhookUrl ?? ""}" aria-describedby="watch-webhook-hint">
<p class="hint" id="watch-webhook-hint">Where each match is POSTed, signed; its secret is shown once, when the watch is created.</p>
<p><button type="submit">Create watch</button></p>
</form>`,
    { signedIn }
  )
}

export const watch = (
  view: WatchView.WatchView,
  attempts: ReadonlyArray<WatchView.AttemptView>,
  signedIn: SignedIn,
  options: { readonly notice?: string | undefined; readonly refusal?: string | undefined } = {}
) => {
  const base = `/account/watches/${view.id}`
  // One row per delivery (event), its attempts in order beneath it.
  const events = new Map<string, Array<WatchView.AttemptView>>()
  for (const attempt of attempts) events.set(attempt.event_id, [...(events.get(attempt.event_id) ?? []), attempt])
  const deliveries = [...events].map(([eventId, tries]) =>
    html`<li><code>${eventId}</code>
<ol>${tries.sort((a, b) => a.attempt - b.attempt).map((attempt) =>
      html`<li>Attempt ${attempt.attempt}, ${at(attempt.attempted_at)}: ${
        attempt.status_code === null ? html`no answer (${attempt.error ?? "unknown"})` : html`HTTP ${attempt.status_code}`
      }, ${attempt.duration_ms} ms</li>`
    )}</ol>
<form class="inline" method="post" action="${base}/deliveries/${eventId}/resend">${csrfField(signedIn)}
<button class="quiet" type="submit" aria-label="Send again: delivery ${eventId}">Send again</button>
</form></li>`
  )
  return layout(
    view.name,
    html`${notices(options)}
<dl>
<dt>Query</dt><dd><code>${queryText(view.query) || "(every listing)"}</code></dd>
<dt>State</dt><dd>${view.paused ? "paused: records no matches" : "running"}</dd>
<dt>Webhook</dt><dd>${view.webhook === null ? "none" : html`<code>${view.webhook.url}</code>, ${webhookState(view)}`}</dd>
${view.webhook?.previous_secret_expires_at == null ? "" : html`<dt>Previous secret</dt><dd>signs beside the new one until ${at(view.webhook.previous_secret_expires_at)}</dd>`}
<dt>Created</dt><dd>${at(view.created_at)}</dd>
</dl>
<form method="post" action="${base}/pause">${csrfField(signedIn)}
<input type="hidden" name="paused" value="${view.paused ? "false" : "true"}">
<p><button type="submit">${view.paused ? "Resume" : "Pause"}</button></p>
</form>
<h2>Webhook</h2>
<form method="post" action="${base}/webhook">${csrfField(signedIn)}
<label for="webhook-url">Webhook URL</label>
<input type="text" id="webhook-url" name="webhook_url" inputmode="url" required value="${view.webhook?.url ?? ""}">
<p><button type="submit">${view.webhook === null ? "Add a webhook" : "Change webhook URL"}</button></p>
</form>
${
      view.webhook === null ? "" : html`<form method="post" action="${base}/rotate">${csrfField(signedIn)}
<p><button type="submit">Rotate the signing secret</button></p>
<p class="hint">The new secret is shown once; the old one keeps signing beside it for a while, so you can swap it without losing a delivery.</p>
</form>`
    }
<h2>Deliveries</h2>
${
      events.size === 0
        ? html`<p>No deliveries yet.</p>`
        : html`<p class="hint">Each delivery of a match to the webhook, with every attempt.</p><ul class="deliveries">${deliveries}</ul>`
    }
<h2>Delete</h2>
<form method="post" action="${base}/delete">${csrfField(signedIn)}
<p><button type="submit">Delete this watch</button></p>
</form>
<p><a href="/account/watches">Back to your watches</a></p>`,
    { signedIn }
  )
}

/** A webhook's signing secret, shown this once. */
export const secret = (view: WatchView.WatchView, secretText: string, signedIn: SignedIn, heading: string) =>
  layout(
    heading,
    html`<p class="notice good" role="status">Copy the signing secret of ${view.name} now: it is shown only this once.</p>
<div class="secret">
<code id="secret">${secretText}</code>
<button type="button" data-copy="secret" data-status="copy-status" hidden>Copy secret</button>
</div>
<p class="hint" id="copy-status" role="status"></p>
<p><a href="/account/watches/${view.id}">Back to ${view.name}</a></p>`,
    { signedIn, withScript: true }
  )
