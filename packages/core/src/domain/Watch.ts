import { Result, Schema } from "effect"
import { InvalidRequest } from "./errors.ts"
import type { ListingRecord } from "./Listing.ts"
import { derive, type Derived, matchesFilters } from "./ListingFilter.ts"
import { decodeListQuery, LIST_PARAMETERS, type ListFilters, ListQuerySchema } from "./ListQuery.ts"
import { effectivePlan, type PlanLimits, Plans, type StoredPlan } from "./Plan.ts"
import { quote } from "./Quote.ts"
import * as Text from "./Text.ts"
import type { Instant } from "./Time.ts"

/*
 * Watches: saved `GET /domains` filters that record a match when a listing becomes readable to
 * the watch's account and passes them, or an operator's change makes a readable listing newly
 * pass them (`isMatch`). The rules here are pure; the stores record events and versions, keep
 * matches unique per (watch, listing, listing generation) and run a round in one transaction.
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

/** The `GET /domains` parameters a watch's query takes. */
export const QUERY_PARAMETERS: ReadonlyArray<string> = LIST_PARAMETERS.filter((name) =>
  name !== "checkedDays" && !(EXCLUDED_PARAMETERS as ReadonlyArray<string>).includes(name)
)

const CHECKED_DAYS_REFUSAL =
  "checkedDays is not part of a watch: it reads when the name was last checked, relative to now, and any account's reveal checks it again, so a watch on it would tell its owner what other accounts did"

const refuse = (parameter: string, message: string) => Result.fail(new InvalidRequest({ parameter, message }))

/**
 * Reads a watch's `query` from a JSON body: the `GET /domains` filters, each as the text the
 * query string would carry (a number, a boolean or, for comma-separated filters, an array of
 * texts is taken as that text). The same schema decides, with the same messages; the refused
 * parameter is named `query.<name>`. Unlike `GET /domains`, an undocumented name is refused: a
 * stored definition is not a query string, and a misspelt filter would silently watch everything.
 */
export const decodeQuery = (raw: unknown): Result.Result<DecodedQuery, InvalidRequest> => {
  if (raw === undefined || raw === null) return Result.succeed({ text: {}, filters: {} })
  if (typeof raw !== "object" || Array.isArray(raw)) return refuse("query", "query accepts an object of GET /domains filters")
  const texts: Record<string, string> = {}
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const parameter = `query.${name}`
    if ((EXCLUDED_PARAMETERS as ReadonlyArray<string>).includes(name)) {
      return refuse(parameter, `${name} is not part of a watch: a watch hears of each listing as it becomes readable`)
    }
    if (name === "checkedDays") return refuse(parameter, CHECKED_DAYS_REFUSAL)
    if (!QUERY_PARAMETERS.includes(name)) {
      return refuse(parameter, `${quote(name)} is not a GET /domains filter; a watch's query takes ${QUERY_PARAMETERS.join(", ")}`)
    }
    let text: string
    if (typeof value === "string") text = value
    else if ((typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean") text = String(value)
    else if (Array.isArray(value) && value.every((item) => typeof item === "string")) text = value.join(",")
    else return refuse(parameter, `${name} accepts text, a number or a boolean`)
    const stored = Text.storable(parameter, text)
    if (Result.isFailure(stored)) return Result.fail(stored.failure)
    texts[name] = text
  }
  const decoded = decodeListQuery(texts)
  if (Result.isFailure(decoded)) {
    const refusal = decoded.failure
    return refuse(`query.${refusal.parameter}`, refusal.message)
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

/** A watch's name: 1 to 100 characters after trimming, storable. */
export const decodeName = (raw: unknown): Result.Result<string, InvalidRequest> => {
  if (typeof raw === "string") {
    const stored = Text.storable("name", raw)
    if (Result.isFailure(stored)) return Result.fail(stored.failure)
  }
  const name = typeof raw === "string" ? raw.trim() : ""
  return name.length >= 1 && name.length <= NAME_MAX_LENGTH
    ? Result.succeed(name)
    : refuse("name", `name accepts text of 1 to ${NAME_MAX_LENGTH} characters${typeof raw === "string" ? `; got ${quote(raw)}` : ""}`)
}

/** A watch write as read from a JSON body (REST) or a tool's arguments (MCP); absent fields are undefined. */
export interface WatchInput {
  readonly name?: string | undefined
  readonly query?: DecodedQuery | undefined
  /** A URL as sent (checked by the use case, which knows whether private receivers are allowed); null removes. */
  readonly webhookUrl?: string | null | undefined
  readonly paused?: boolean | undefined
}

const CREATE_FIELDS = ["name", "query", "webhook_url"] as const
const PATCH_FIELDS = ["name", "query", "webhook_url", "paused"] as const

const decodeInput = (raw: unknown, fields: ReadonlyArray<string>): Result.Result<WatchInput, InvalidRequest> => {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return refuse("body", `body accepts a JSON object with ${fields.join(", ")}`)
  }
  const body = raw as Record<string, unknown>
  for (const key of Object.keys(body)) {
    if (!fields.includes(key)) return refuse(key, `${quote(key)} is not a field of a watch; a watch takes ${fields.join(", ")}`)
  }
  const input: { -readonly [K in keyof WatchInput]: WatchInput[K] } = {}
  if (body.name !== undefined) {
    const name = decodeName(body.name)
    if (Result.isFailure(name)) return Result.fail(name.failure)
    input.name = name.success
  }
  if (body.query !== undefined) {
    const query = decodeQuery(body.query)
    if (Result.isFailure(query)) return Result.fail(query.failure)
    input.query = query.success
  }
  if (body.webhook_url !== undefined) {
    const url = body.webhook_url
    if (url !== null && typeof url !== "string") return refuse("webhook_url", "webhook_url accepts an absolute https URL, or null")
    if (typeof url === "string") {
      const stored = Text.storable("webhook_url", url)
      if (Result.isFailure(stored)) return Result.fail(stored.failure)
    }
    input.webhookUrl = url
  }
  if (body.paused !== undefined) {
    if (typeof body.paused !== "boolean") return refuse("paused", "paused accepts true or false")
    input.paused = body.paused
  }
  return Result.succeed(input)
}

/** The body of a new watch: `name` (required), `query`, `webhook_url`; any other key, or a field of another type, is refused naming it. */
export const decodeCreate = (raw: unknown): Result.Result<WatchInput & { readonly name: string }, InvalidRequest> => {
  const input = decodeInput(raw, CREATE_FIELDS)
  if (Result.isFailure(input)) return Result.fail(input.failure)
  if (input.success.name === undefined) return decodeName(undefined) as Result.Result<never, InvalidRequest>
  return Result.succeed({ ...input.success, name: input.success.name })
}

/** The body of a change: any of `name`, `query`, `webhook_url` (null removes the webhook), `paused`. */
export const decodePatch = (raw: unknown): Result.Result<WatchInput, InvalidRequest> => decodeInput(raw, PATCH_FIELDS)

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
 * Something that may have made a listing a match, recorded by the store: a write of the listing
 * row (`insert`: the row is new; `update`: it existed, and `previous` is its version before the
 * write; `change`: a write whose previous version is unknown, recorded before versions were or
 * queued by the first watch's catch-up), or an instant the clock reaches at which some plan's
 * access delay ends (`clock`, scheduled by a write).
 */
export interface DueEvent {
  readonly listingId: string
  readonly dueAt: Instant
  readonly kind: "insert" | "update" | "change" | "clock"
  /** The listing before an `update`; undefined for the other kinds. */
  readonly previous?: ListingRecord | undefined
}

/** The instant from which an account on `plan` may read the listing (its access delay). */
export const readableFrom = (listing: Pick<ListingRecord, "discoveredAt">, plan: PlanLimits): Instant =>
  listing.discoveredAt + plan.accessDelayMs

/**
 * The filters a watch matches with: all but `checkedDays`, which reads the availability stamp
 * relative to the reading instant, and any caller's reveal moves the stamp (decision 0012).
 */
export const matchingFilters = (filters: ListFilters): ListFilters => {
  if (filters.checkedDays === undefined) return filters
  const { checkedDays: _, ...rest } = filters
  return rest
}

/**
 * Whether `event` makes `listing` (as it is at `now`) a match of `candidate`. Only two things do,
 * so that a watch never tells its owner what another account did (decision 0012):
 *  (a) the listing becomes readable to the account at or after the watch's creation and fits:
 *      it enters the directory active (an insert, or an update from a version that was not
 *      active, as a comeback is), or the account's own plan's delay ends (a clock event at
 *      exactly `readableFrom`);
 *  (b) an update at or after the watch's creation, of a listing the account could already read,
 *      makes it newly fit: its previous version did not, its current one does.
 * A write whose previous version is unknown matches only when the account's delay ends at or
 * after the watch's creation. That a watch records a listing at most once per listing
 * generation is the store's unique key, not this rule.
 */
export const isMatch = (listing: ListingRecord, event: DueEvent, candidate: Candidate, now: Instant, derived?: Derived): boolean => {
  if (listing.status !== "active") return false
  const plan = effectivePlan(candidate.plan)
  const from = readableFrom(listing, plan)
  if (from > now) return false
  const filters = matchingFilters(candidate.filters)
  const previous = event.kind === "update" ? event.previous : undefined
  if (event.kind === "clock") {
    if (event.dueAt !== from || from < candidate.createdAt) return false
  } else if (event.kind === "change" || (event.kind === "update" && previous === undefined)) {
    if (from < candidate.createdAt) return false
  } else if (previous === undefined || previous.status !== "active") {
    // It entered the directory, or came back: readable from the later of the write and the delay.
    if (Math.max(event.dueAt, from) < candidate.createdAt) return false
  } else {
    // An operator's change of a listing already in the directory: only one the account could
    // read then, made after the watch began, that it makes newly fit.
    if (event.dueAt < candidate.createdAt || readableFrom(previous, plan) > event.dueAt) return false
    if (matchesFilters(previous, filters, now)) return false
  }
  return matchesFilters(listing, filters, now, derived)
}

/** The distinct access delays of the plan table, shortest first. */
export const ACCESS_DELAYS: ReadonlyArray<number> = [...new Set(Object.values(Plans).map((plan) => plan.accessDelayMs))].sort((a, b) => a - b)

/**
 * Change events are recorded only while some watch exists, so the first watch catches up: every
 * active listing discovered this long before it may still become readable to some plan after
 * it, and is queued as a write of unknown previous version (`change`), which schedules the
 * clock events of the delays still to end and matches only where the account's delay ends at
 * or after the watch's creation, never a listing already readable before it. Older listings are
 * readable to every plan already.
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
  /** The match's id; by default the store makes one. Set only for `dropshelf demo`'s fixture match, whose id is documented. */
  readonly id?: string | undefined
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
    if (event.kind !== "clock") for (const dueAt of followUps(listing, now)) later.push({ listingId: listing.id, dueAt })
  }
  return { matches, followUps: later }
}
