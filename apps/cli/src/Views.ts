import { ApiKey, type AccountStore, Hold, type Keyset, type KeyStore, type Listing, type Operators, Plan, type RevealLedger } from "@dropshelf/core"

/*
 * What the operator's read commands print: the `--json` document (snake_case, ISO 8601 instants
 * in UTC, as the API writes them) and the human text, from the core's records. Never a key's
 * secret or digest: a key is its prefix.
 */

const iso = (instant: number | null): string | null => (instant === null ? null : new Date(instant).toISOString())

export const accountView = (account: AccountStore.AccountRecord) => ({
  id: account.id,
  name: account.name,
  email: account.email,
  plan: account.plan,
  reads_as: Plan.effectivePlan(account.plan).name,
  created_at: iso(account.createdAt)
})

export const keyView = (key: KeyStore.KeyRecord, now: number) => ({
  id: key.id,
  prefix: key.prefix,
  name: key.name,
  state: ApiKey.keyStateAt(key, now),
  created_at: iso(key.createdAt),
  last_used_at: iso(key.lastUsedAt),
  revoked_at: iso(key.revokedAt),
  expires_at: iso(key.expiresAt),
  // A connected application (an assistant signed in with OAuth): which, and what it may do.
  application: key.application
    ? { client_id: key.application.clientId, client_name: key.application.clientName, scopes: key.application.scopes }
    : null
})

export const holdView = (hold: Hold.HoldRecord, now: number) => ({
  id: hold.id,
  account_id: hold.accountId,
  listing_id: hold.listingId,
  state: Hold.statusAt(hold, now),
  held_at: iso(hold.heldAt),
  expires_at: iso(hold.expiresAt),
  ended_at: iso(Hold.endedAt(hold, now)),
  extended: hold.extended
})

export const revealView = (entry: RevealLedger.RevealEntry) => ({
  listing_id: entry.listingId,
  revealed_at: iso(entry.revealedAt),
  charged: entry.charged
})

/** A listing as stored, in the import format's field names: the exact figures an operator imported. */
export const storedListingView = (listing: Listing.ListingRecord) => ({
  id: listing.id,
  domain: listing.domain,
  tier: listing.tier,
  status: listing.status,
  discovered_at: iso(listing.discoveredAt),
  updated_at: iso(listing.updatedAt),
  estimated_value_cents: listing.estimatedValueCents,
  category: listing.category,
  age_years: listing.ageYears,
  backlinks: listing.backlinks,
  referring_domains: listing.referringDomains,
  snapshots: listing.snapshots,
  domain_authority: listing.domainAuthority,
  directory_score: listing.directoryScore,
  spam: listing.spam,
  linked_by: listing.linkedBy,
  tags: listing.tags,
  blurb: listing.blurb,
  source: listing.source,
  agent_citability: listing.agentCitability,
  featured_rank: listing.featuredRank,
  availability_checked_at: iso(listing.availabilityCheckedAt),
  mask_hint: listing.maskHint
})

export const listingOverviewView = (overview: Operators.ListingOverview) => {
  const plan = (reading: Operators.PlanReading) => ({
    listed: reading.listed,
    visible_from: iso(reading.visibleFrom),
    can_reveal: reading.canReveal,
    reveal_charged: reading.revealCharged
  })
  return {
    stored: storedListingView(overview.listing),
    published: overview.published,
    plans: { free: plan(overview.plans.free), pro: plan(overview.plans.pro), business: plan(overview.plans.business) }
  }
}

export const accountOverviewView = (overview: Operators.AccountOverview, now: number) => {
  const limit = Plan.effectivePlan(overview.account.plan).revealsPerMonth
  return {
    ...accountView(overview.account),
    keys: overview.keys.map((key) => keyView(key, now)),
    reveals_this_month: { month: overview.month, used: overview.revealsThisMonth, limit },
    running_holds: overview.runningHolds.map((hold) => holdView(hold, now))
  }
}

export const pageView = <A, B>(page: Keyset.KeysetPage<A>, view: (row: A) => B) => ({
  data: page.data.map(view),
  next: page.next
})

/** Rows as aligned columns under a header; the last line says how to read on. */
export const table = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string | number | boolean | null>>,
  next: string | null = null
): string => {
  if (rows.length === 0) return "(none)"
  const cells = [header, ...rows.map((row) => row.map((cell) => (cell === null ? "-" : String(cell))))]
  const widths = header.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)))
  const lines = cells.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd())
  if (next !== null) lines.push(`(more: --after ${next})`)
  return lines.join("\n")
}
