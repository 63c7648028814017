import { Effect, Result, Schema, type SchemaIssue, SchemaTransformation } from "effect"
import { PRICE_RANGES, type PriceRange, REFERRING_DOMAIN_BANDS } from "./Bands.ts"
import { InvalidRequest } from "./errors.ts"
import { quote } from "./Quote.ts"
import * as Text from "./Text.ts"
import type { Spam } from "./Listing.ts"
import { type Instant, parseIsoInstant, toIso } from "./Time.ts"

/*
 * `GET /domains` parameters, read by one schema. Each parameter is its query-string text, checked
 * by a filter whose failure message names the parameter and what it accepts, then decoded to its
 * value; the whole query decodes to a `ListQuery`. The HTTP endpoint uses the schema as its
 * `query` (so the OpenAPI parameters are generated from it) and the MCP list tool derives its
 * input schema from it. Undocumented names are ignored; `limit` outside 1..250 is clamped.
 */

export const DEFAULT_PAGE_SIZE = 50
export const MIN_PAGE_SIZE = 1
export const MAX_PAGE_SIZE = 250
export const Q_MAX_LENGTH = 200

/** A listing must score at least this (exact score) to be `recommended`. */
export const RECOMMENDED_SCORE_FLOOR = 40

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

const integerText = /^[+-]?\d+$/
const tldText = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/
const codeText = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/

const got = (text: string) => `; got ${quote(text)}`

/**
 * One parameter: its text must be storable (`Text.storable`: it is searched or compared in the
 * store), then pass `refuse` (which answers the refusal's message, or undefined), then `decode`
 * reads it; `encode` writes a value back as text.
 */
const parameter = <T extends Schema.Top>(
  name: string,
  to: T,
  description: string,
  refuse: (text: string) => string | undefined,
  decode: (text: string) => T["Type"],
  encode: (value: T["Encoded"]) => string,
  jsonSchema: Record<string, unknown> = {}
) =>
  Schema.optionalKey(
    Schema.String.annotate({ description }).check(Schema.makeFilter((text) => {
      const storable = Text.storable(name, text)
      return Result.isFailure(storable) ? storable.failure.message : refuse(text)
    }, { toJsonSchema: () => jsonSchema })).pipe(
      Schema.decodeTo(to, SchemaTransformation.transform({ decode, encode }))
    )
  )

const integer = (name: string, accepts: string, min: number, max: number, description: string) =>
  parameter(
    name,
    Schema.Number,
    description,
    (text) => {
      const value = integerText.test(text) ? Number(text) : Number.NaN
      return Number.isSafeInteger(value) && value >= min && value <= max ? undefined : `${name} accepts ${accepts}${got(text)}`
    },
    Number,
    String,
    { pattern: integerText.source, minimum: min, maximum: max }
  )

/** One of a few texts: an enumeration in the published schema, refused with the list it accepts. */
const oneOf = <const A extends string>(name: string, accepted: ReadonlyArray<A>, description: string) =>
  Schema.optionalKey(
    (accepted.length === 1 ? Schema.Literal(accepted[0]!) : Schema.Literals(accepted)).annotate({
      description,
      message: `${name} accepts ${accepted.join(", ")}`
    })
  )

/** How a boolean parameter is spelled. */
export const BOOLEAN_TEXTS = ["true", "false"] as const

/** Whether a parameter's published JSON Schema is a boolean's (its enumeration is `BOOLEAN_TEXTS`). */
export const isBooleanText = (jsonSchema: { readonly enum?: unknown }): boolean =>
  JSON.stringify(jsonSchema.enum) === JSON.stringify(BOOLEAN_TEXTS)

const boolean = (name: string, description: string) =>
  Schema.optionalKey(
    Schema.Literals(BOOLEAN_TEXTS).annotate({ description, message: `${name} accepts true, false` }).pipe(
      Schema.decodeTo(Schema.Boolean, SchemaTransformation.transform({ decode: (text) => text === "true", encode: (value) => value ? "true" : "false" }))
    )
  )

const itemsOf = (text: string) => text.split(",").map((item) => item.trim())

/** Comma-separated items, each passing `accepts`; repeats are read once. */
const list = (name: string, describe: string, accepts: (item: string) => boolean, description: string) =>
  parameter(
    name,
    Schema.Array(Schema.String),
    description,
    (text) => {
      const bad = itemsOf(text).find((item) => !accepts(item))
      return bad === undefined ? undefined : `${name} accepts ${describe}${got(bad)}`
    },
    (text) => [...new Set(itemsOf(text))],
    (items) => items.join(",")
  )

/** Every documented parameter of `GET /domains`, by name, as the query string carries it. */
export const ListQueryParameters = {
  cursor: parameter(
    "cursor",
    Schema.String,
    "Opaque value from `next_cursor`. It belongs to one ordering: pass the same `sort` on every page. A value not issued by this endpoint gives 400.",
    (text) => text === "" ? "cursor accepts only a next_cursor value issued by this endpoint" : undefined,
    (text) => text,
    (text) => text
  ),
  limit: parameter(
    "limit",
    Schema.Number,
    `Page size, default ${DEFAULT_PAGE_SIZE}. Values outside ${MIN_PAGE_SIZE}..${MAX_PAGE_SIZE} are clamped; a non-integer (including empty) gives 400.`,
    (text) =>
      integerText.test(text)
        ? undefined
        : `limit accepts an integer (values outside ${MIN_PAGE_SIZE}..${MAX_PAGE_SIZE} are clamped)${got(text)}`,
    (text) => Math.min(MAX_PAGE_SIZE, Math.max(MIN_PAGE_SIZE, Number(text))),
    String,
    { pattern: integerText.source }
  ),
  since: parameter(
    "since",
    Schema.Number,
    "Business plan only (others get 402 `upgrade_required`). ISO 8601 instant; inclusive match on `updated_at`; pages include tombstones; ordered by id. Pass the `synced_at` of the first page of the previous run. At most the feed's horizon old (30 days unless the operator sets another; `since_horizon_days` in `GET /me`), one day more on pages that follow a cursor: an older one gets 400 `invalid_request` naming `since`, with `oldest_since` and `horizon_days`, and the consumer resynchronises with a full run.",
    (text) =>
      parseIsoInstant(text) === undefined
        ? `since accepts an ISO 8601 instant with an offset, such as 2026-11-01T00:00:00.000Z${got(text)}`
        : undefined,
    (text) => parseIsoInstant(text)!,
    toIso,
    { format: "date-time" }
  ),
  sort: oneOf(
    "sort",
    ["latest"],
    "Omitted: ascending id. `latest`: newest `discovered_at` first, tie-broken by id. Cannot be combined with `since`."
  ),
  ageMin: integer("ageMin", "an integer number of years from 0 to 1000", 0, 1000, "Minimum age in whole years (0..1000); rows with a null age are excluded."),
  category: list(
    "category",
    "comma-separated category codes",
    (item) => codeText.test(item),
    "Category codes, comma-separated: listings whose `category` is one of them. A code no listing carries gives 400, and the message lists the codes listings carry."
  ),
  checkedDays: integer(
    "checkedDays",
    "an integer number of days from 1 to 3650",
    1,
    3650,
    "Only listings whose `availability_checked_at` is within this many days before now (1..3650); listings never checked are excluded."
  ),
  citabilityMin: integer("citabilityMin", "an integer from 0 to 100", 0, 100, "Minimum agent-citability score (0..100); rows with null citability are excluded."),
  featured: boolean("featured", "`true`: only listings on the curated shelf; `false`: only those off it."),
  priceRange: oneOf("priceRange", PRICE_RANGES, "Band over `estimated_value_cents`, whole dollars, lower bound inclusive."),
  q: parameter(
    "q",
    Schema.String,
    `Free-text search (1..${Q_MAX_LENGTH} characters, without U+0000 or lone surrogates) over the masked hint, tags, category and blurb. Never matches the real name.`,
    (text) => {
      const trimmed = text.trim()
      return trimmed.length === 0 || trimmed.length > Q_MAX_LENGTH ? `q accepts search text of 1 to ${Q_MAX_LENGTH} characters` : undefined
    },
    (text) => text.trim(),
    (text) => text
  ),
  rd: list(
    "rd",
    `comma-separated referring-domain bands: ${REFERRING_DOMAIN_BANDS.join(", ")}`,
    (item) => REFERRING_DOMAIN_BANDS.includes(item),
    `Referring-domain bands, comma-separated: listings whose \`referring_domains\` is one of them (${REFERRING_DOMAIN_BANDS.join(", ")}). Rows with a null count are excluded.`
  ),
  recommended: boolean(
    "recommended",
    `\`true\`: only listings with a \`category\`, at least one \`linked_by\` domain and a directory score of at least ${RECOMMENDED_SCORE_FLOOR} (\`directory_score.low\` ${RECOMMENDED_SCORE_FLOOR} or more). \`false\` filters nothing.`
  ),
  rsMax: integer(
    "rsMax",
    "an integer from 0 to 100",
    0,
    100,
    "Only listings whose published directory score range ends at or below this: `directory_score.high` <= rsMax (0..100). Rows without a score are excluded."
  ),
  rsMin: integer(
    "rsMin",
    "an integer from 0 to 100",
    0,
    100,
    "Only listings whose published directory score range starts at or above this: `directory_score.low` >= rsMin (0..100). Rows without a score are excluded. With rsMax, the range lies inside rsMin..rsMax."
  ),
  source: list(
    "source",
    "comma-separated source codes",
    (item) => codeText.test(item),
    "Source codes, comma-separated: listings that came into the directory from one of them (the import's `source`; a listing does not show it). A code no listing carries gives 400, and the message lists the codes listings carry."
  ),
  spam: oneOf("spam", ["low", "moderate"], "Spam level: `low` or `moderate`."),
  tier: oneOf("tier", ["open"], "Only `open` is accepted: listings whose names are public."),
  tld: parameter(
    "tld",
    Schema.String,
    "Exact TLD without the leading dot, for example `com` or `co.uk`.",
    (text) =>
      tldText.test(text.toLowerCase())
        ? undefined
        : `tld accepts a top-level domain without the leading dot, such as com or co.uk${got(text)}`,
    (text) => text.toLowerCase(),
    (text) => text
  )
}

/** How an integer parameter is spelled, in the published schema (which documents it as an integer). */
export const INTEGER_TEXT = integerText.source

/** The names of the documented parameters; every other name is ignored. */
export const LIST_PARAMETERS = Object.keys(ListQueryParameters) as ReadonlyArray<keyof typeof ListQueryParameters>

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
