import { html, type SafeHtml } from "@remix-run/html-template"
import { Bands, type DirectoryArea, Errors, Listing, type ListQuery, type Plan, Time } from "@dropshelf/core"
import { layout, type SignedIn } from "./Pages.ts"

/*
 * The directory for a signed-in person: `GET /api/v1/domains` as a form and a table, one
 * listing with its Reveal and Hold buttons, and the reveal's confirmation. Every figure is shown
 * as the API publishes it (`Listing.toListingView`): bands, ranges, masked names.
 */

type Kind =
  | { readonly _tag: "text"; readonly numeric?: boolean }
  | { readonly _tag: "select"; readonly options: ReadonlyArray<readonly [value: string, label: string]> }
  | { readonly _tag: "checkbox"; readonly value: string }

interface Field {
  readonly name: keyof typeof ListQuery.ListQueryParameters
  readonly label: string
  readonly kind: Kind
  readonly hint?: string
}

const text: Kind = { _tag: "text" }
const numeric: Kind = { _tag: "text", numeric: true }

/** The form's fields, each a parameter of `GET /api/v1/domains` under its own name; the first ones always show. */
const FIELDS: ReadonlyArray<Field> = [
  { name: "q", label: "Search", kind: text, hint: "Words of the masked name, tags, category or blurb; never the real name." },
  { name: "tld", label: "TLD", kind: text, hint: "Without the dot, such as com or co.uk." },
  {
    name: "sort",
    label: "Order",
    kind: { _tag: "select", options: [["", "By id"], ["latest", "Newest first"]] }
  },
  { name: "limit", label: "Per page", kind: numeric, hint: "1 to 250; 50 when empty." },
  { name: "category", label: "Categories", kind: text, hint: "Category codes, comma-separated." },
  { name: "source", label: "Sources", kind: text, hint: "Source codes, comma-separated." },
  {
    name: "priceRange",
    label: "Price range",
    kind: { _tag: "select", options: [["", "Any"], ...Bands.PRICE_RANGES.map((range) => [range, range] as const)] }
  },
  { name: "rd", label: "Referring domains", kind: text, hint: `Bands, comma-separated: ${Bands.REFERRING_DOMAIN_BANDS.join(", ")}.` },
  {
    name: "spam",
    label: "Spam",
    kind: { _tag: "select", options: [["", "Any"], ...Listing.Spam.literals.map((level) => [level, level] as const)] }
  },
  {
    name: "featured",
    label: "Featured",
    kind: { _tag: "select", options: [["", "Any"], ["true", "Only featured"], ["false", "Not featured"]] }
  },
  { name: "ageMin", label: "Minimum age (years)", kind: numeric },
  { name: "checkedDays", label: "Availability checked within (days)", kind: numeric },
  { name: "citabilityMin", label: "Minimum agent citability (0 to 100)", kind: numeric },
  { name: "rsMin", label: "Directory score from (0 to 100)", kind: numeric },
  { name: "rsMax", label: "Directory score to (0 to 100)", kind: numeric },
  { name: "recommended", label: "Recommended only", kind: { _tag: "checkbox", value: "true" } },
  { name: "tier", label: "Open names only", kind: { _tag: "checkbox", value: "open" } }
]
const ALWAYS_SHOWN = 4

/** The parameters the page reads from its own query string: the form's fields and the cursor. */
export const PARAMETERS: ReadonlyArray<string> = [...FIELDS.map((field) => field.name), "cursor"]

/**
 * The query as the API would read it from this page's query string: the form's parameters; an
 * empty field (what a form sends for one left blank) is a parameter not given.
 */
export const queryOf = (params: URLSearchParams): ListQuery.RawQuery => {
  const raw: Record<string, string | ReadonlyArray<string>> = {}
  for (const name of PARAMETERS) {
    const values = params.getAll(name).filter((value) => value !== "")
    if (values.length > 0) raw[name] = values.length === 1 ? values[0]! : values
  }
  return raw
}

/** This page's query string for `raw` with `cursor` in place of any it had. */
/** The form's filters alone, as a watch's query takes them: no order, size, position or since. */
const watchQueryOf = (raw: ListQuery.RawQuery): string => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || ["cursor", "sort", "limit", "since"].includes(name)) continue
    for (const item of typeof value === "string" ? [value] : value) params.append(name, item)
  }
  return params.toString()
}

const withCursor = (raw: ListQuery.RawQuery, cursor: string | undefined): string => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(raw)) {
    if (name === "cursor" || value === undefined) continue
    for (const item of typeof value === "string" ? [value] : value) params.append(name, item)
  }
  if (cursor !== undefined) params.set("cursor", cursor)
  const query = params.toString()
  return query === "" ? "" : `?${query}`
}

const when = (instant: string | number | null | undefined): SafeHtml => {
  if (instant === null || instant === undefined) return html`never`
  const iso = typeof instant === "number" ? Time.toIso(instant) : instant
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace("T", " ")} UTC</time>`
}

const dollars = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" })
const valueOf = (cents: number) => dollars.format(cents / 100)
const orDash = (value: string | number | null | undefined) => value === null || value === undefined ? "—" : String(value)
const scoreOf = (view: Listing.ListingView) => view.directory_score === undefined ? "—" : `${view.directory_score.low}-${view.directory_score.high}`

/** The name as this reader is told it: the domain once disclosed, else the masked hint. */
const nameOf = (view: Listing.ListingView): SafeHtml =>
  view.domain !== null ? html`${view.domain}` : html`<span class="masked">${view.mask_hint ?? "masked"}</span>`

const holdOf = (view: Listing.ListingView): SafeHtml =>
  view.hold_state === "none"
    ? html`none`
    : view.hold_state === "mine"
    ? html`yours until ${when(view.hold_expires_at)}`
    : html`another account's, until ${when(view.hold_expires_at)}`

export interface Refusal {
  readonly parameter: string
  readonly message: string
}

const fieldHtml = (field: Field, raw: ListQuery.RawQuery, refusal: Refusal | undefined): SafeHtml => {
  const id = `f-${field.name}`
  const sent = raw[field.name]
  const value = typeof sent === "string" ? sent : sent?.join(",") ?? ""
  const refused = refusal?.parameter === field.name
  const described = [field.hint === undefined ? undefined : `${id}-hint`, refused ? `${id}-error` : undefined]
    .filter((part) => part !== undefined).join(" ")
  const hint = field.hint === undefined ? "" : html`<p class="hint" id="${id}-hint">${field.hint}</p>`
  const error = refused ? html`<p class="notice bad" id="${id}-error">${refusal.message}</p>` : ""
  const invalid = refused ? "true" : "false"
  switch (field.kind._tag) {
    case "text":
      return html`<label for="${id}">${field.label}</label>
<input type="text" id="${id}" name="${field.name}" value="${value}"${field.kind.numeric === true ? html` inputmode="numeric"` : ""} aria-invalid="${invalid}"${
        described === "" ? "" : html` aria-describedby="${described}"`
      }>${hint}${error}`
    case "select":
      return html`<label for="${id}">${field.label}</label>
<select id="${id}" name="${field.name}" aria-invalid="${invalid}"${described === "" ? "" : html` aria-describedby="${described}"`}>
${field.kind.options.map(([option, label]) => html`<option value="${option}"${option === value ? html` selected` : ""}>${label}</option>`)}
</select>${hint}${error}`
    case "checkbox":
      return html`<label for="${id}"><input type="checkbox" id="${id}" name="${field.name}" value="${field.kind.value}"${
        value === field.kind.value ? html` checked` : ""
      } aria-invalid="${invalid}"${described === "" ? "" : html` aria-describedby="${described}"`}> ${field.label}</label>${hint}${error}`
  }
}

const rowHtml = (view: Listing.ListingView): SafeHtml =>
  html`<tr>
<td data-label="Name"><a href="/account/directory/${view.id}">${nameOf(view)}</a></td>
<td data-label="Tier">${view.tier}${view.featured === true ? " (featured)" : ""}</td>
<td data-label="Value">${valueOf(view.estimated_value_cents)}</td>
<td data-label="Category">${orDash(view.category)}</td>
<td data-label="Age">${orDash(view.age_years)}</td>
<td data-label="Backlinks">${orDash(view.backlinks)}</td>
<td data-label="Referring domains">${orDash(view.referring_domains)}</td>
<td data-label="Authority">${orDash(view.domain_authority)}</td>
<td data-label="Score">${scoreOf(view)}</td>
<td data-label="Spam">${orDash(view.spam)}</td>
<td data-label="Hold">${holdOf(view)}</td>
</tr>`

/** `GET /account/directory`: the form as sent, and its page of listings or the refusal of a field. */
export const directory = (options: {
  readonly raw: ListQuery.RawQuery
  readonly plan: Plan.PlanLimits
  readonly signedIn: SignedIn
  readonly page?: Listing.ReaderPage | undefined
  readonly refusal?: Refusal | undefined
}) => {
  const { page, raw, refusal } = options
  const refusedField = refusal === undefined ? undefined : FIELDS.find((field) => field.name === refusal.parameter)
  const moreOpen = FIELDS.slice(ALWAYS_SHOWN).some((field) => raw[field.name] !== undefined || field.name === refusal?.parameter)
  const views = page === undefined
    ? []
    : page.rows.flatMap((row) => row._tag === "Listing" ? [Listing.toListingView(row.listing, row.reader)] : [])
  const delayDays = options.plan.accessDelayMs / Time.DAY
  const results = page === undefined ? "" : html`<h2 id="results">Listings</h2>
${
    views.length === 0 ? html`<p>No listing matches.</p>` : html`<table aria-labelledby="results">
<thead><tr><th scope="col">Name</th><th scope="col">Tier</th><th scope="col">Value</th><th scope="col">Category</th><th scope="col">Age (years)</th><th scope="col">Backlinks</th><th scope="col">Referring domains</th><th scope="col">Authority</th><th scope="col">Score</th><th scope="col">Spam</th><th scope="col">Hold</th></tr></thead>
<tbody>${views.map(rowHtml)}</tbody>
</table>`
  }
<nav aria-label="Pages">
${raw.cursor === undefined ? "" : html`<a href="/account/directory${withCursor(raw, undefined)}">First page</a>`}
${page.nextCursor === null ? "" : html`<a href="/account/directory${withCursor(raw, page.nextCursor)}" rel="next">Next page</a>`}
</nav>
<p><a href="/account/watches?${new URLSearchParams({ query: watchQueryOf(raw) }).toString()}#new-watch">Watch this search</a>: be told of new listings that match it.</p>`
  return layout(
    "Directory",
    html`<p>The directory as your keys read it: ${
      options.plan.revealsPerMonth === null ? "every name shown" : "names masked until you reveal them, open names shown"
    }${
      delayDays === 0 ? "" : html`, and only listings older than ${delayDays} ${delayDays === 1 ? "day" : "days"} on your plan`
    }. Reading spends nothing.</p>
${
      refusal === undefined
        ? ""
        : refusedField === undefined
        ? html`<p class="notice bad" role="alert">${refusal.message}</p>`
        : html`<p class="notice bad" role="alert">${refusedField.label} needs another value: see <a href="#f-${refusedField.name}">the field</a> below.</p>`
    }
<form method="get" action="/account/directory" aria-label="Filters">
${FIELDS.slice(0, ALWAYS_SHOWN).map((field) => fieldHtml(field, raw, refusal))}
<details${moreOpen ? html` open` : ""}>
<summary>More filters</summary>
${FIELDS.slice(ALWAYS_SHOWN).map((field) => fieldHtml(field, raw, refusal))}
</details>
<p><button type="submit">Show listings</button> <a href="/account/directory">Clear</a></p>
</form>
${results}`,
    { signedIn: options.signedIn }
  )
}

/** A refusal of a reveal or a hold, as the page says it, and the status it is sent with. */
export const refusalOf = (
  error: Errors.RevealError | Errors.HoldError,
  upgradeUrl: string | undefined
): { readonly status: number; readonly message: SafeHtml } => {
  const upgrade = upgradeUrl === undefined ? "" : html` <a href="${upgradeUrl}">Upgrade your plan</a>.`
  switch (error._tag) {
    case "QuotaExhausted":
      return { status: 402, message: html`You have used this month's reveals; they come back ${when(error.resetsAt)}.${upgrade}` }
    case "FeaturedRequiresPro":
      return { status: 402, message: html`Revealing a featured listing needs the pro or business plan.${upgrade}` }
    case "HoldsRequirePro":
      return { status: 402, message: html`Holds need the pro or business plan.${upgrade}` }
    case "HeldByOther":
      return { status: 403, message: html`Another account holds this listing until ${when(error.expiresAt)}. Try again after.` }
    case "RevealRequired":
      return { status: 403, message: html`Reveal the listing before holding it.` }
    case "HoldCapReached":
      return { status: 403, message: html`All ${error.limit} holds your plan allows are running. End one to hold another.` }
    case "HoldCooldown":
      return {
        status: 403,
        message: html`Your own hold on this listing ended within 30 days; you can hold it again from ${when(error.availableAt)}.`
      }
    case "ListingNotFound":
      return { status: 404, message: html`This listing is not in the directory your plan reads.` }
  }
}

const revealSection = (
  view: Listing.ListingView,
  outlook: DirectoryArea.RevealOutlook,
  csrf: string,
  upgradeUrl: string | undefined
): SafeHtml => {
  const action = `/account/directory/${view.id}/reveal`
  switch (outlook._tag) {
    case "Repeat":
      return html`<p>You revealed this name on ${when(outlook.revealedAt)}.</p>`
    case "Free":
      return html`<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${csrf}">
<p><button type="submit">Reveal</button></p>
<p class="hint">Free: this reveal does not count against your monthly reveals.</p>
</form>`
    case "Charged":
      return outlook.remaining === 0
        ? html`<p class="notice bad">${refusalOf(new Errors.QuotaExhausted({ resetsAt: outlook.resetsAt }), upgradeUrl).message}</p>`
        : html`<form method="get" action="${action}">
<p><button type="submit">Reveal</button></p>
<p class="hint">A reveal uses one of your ${outlook.remaining} remaining reveals this month; you confirm it first.</p>
</form>`
    case "Refused":
      return html`<p class="notice bad">${refusalOf(outlook.error, upgradeUrl).message}</p>`
  }
}

const holdSection = (view: Listing.ListingView, plan: Plan.PlanLimits, csrf: string, upgradeUrl: string | undefined): SafeHtml => {
  if (plan.concurrentHolds === 0) return html`<p class="notice">${refusalOf(new Errors.HoldsRequirePro(), upgradeUrl).message}</p>`
  if (view.hold_state === "mine") return html`<p>You hold this listing until ${when(view.hold_expires_at)}.</p>`
  return html`<form method="post" action="/account/directory/${view.id}/hold">
<input type="hidden" name="csrf" value="${csrf}">
<p><button type="submit">Hold</button></p>
<p class="hint">Keeps it for your account for ${plan.holdHours} hours, after a reveal; it does not register the name.</p>
</form>`
}

/** `GET /account/directory/{id}`: one listing as the person reads it, with Reveal and Hold. */
export const listing = (options: {
  readonly outlook: DirectoryArea.ListingOutlook
  readonly plan: Plan.PlanLimits
  readonly signedIn: SignedIn
  readonly upgradeUrl: string | undefined
  readonly done?: "reveal" | "hold" | undefined
  readonly refusal?: SafeHtml | undefined
}) => {
  const view = Listing.toListingView(options.outlook.listing.listing, options.outlook.listing.reader)
  const title = view.domain ?? `Masked listing ${view.mask_hint ?? view.id}`
  const done = options.done === "reveal" && view.domain !== null
    ? html`<p class="notice good" role="status">Revealed: ${view.domain}.</p>`
    : options.done === "hold" && view.hold_state === "mine"
    ? html`<p class="notice good" role="status">Held until ${when(view.hold_expires_at)}.</p>`
    : ""
  return layout(
    title,
    html`${done}
${options.refusal === undefined ? "" : html`<p class="notice bad" role="alert">${options.refusal}</p>`}
<dl>
<dt>Name</dt><dd>${view.domain === null ? html`masked: ${nameOf(view)}` : view.domain}</dd>
<dt>Listing id</dt><dd><code>${view.id}</code></dd>
<dt>Tier</dt><dd>${view.tier}${view.featured === true ? " (featured)" : ""}</dd>
<dt>TLD</dt><dd>${view.tld}</dd>
<dt>Length</dt><dd>${orDash(view.length_bucket)}</dd>
<dt>Estimated value</dt><dd>${valueOf(view.estimated_value_cents)}</dd>
<dt>Category</dt><dd>${orDash(view.category)}</dd>
<dt>Age</dt><dd>${view.age_years === null || view.age_years === undefined ? "—" : `${view.age_years} years`}</dd>
<dt>Backlinks</dt><dd>${orDash(view.backlinks)}</dd>
<dt>Referring domains</dt><dd>${orDash(view.referring_domains)}</dd>
<dt>Domain authority</dt><dd>${orDash(view.domain_authority)}</dd>
<dt>Snapshots</dt><dd>${orDash(view.snapshots)}</dd>
<dt>Words</dt><dd>${orDash(view.word_count)}</dd>
<dt>Spam</dt><dd>${orDash(view.spam)}</dd>
<dt>Directory score</dt><dd>${scoreOf(view)}</dd>
<dt>Agent citability</dt><dd>${view.agent_citability === null || view.agent_citability === undefined ? "—" : view.agent_citability.score}</dd>
<dt>Linked by</dt><dd>${view.linked_by === undefined || view.linked_by.length === 0 ? "—" : view.linked_by.join(", ")}</dd>
<dt>Availability checked</dt><dd>${view.availability_checked_at === undefined ? "never" : when(view.availability_checked_at)}</dd>
<dt>Discovered</dt><dd>${when(view.discovered_at)}</dd>
<dt>Hold</dt><dd>${holdOf(view)}</dd>
<dt>Missing metrics</dt><dd>${view.metrics_missing.length === 0 ? "none" : view.metrics_missing.join(", ")}</dd>
</dl>
<h2>Reveal</h2>
${revealSection(view, options.outlook.reveal, options.signedIn.csrf, options.upgradeUrl)}
<h2>Hold</h2>
${holdSection(view, options.plan, options.signedIn.csrf, options.upgradeUrl)}
<p><a href="/account/directory">Back to the directory</a></p>`,
    { signedIn: options.signedIn }
  )
}

/** `GET /account/directory/{id}/reveal`: the confirmation of a reveal that spends one of the month's. */
export const confirmReveal = (options: {
  readonly outlook: DirectoryArea.ListingOutlook
  readonly charged: { readonly remaining: number; readonly limit: number; readonly resetsAt: number }
  readonly signedIn: SignedIn
}) => {
  const view = Listing.toListingView(options.outlook.listing.listing, options.outlook.listing.reader)
  const { limit, remaining, resetsAt } = options.charged
  return layout(
    "Reveal this name?",
    html`<p>Revealing <span class="masked">${view.mask_hint ?? view.id}</span> uses one of your reveals this month:
you have ${remaining} of ${limit} left, and they come back ${when(resetsAt)}. Revealing it again later is free.</p>
<form method="post" action="/account/directory/${view.id}/reveal">
<input type="hidden" name="csrf" value="${options.signedIn.csrf}">
<p><button type="submit">Reveal and use one</button> <a href="/account/directory/${view.id}">Cancel</a></p>
</form>`,
    { signedIn: options.signedIn }
  )
}

/** A listing this person cannot read: not there, left, or newer than the plan's access delay. */
export const listingNotFound = (signedIn: SignedIn, plan: Plan.PlanLimits) =>
  layout(
    "No such listing",
    html`<p class="notice bad">No listing at this address is in the directory your plan reads: it left the directory${
      plan.accessDelayMs === 0 ? "" : html`, or it is newer than your plan's ${plan.accessDelayMs / Time.DAY}-day delay`
    }.</p>
<p><a href="/account/directory">Back to the directory</a></p>`,
    { signedIn }
  )
