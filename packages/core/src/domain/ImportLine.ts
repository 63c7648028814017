import { Predicate, Result, Schema } from "effect"
import { Spam, Tier } from "./Listing.ts"
import { type ListingId, randomListingId } from "./Ids.ts"
import { isRegistrable, nameShape } from "./Masking.ts"
import type { ListingInput } from "../ports/ListingStore.ts"
import { unstorable } from "./Text.ts"
import { type Instant, parseIsoInstant } from "./Time.ts"

const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const Count = Schema.NullOr(NonNegativeInt)
/**
 * Figures every store keeps as a 32-bit integer (Postgres `integer`): a larger one is refused
 * with its line, where it would fail the whole batch in the database.
 */
const INT32_MAX = 2_147_483_647
const SmallCount = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: INT32_MAX }))
const Rank = Schema.Int.check(Schema.isBetween({ minimum: -INT32_MAX - 1, maximum: INT32_MAX }))
const Percent = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100 }))
const IsoInstant = Schema.String.check(
  Schema.makeFilter((text: string) => parseIsoInstant(text) !== undefined || "an ISO 8601 instant with an offset")
)
const domainShape = /^(?=.{3,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/
const RegistrableName = Schema.String.check(
  Schema.isPattern(domainShape, { message: "expected a domain name in lower case (a-z, 0-9, hyphens, dots)" }),
  Schema.makeFilter((text: string) =>
    isRegistrable(text) || "a registrable name: one label under a public suffix, not a subdomain or a bare suffix")
)

/** One NDJSON line of `dropshelf import`: exact figures in; the API publishes bands only. */
export const ImportLine = Schema.Struct({
  id: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[A-Za-z0-9]{8}$/, { message: "expected 8 characters of A-Z, a-z, 0-9" }))),
  domain: RegistrableName,
  tier: Tier,
  status: Schema.optionalKey(Schema.Literals(["active", "draft", "blocked"])),
  discovered_at: Schema.optionalKey(IsoInstant),
  estimated_value_cents: Schema.optionalKey(NonNegativeInt),
  category: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/, { message: "expected a category code of letters, digits and _ . : -" })))),
  age_years: Schema.optionalKey(Schema.NullOr(SmallCount)),
  backlinks: Schema.optionalKey(Count),
  referring_domains: Schema.optionalKey(Count),
  snapshots: Schema.optionalKey(Count),
  domain_authority: Schema.optionalKey(Schema.NullOr(Percent)),
  directory_score: Schema.optionalKey(Percent),
  spam: Schema.optionalKey(Spam),
  linked_by: Schema.optionalKey(Schema.Array(Schema.String)),
  tags: Schema.optionalKey(Schema.Array(Schema.String)),
  blurb: Schema.optionalKey(Schema.String),
  source: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/, { message: "expected a source code of letters, digits and _ . : -" }))),
  agent_citability: Schema.optionalKey(Schema.NullOr(Schema.Struct({ score: SmallCount, sources: Schema.Array(Schema.Unknown) }))),
  featured_rank: Schema.optionalKey(Schema.NullOr(Rank)),
  availability_checked_at: Schema.optionalKey(IsoInstant)
})
export type ImportLine = typeof ImportLine.Type

const decodeLine = Schema.decodeUnknownResult(ImportLine, { onExcessProperty: "error" })

/** What makes the first unstorable string in `value` (keys included) so, if any (Text.unstorable). */
const flawIn = (value: unknown): string | undefined => {
  if (typeof value === "string") return unstorable(value)
  if (Array.isArray(value)) return value.map(flawIn).find((flaw) => flaw !== undefined)
  if (Predicate.isObject(value)) {
    return Object.entries(value).map(([key, item]) => unstorable(key) ?? flawIn(item)).find((flaw) => flaw !== undefined)
  }
  return undefined
}

/**
 * Turns one parsed NDJSON value into a listing to upsert, or a one-line reason.
 * `randomBytes` is a secure source of random bytes, used for a line without an id.
 */
export const importLineToInput = (
  value: unknown,
  now: Instant,
  randomBytes: () => Uint8Array
): Result.Result<ListingInput, string> => {
  // Postgres cannot store either in text or jsonb; refusing the line keeps the rest of its batch.
  const flaw = flawIn(value)
  if (flaw !== undefined) return Result.fail(`strings may not contain a NUL character (\\u0000) or a lone surrogate; found ${flaw}`)
  const decoded = decodeLine(value)
  if (Result.isFailure(decoded)) return Result.fail(decoded.failure.message.replace(/\s+/g, " "))
  const line = decoded.success
  const id: ListingId = line.id !== undefined ? (line.id as ListingId) : randomListingId(randomBytes)
  return Result.succeed({
    id,
    domain: line.domain,
    tier: line.tier,
    status: line.status ?? "active",
    discoveredAt: line.discovered_at !== undefined ? parseIsoInstant(line.discovered_at)! : now,
    estimatedValueCents: line.estimated_value_cents ?? null,
    category: line.category ?? null,
    ageYears: line.age_years ?? null,
    backlinks: line.backlinks ?? null,
    referringDomains: line.referring_domains ?? null,
    domainAuthority: line.domain_authority ?? null,
    snapshots: line.snapshots ?? null,
    directoryScore: line.directory_score ?? null,
    spam: line.spam ?? null,
    linkedBy: line.linked_by ?? [],
    tags: line.tags ?? [],
    blurb: line.blurb ?? null,
    source: line.source ?? null,
    agentCitability: line.agent_citability ?? null,
    featuredRank: line.featured_rank ?? null,
    availabilityCheckedAt: line.availability_checked_at !== undefined ? parseIsoInstant(line.availability_checked_at)! : null,
    ...nameShape(line.domain)
  })
}
