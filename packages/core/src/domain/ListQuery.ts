import { Result } from "effect"
import { PRICE_RANGES, type PriceRange, REFERRING_DOMAIN_BANDS } from "./Bands.ts"
import { InvalidRequest } from "./errors.ts"
import type { Spam } from "./Listing.ts"
import { type Instant, parseIsoInstant } from "./Time.ts"

export const DEFAULT_PAGE_SIZE = 50
export const MIN_PAGE_SIZE = 1
export const MAX_PAGE_SIZE = 250

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

export type RawQuery = { readonly [name: string]: string | ReadonlyArray<string> | undefined }

/** The documented parameters of `GET /domains`; every other name is ignored. */
export const LIST_PARAMETERS = [
  "cursor", "limit", "since", "sort", "ageMin", "category", "checkedDays", "citabilityMin", "featured",
  "priceRange", "q", "rd", "recommended", "rsMax", "rsMin", "source", "spam", "tier", "tld"
] as const

export const Q_MAX_LENGTH = 200
const integerText = /^[+-]?\d+$/
const tldText = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/
const codeText = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/

class Reader {
  private readonly raw: RawQuery
  constructor(raw: RawQuery) {
    this.raw = raw
  }

  /** The single value of a documented parameter; repeating one is refused rather than guessed at. */
  value(name: string): string | undefined {
    const value = this.raw[name]
    if (value === undefined) return undefined
    if (typeof value === "string") return value
    if (value.length === 1) return value[0]
    throw new InvalidRequest({ parameter: name, message: `${name} may be given once; it was given ${value.length} times` })
  }

  integer(name: string, accepts: string, min: number, max: number): number | undefined {
    const text = this.value(name)
    if (text === undefined) return undefined
    const value = integerText.test(text) ? Number(text) : Number.NaN
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new InvalidRequest({ parameter: name, message: `${name} accepts ${accepts}; got ${JSON.stringify(text)}` })
    }
    return value
  }

  boolean(name: string): boolean | undefined {
    const text = this.value(name)
    if (text === undefined) return undefined
    if (text === "true") return true
    if (text === "false") return false
    throw new InvalidRequest({ parameter: name, message: `${name} accepts true, false; got ${JSON.stringify(text)}` })
  }

  oneOf<const A extends string>(name: string, accepted: ReadonlyArray<A>): A | undefined {
    const text = this.value(name)
    if (text === undefined) return undefined
    if ((accepted as ReadonlyArray<string>).includes(text)) return text as A
    throw new InvalidRequest({
      parameter: name,
      message: `${name} accepts ${accepted.join(", ")}; got ${JSON.stringify(text)}`
    })
  }

  /** A comma-separated list; every item must pass `accepts`. */
  list(name: string, describe: string, accepts: (item: string) => boolean): ReadonlyArray<string> | undefined {
    const text = this.value(name)
    if (text === undefined) return undefined
    const items = text.split(",").map((item) => item.trim())
    const bad = items.find((item) => !accepts(item))
    if (bad !== undefined) {
      throw new InvalidRequest({ parameter: name, message: `${name} accepts ${describe}; got ${JSON.stringify(bad)}` })
    }
    return [...new Set(items)]
  }
}

const clampLimit = (reader: Reader): number => {
  const text = reader.value("limit")
  if (text === undefined) return DEFAULT_PAGE_SIZE
  if (!integerText.test(text)) {
    throw new InvalidRequest({
      parameter: "limit",
      message: `limit accepts an integer (values outside ${MIN_PAGE_SIZE}..${MAX_PAGE_SIZE} are clamped); got ${JSON.stringify(text)}`
    })
  }
  const value = Number(text)
  return Math.min(MAX_PAGE_SIZE, Math.max(MIN_PAGE_SIZE, value))
}

const parseQuery = (reader: Reader): ListQuery => {
  const limit = clampLimit(reader)
  const sort = reader.oneOf("sort", ["latest"])
  const sinceText = reader.value("since")
  let since: Instant | undefined
  if (sinceText !== undefined) {
    since = parseIsoInstant(sinceText)
    if (since === undefined) {
      throw new InvalidRequest({
        parameter: "since",
        message: `since accepts an ISO 8601 instant with an offset, such as 2026-11-01T00:00:00.000Z; got ${JSON.stringify(sinceText)}`
      })
    }
  }
  if (sort === "latest" && since !== undefined) {
    throw new InvalidRequest({
      parameter: "sort,since",
      message: "sort=latest cannot be combined with since: the since feed is ordered by id"
    })
  }
  const cursor = reader.value("cursor")
  if (cursor === "") {
    throw new InvalidRequest({ parameter: "cursor", message: "cursor accepts only a next_cursor value issued by this endpoint" })
  }

  const filters: { -readonly [K in keyof ListFilters]: ListFilters[K] } = {}
  const ageMin = reader.integer("ageMin", "an integer number of years from 0 to 1000", 0, 1000)
  if (ageMin !== undefined) filters.ageMin = ageMin
  const categories = reader.list("category", "comma-separated category codes", (item) => codeText.test(item))
  if (categories !== undefined) filters.categories = categories
  const checkedDays = reader.integer("checkedDays", "an integer number of days from 1 to 3650", 1, 3650)
  if (checkedDays !== undefined) filters.checkedDays = checkedDays
  const citabilityMin = reader.integer("citabilityMin", "an integer from 0 to 100", 0, 100)
  if (citabilityMin !== undefined) filters.citabilityMin = citabilityMin
  const featured = reader.boolean("featured")
  if (featured !== undefined) filters.featured = featured
  const priceRange = reader.oneOf("priceRange", PRICE_RANGES)
  if (priceRange !== undefined) filters.priceRange = priceRange
  const q = reader.value("q")
  if (q !== undefined) {
    const trimmed = q.trim()
    if (trimmed.length === 0 || trimmed.length > Q_MAX_LENGTH) {
      throw new InvalidRequest({ parameter: "q", message: `q accepts search text of 1 to ${Q_MAX_LENGTH} characters` })
    }
    // No listing holds U+0000 (imports refuse it: Postgres cannot store it), so no term with it
    // could match; refused by name rather than answered with an empty page.
    if (trimmed.includes("\u0000")) {
      throw new InvalidRequest({ parameter: "q", message: "q accepts search text without the NUL character (U+0000)" })
    }
    filters.q = trimmed
  }
  const rd = reader.list(
    "rd",
    `comma-separated referring-domain bands: ${REFERRING_DOMAIN_BANDS.join(", ")}`,
    (item) => REFERRING_DOMAIN_BANDS.includes(item)
  )
  if (rd !== undefined) filters.referringDomainBands = rd
  if (reader.boolean("recommended") === true) filters.recommended = true
  const rsMin = reader.integer("rsMin", "an integer from 0 to 100", 0, 100)
  if (rsMin !== undefined) filters.rsMin = rsMin
  const rsMax = reader.integer("rsMax", "an integer from 0 to 100", 0, 100)
  if (rsMax !== undefined) filters.rsMax = rsMax
  const sources = reader.list("source", "comma-separated source codes", (item) => codeText.test(item))
  if (sources !== undefined) filters.sources = sources
  const spam = reader.oneOf("spam", ["low", "moderate"])
  if (spam !== undefined) filters.spam = spam
  if (reader.oneOf("tier", ["open"]) !== undefined) filters.openTierOnly = true
  const tld = reader.value("tld")
  if (tld !== undefined) {
    const normalized = tld.toLowerCase()
    if (!tldText.test(normalized)) {
      throw new InvalidRequest({
        parameter: "tld",
        message: `tld accepts a top-level domain without the leading dot, such as com or co.uk; got ${JSON.stringify(tld)}`
      })
    }
    filters.tld = normalized
  }
  return { limit, order: sort === "latest" ? "latest" : "id", cursor, since, filters }
}

/**
 * Reads the documented parameters of `GET /domains`. Undocumented names are ignored; a
 * documented one with a value the directory cannot honour is refused, naming the parameter
 * and what it accepts. `limit` outside 1..250 is clamped, never refused.
 */
export const decodeListQuery = (raw: RawQuery): Result.Result<ListQuery, InvalidRequest> => {
  try {
    return Result.succeed(parseQuery(new Reader(raw)))
  } catch (error) {
    if (error instanceof InvalidRequest) return Result.fail(error)
    throw error
  }
}
