import { Result, Schema, SchemaTransformation } from "effect"
import { PRICE_RANGES, REFERRING_DOMAIN_BANDS } from "./Bands.ts"
import { quote } from "./Quote.ts"
import * as Text from "./Text.ts"
import { parseIsoInstant, toIso } from "./Time.ts"

/*
 * Each documented parameter of `GET /domains`: the text it accepts, the check that refuses any
 * other with a message naming the parameter, its description and its decoded value.
 */

export const DEFAULT_PAGE_SIZE = 50
export const MIN_PAGE_SIZE = 1
export const MAX_PAGE_SIZE = 250
export const Q_MAX_LENGTH = 200

/** A listing must score at least this (exact score) to be `recommended`. */
export const RECOMMENDED_SCORE_FLOOR = 40

const integerText = /^[+-]?\d+$/
const tldText = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/
const codeText = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/

/** The end of a refusal's message: the text it refused, quoted. */
export const got = (text: string) => `; got ${quote(text)}`

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
