import { Effect, Result, Schema, type SchemaIssue, SchemaTransformation } from "effect"
import type { PriceRange } from "./Bands.ts"
import { InvalidRequest } from "./errors.ts"
import type { Spam } from "./Listing.ts"
import { DEFAULT_PAGE_SIZE, got, ListQueryParameters } from "./ListQueryParameters.ts"
import type { Instant } from "./Time.ts"

/*
 * `GET /domains` parameters, read by one schema. Each parameter is its query-string text, checked
 * by a filter whose failure message names the parameter and what it accepts, then decoded to its
 * value; the whole query decodes to a `ListQuery`. The HTTP endpoint uses the schema as its
 * `query` (so the OpenAPI parameters are generated from it) and the MCP list tool derives its
 * input schema from it. Undocumented names are ignored; `limit` outside 1..250 is clamped.
 */

export {
  BOOLEAN_TEXTS,
  DEFAULT_PAGE_SIZE,
  INTEGER_TEXT,
  isBooleanText,
  LIST_PARAMETERS,
  ListQueryParameters,
  MAX_PAGE_SIZE,
  MIN_PAGE_SIZE,
  Q_MAX_LENGTH,
  RECOMMENDED_SCORE_FLOOR
} from "./ListQueryParameters.ts"

export type ListOrder = "id" | "latest"

/** Filters narrow a page; none of them is part of a cursor. */
export interface ListFilters {
  readonly ageMin?: number
  readonly categories?: ReadonlyArray<string>
  readonly checkedDays?: number
  readonly citabilityMin?: number
  readonly featured?: boolean
  readonly priceRange?: PriceRange
  readonly q?: string
  readonly referringDomainBands?: ReadonlyArray<string>
  readonly recommended?: true
  readonly rsMax?: number
  readonly rsMin?: number
  readonly sources?: ReadonlyArray<string>
  readonly spam?: Spam
  readonly openTierOnly?: true
  readonly tld?: string
}

export interface ListQuery {
  readonly limit: number
  readonly order: ListOrder
  /** The opaque cursor as sent; verified by the cursor codec. */
  readonly cursor: string | undefined
  readonly since: Instant | undefined
  readonly filters: ListFilters
}

const Parameters = Schema.Struct(ListQueryParameters).check(Schema.makeFilter((query) =>
  query.sort === "latest" && query.since !== undefined
    ? { path: ["sort,since"], issue: "sort=latest cannot be combined with since: the since feed is ordered by id" }
    : undefined
))

type Parameters = typeof Parameters.Type

/** The parameters that are a filter of the same value, by the filter's name. */
const FILTER_OF = {
  ageMin: "ageMin",
  category: "categories",
  checkedDays: "checkedDays",
  citabilityMin: "citabilityMin",
  featured: "featured",
  priceRange: "priceRange",
  q: "q",
  rd: "referringDomainBands",
  rsMax: "rsMax",
  rsMin: "rsMin",
  source: "sources",
  spam: "spam",
  tld: "tld"
} as const satisfies Partial<Record<keyof Parameters, keyof ListFilters>>

const toListQuery = (query: Parameters): ListQuery => {
  const filters: Record<string, unknown> = {}
  for (const [parameter, filter] of Object.entries(FILTER_OF)) {
    const value = query[parameter as keyof typeof FILTER_OF]
    if (value !== undefined) filters[filter] = value
  }
  // `recommended=false` and `tier` narrow nothing beyond their one accepted meaning.
  if (query.recommended === true) filters.recommended = true
  if (query.tier !== undefined) filters.openTierOnly = true
  return {
    limit: query.limit ?? DEFAULT_PAGE_SIZE,
    order: query.sort === "latest" ? "latest" : "id",
    cursor: query.cursor,
    since: query.since,
    filters: filters as ListFilters
  }
}

const fromListQuery = (query: ListQuery): Parameters => {
  const parameters: Record<string, unknown> = {}
  for (const [parameter, filter] of Object.entries(FILTER_OF)) {
    const value = query.filters[filter]
    if (value !== undefined) parameters[parameter] = value
  }
  if (query.filters.recommended === true) parameters.recommended = true
  if (query.filters.openTierOnly === true) parameters.tier = "open"
  if (query.cursor !== undefined) parameters.cursor = query.cursor
  if (query.limit !== DEFAULT_PAGE_SIZE) parameters.limit = query.limit
  if (query.since !== undefined) parameters.since = query.since
  if (query.order === "latest") parameters.sort = "latest"
  return parameters as Parameters
}

/** A decoded query, as the directory and the stores read it. */
const ListQueryValue = Schema.declare((input: unknown): input is ListQuery =>
  typeof input === "object" && input !== null && "filters" in input && "order" in input && "limit" in input
)

/**
 * `GET /domains` from its query-string record (`{ name: text }`, a repeated name as an array of
 * texts) to a `ListQuery`, and back.
 */
export const ListQuerySchema = Parameters.pipe(
  Schema.decodeTo(ListQueryValue, SchemaTransformation.transform({ decode: toListQuery, encode: fromListQuery }))
)

export type RawQuery = { readonly [name: string]: string | ReadonlyArray<string> | undefined }

/** The parameter an issue is about (the first key of its path) and the issue at its end. */
const located = (issue: SchemaIssue.Issue): { readonly parameter: string; readonly leaf: SchemaIssue.Issue } | undefined => {
  switch (issue._tag) {
    case "Pointer":
      return issue.path.length > 0 ? { parameter: String(issue.path[0]), leaf: leafOf(issue.issue) } : located(issue.issue)
    case "Composite":
      return issue.issues.length > 0 ? located(issue.issues[0]) : undefined
    case "Filter":
    case "Encoding":
      return located(issue.issue)
    default:
      return undefined
  }
}

const leafOf = (issue: SchemaIssue.Issue): SchemaIssue.Issue =>
  issue._tag === "Pointer" || issue._tag === "Filter" || issue._tag === "Encoding"
    ? leafOf(issue.issue)
    : issue._tag === "Composite" && issue.issues.length > 0
    ? leafOf(issue.issues[0])
    : issue

/**
 * The refusal for a query the schema did not decode: the parameter it names and the message
 * its schema carries. A parameter sent more than once reaches the schema as an array of texts,
 * and is refused rather than guessed at.
 */
export const refusalOf = (issue: SchemaIssue.Issue): InvalidRequest => {
  const found = located(issue)
  if (found === undefined) return new InvalidRequest({ parameter: "query", message: "query cannot be read" })
  const { parameter, leaf } = found
  const input = "input" in leaf ? leaf.input : undefined
  if (Array.isArray(input)) {
    return new InvalidRequest({ parameter, message: `${parameter} may be given once; it was given ${input.length} times` })
  }
  // A check's own message already quotes the value; a type's message (an enumeration) does not.
  const checked = leaf._tag === "InvalidValue" ? leaf.annotations?.message : undefined
  const typed = "ast" in leaf ? leaf.ast.annotations?.message : undefined
  const message = typeof checked === "string"
    ? checked
    : typeof typed === "string"
    ? `${typed}${typeof input === "string" ? got(input) : ""}`
    : `${parameter} accepts text`
  return new InvalidRequest({ parameter, message })
}

/** Parse options that keep a refused input in its issue, so a refusal can say how often a name was sent. */
export const LIST_QUERY_PARSE_OPTIONS = { reportInput: true } as const

const decodeRaw = Schema.decodeUnknownResult(ListQuerySchema)

/**
 * Reads the documented parameters of `GET /domains` from a query-string record. Undocumented
 * names are ignored; a documented one with a value the directory cannot honour is refused,
 * naming the parameter and what it accepts.
 */
export const decodeListQuery = (raw: RawQuery): Result.Result<ListQuery, InvalidRequest> =>
  Result.mapError(decodeRaw(onceEach(raw), LIST_QUERY_PARSE_OPTIONS), (error) => refusalOf(error.issue))

/** `decodeListQuery` as an effect: `directory.list(caller, yield* ListQuery.decode({ tld: "com" }))`. */
export const decode = (raw: RawQuery): Effect.Effect<ListQuery, InvalidRequest> => Effect.fromResult(decodeListQuery(raw))

/** A name given once in array form reads like its plain value. */
const onceEach = (raw: RawQuery): RawQuery => {
  let single: Record<string, string | ReadonlyArray<string> | undefined> | undefined
  for (const name in raw) {
    const value = raw[name]
    if (Array.isArray(value) && value.length === 1) (single ??= { ...raw })[name] = value[0]
  }
  return single ?? raw
}
