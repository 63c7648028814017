import { Result, Schema } from "effect"
import { InvalidRequest } from "./errors.ts"
import type { ListingRecord } from "./Listing.ts"
import { derive, type Derived, matchesFilters } from "./ListingFilter.ts"
import { decodeListQuery, type ListFilters, ListQuerySchema } from "./ListQuery.ts"
import { effectivePlan, type PlanLimits, Plans, type StoredPlan } from "./Plan.ts"
import { quote } from "./Quote.ts"
import type { Instant } from "./Time.ts"

/*
 * Watches: saved `GET /domains` filters that record a match when a listing becomes readable to
 * the watch's account and passes them. The rules here are pure; the store keeps matches
 * unique per (watch, listing, listing generation) and runs a round in one transaction.
 */

/** `GET /domains` parameters a watch does not take: it sees each listing as it becomes readable, in no page. */
export const EXCLUDED_PARAMETERS = ["cursor", "since", "sort", "limit"] as const

export const NAME_MAX_LENGTH = 100

/** A watch's query as stored and shown: the canonical text of each filter given, by parameter name. */
export type QueryText = Readonly<Record<string, string>>

export interface DecodedQuery {
  readonly text: QueryText
  readonly filters: ListFilters
}

const encodeQuery = Schema.encodeSync(ListQuerySchema)

/**
 * Reads a watch's `query` from a JSON body: the `GET /domains` filters, each as the text the
 * query string would carry (a number, a boolean or, for comma-separated filters, an array of
 * texts is taken as that text). The same schema decides, with the same messages; the refused
 * parameter is named `query.<name>`. Undocumented names are ignored, as `GET /domains` does.
 */
export const decodeQuery = (raw: unknown): Result.Result<DecodedQuery, InvalidRequest> => {
  if (raw === undefined || raw === null) return Result.succeed({ text: {}, filters: {} })
  if (typeof raw !== "object" || Array.isArray(raw)) {
    return Result.fail(new InvalidRequest({ parameter: "query", message: "query accepts an object of GET /domains filters" }))
  }
  const texts: Record<string, string> = {}
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if ((EXCLUDED_PARAMETERS as ReadonlyArray<string>).includes(name)) {
      return Result.fail(
        new InvalidRequest({
          parameter: `query.${name}`,
          message: `${name} is not part of a watch: a watch hears of each listing as it becomes readable`
        })
      )
    }
    if (typeof value === "string") texts[name] = value
    else if (typeof value === "number" || typeof value === "boolean") texts[name] = String(value)
    else if (Array.isArray(value) && value.every((item) => typeof item === "string")) texts[name] = value.join(",")
    else {
      return Result.fail(new InvalidRequest({ parameter: `query.${name}`, message: `${name} accepts text, a number or a boolean` }))
    }
  }
  const decoded = decodeListQuery(texts)
  if (Result.isFailure(decoded)) {
    const refusal = decoded.failure
    return Result.fail(new InvalidRequest({ parameter: `query.${refusal.parameter}`, message: refusal.message }))
  }
  const canonical = encodeQuery(decoded.success) as Record<string, string | undefined>
  const text: Record<string, string> = {}
  for (const name of Object.keys(canonical).sort()) {
    const value = canonical[name]
    if (value !== undefined && !(EXCLUDED_PARAMETERS as ReadonlyArray<string>).includes(name)) text[name] = value
  }
  return Result.succeed({ text, filters: decoded.success.filters })
}

/** The filters of a stored query (written by `decodeQuery`, so it decodes). */
export const filtersOf = (text: QueryText): ListFilters => {
  const decoded = decodeListQuery(text)
  return Result.isSuccess(decoded) ? decoded.success.filters : {}
}

/** A watch's name: 1 to 100 characters after trimming. */
export const decodeName = (raw: unknown): Result.Result<string, InvalidRequest> => {
  const name = typeof raw === "string" ? raw.trim() : ""
  return name.length >= 1 && name.length <= NAME_MAX_LENGTH
    ? Result.succeed(name)
    : Result.fail(
      new InvalidRequest({
        parameter: "name",
        message: `name accepts text of 1 to ${NAME_MAX_LENGTH} characters${typeof raw === "string" ? `; got ${quote(raw)}` : ""}`
      })
    )
}

// ---------------------------------------------------------------------------------------------
// Matching

/** What a round of matching knows of one watch. */
export interface Candidate {
  readonly watchId: string
  readonly accountId: string
  readonly plan: StoredPlan
  readonly filters: ListFilters
  readonly createdAt: Instant
}

/**
 * Something that may have made a listing readable to someone: a change of the listing (written
 * by the store whenever a listing row is written), or a moment the clock reaches at which a
 * plan's access delay lets its accounts see it (scheduled by the change).
 */
export interface DueEvent {
  readonly listingId: string
  readonly dueAt: Instant
  readonly kind: "change" | "clock"
}

/** The instant from which an account on `plan` may read the listing (its access delay). */
export const readableFrom = (listing: Pick<ListingRecord, "discoveredAt">, plan: PlanLimits): Instant =>
  listing.discoveredAt + plan.accessDelayMs

/**
 * Whether `event` makes `listing` a match of `candidate` at `now`: the listing is active, the
 * account's plan lets it read the listing by now, it passes the watch's filters, and it became
 * readable (in its current form) no earlier than the watch was created. That a watch records a
 * listing at most once per listing generation is the store's unique key, not this rule.
 */
export const isMatch = (listing: ListingRecord, event: DueEvent, candidate: Candidate, now: Instant, derived?: Derived): boolean => {
  if (listing.status !== "active") return false
  const from = readableFrom(listing, effectivePlan(candidate.plan))
  if (from > now) return false
  if (Math.max(event.dueAt, from) < candidate.createdAt) return false
  return matchesFilters(listing, candidate.filters, now, derived)
}

/** The distinct access delays of the plan table, shortest first. */
export const ACCESS_DELAYS: ReadonlyArray<number> = [...new Set(Object.values(Plans).map((plan) => plan.accessDelayMs))].sort((a, b) => a - b)

/**
 * Change events are recorded only while some watch exists, so the first watch catches up: every
 * active listing discovered this long before it may still become readable to some plan after
 * it, and is queued as if just written (older ones are readable to every plan already).
 */
export const catchUpFrom = (firstWatchCreatedAt: Instant): Instant =>
  firstWatchCreatedAt - ACCESS_DELAYS[ACCESS_DELAYS.length - 1]!

/**
 * After a change of an active listing, the later moments at which another plan's access delay
 * lets its accounts read it: one clock event each.
 */
export const followUps = (listing: ListingRecord, now: Instant): ReadonlyArray<Instant> =>
  listing.status !== "active"
    ? []
    : ACCESS_DELAYS.map((delay) => listing.discoveredAt + delay).filter((at) => at > now)

export interface DueListing {
  readonly event: DueEvent
  /** The listing as it is now; undefined when no row has its id. */
  readonly listing: ListingRecord | undefined
  /** How many times the listing has come back after leaving the directory. */
  readonly generation: number
}

export interface NewMatch {
  readonly watchId: string
  readonly listingId: string
  readonly generation: number
}

export interface RoundPlan {
  readonly matches: ReadonlyArray<NewMatch>
  readonly followUps: ReadonlyArray<{ readonly listingId: string; readonly dueAt: Instant }>
}

/**
 * One round: the matches the due events make and the clock events they schedule. Its cost is
 * the events times the watches, never the directory's size.
 */
export const planRound = (due: ReadonlyArray<DueListing>, candidates: ReadonlyArray<Candidate>, now: Instant): RoundPlan => {
  const matches: Array<NewMatch> = []
  const later: Array<{ listingId: string; dueAt: Instant }> = []
  for (const { event, generation, listing } of due) {
    if (listing === undefined) continue
    // The search text and TLD once per listing, not once per watch.
    const derived = listing.status === "active" ? derive(listing) : undefined
    for (const candidate of candidates) {
      if (isMatch(listing, event, candidate, now, derived)) matches.push({ watchId: candidate.watchId, listingId: listing.id, generation })
    }
    if (event.kind === "change") for (const dueAt of followUps(listing, now)) later.push({ listingId: listing.id, dueAt })
  }
  return { matches, followUps: later }
}
