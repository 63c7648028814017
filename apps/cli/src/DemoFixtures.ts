import { HoldStore, type Ids, ImportLine, ListingStore, Plan, Time, Watch, WatchStore, Webhook } from "@dropshelf/core"
import * as Examples from "@dropshelf/api/Examples"
import { Clock, Effect, Result } from "effect"
import { randomBytes } from "node:crypto"

/*
 * What the API reference's examples name (packages/api/src/Examples.ts), made real in the demo
 * directory for its business account: a listing, that account's hold on it, a watch with a paused
 * webhook and one match, and a second watch. So every snippet on `/docs` answers 2xx with the
 * demo's business key, and a collection generated from the document runs in its order.
 */

/** An aged .com name in tech, readable by every plan, that passes the example watch's filters. */
const LISTING: ImportLine.ImportLine = {
  id: Examples.LISTING_ID,
  domain: "brightharbor.com",
  tier: "regular",
  status: "active",
  discovered_at: "",
  category: "tech",
  age_years: 12,
  backlinks: 18_400,
  referring_domains: 1_270,
  snapshots: 940,
  domain_authority: 41,
  directory_score: 72,
  linked_by: ["techcrunch.com"],
  tags: ["bright", "harbor", "saas"],
  blurb: "Aged tech name, 12 years old, 18,400 backlinks.",
  source: "expireddomains",
  agent_citability: { score: 38, sources: ["perplexity"] },
  featured_rank: null,
  estimated_value_cents: 64_000,
  spam: "low"
}

/** A watch's name and filters as `POST /watches` reads them. */
const watchBody = (body: { readonly name: string; readonly query: Readonly<Record<string, string | number>> }) => {
  const decoded = Watch.decodeCreate(body)
  if (Result.isFailure(decoded)) throw new Error(`the demo's fixture watch is refused: ${decoded.failure.message}`)
  return { name: decoded.success.name, query: decoded.success.query?.text ?? {} }
}

const noRandomIds = (): Uint8Array => {
  throw new Error("the fixture listing carries its id")
}

/**
 * On the demo's first run (the fixture listing absent): the two watches first, then the listing,
 * which enters the directory after them and so matches the first; matching runs until no event
 * is left, naming that match `EVENT_ID`; then the business account holds the listing as `HOLD_ID`.
 */
export const ensure = Effect.fnUntraced(function*(businessAccountId: string) {
  const listings = yield* ListingStore.ListingStore
  if ((yield* listings.find(Examples.LISTING_ID as Ids.ListingId)) !== undefined) return
  const watchStore = yield* WatchStore.WatchStore
  const holds = yield* HoldStore.HoldStore
  const now = yield* Clock.currentTimeMillis
  const limit = Plan.Plans.business.watches

  yield* Effect.orDie(watchStore.create({
    id: Examples.WATCH_ID,
    accountId: businessAccountId,
    ...watchBody({ name: "Tech and food .com names", query: Examples.WATCH_QUERY }),
    // Paused as after failed deliveries: the demo never sends to this receiver.
    webhook: {
      url: "https://hooks.example.com/dropshelf",
      secret: Webhook.secretFrom(randomBytes(Webhook.SECRET_BYTES)),
      previousSecret: null,
      previousSecretUntil: null,
      state: "paused",
      stateReason: "deliveries failed for 24 hours"
    },
    paused: false,
    createdAt: now,
    updatedAt: now
  }, limit))
  yield* Effect.orDie(watchStore.create({
    id: Examples.WATCH_TO_DELETE_ID,
    accountId: businessAccountId,
    ...watchBody({ name: "Aged .net names", query: { tld: "net", ageMin: 10 } }),
    webhook: null,
    paused: false,
    createdAt: now,
    updatedAt: now
  }, limit))

  const line = { ...LISTING, discovered_at: Time.toIso(now - 30 * Time.DAY), availability_checked_at: Time.toIso(now - Time.DAY) }
  const input = ImportLine.importLineToInput(line, now, noRandomIds)
  if (Result.isFailure(input)) return yield* Effect.die(new Error(`the demo's fixture listing is refused: ${input.failure}`))
  yield* listings.upsert([input.success])

  // The worker's rounds, as Watches runs them, but naming the example match by its documented id.
  const idOf = (match: Watch.NewMatch) =>
    match.watchId === Examples.WATCH_ID && match.listingId === Examples.LISTING_ID ? Examples.EVENT_ID : undefined
  const round = Effect.flatMap(Clock.currentTimeMillis, (at) =>
    watchStore.matchRound({
      now: at,
      limit: 500,
      plan: (due, candidates) => {
        const planned = Watch.planRound(due, candidates.map((row) => ({ ...row, filters: Watch.filtersOf(row.query) })), at)
        return { ...planned, matches: planned.matches.map((match) => ({ ...match, id: idOf(match) })) }
      }
    }))
  while ((yield* round).events > 0) {}

  yield* Effect.orDie(holds.acquire({
    accountId: businessAccountId,
    listingId: Examples.LISTING_ID,
    plan: Plan.effectivePlan("business"),
    now: yield* Clock.currentTimeMillis,
    id: Examples.HOLD_ID
  }))
})
