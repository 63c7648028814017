import { Effect, Record, Result, Schema, SchemaTransformation } from "effect"
import { Errors, Hold, Idempotency, ListQuery, Text } from "@dropshelf/core"

/* How a tool reads its arguments: the REST API's own decoders and refusals, on JSON values. */

/** The argument that carries a write's idempotency key. */
export const IDEMPOTENCY_KEY_ARGUMENT = "idempotency_key"

export const IdempotencyKeyInput = Schema.String.annotate({
  description:
    "Optional. 1 to 255 visible ASCII characters, such as a UUID, new for each new write. A repeat of the same call (same tool and arguments) with the same key by the same account within 24 hours returns the first result again, marked `_meta[\"dropshelf/idempotent-replayed\"]: true`, and changes nothing; the key with another call is refused `idempotency_key_reused`. The key is shared with the REST API's `Idempotency-Key`."
})

/** The key argument, when given (null reads as absent), or the refusal naming it. */
export const idempotencyKeyArg = (
  args: Record<string, unknown>
): Effect.Effect<Idempotency.IdempotencyKey | undefined, Errors.InvalidRequest> => {
  const value = args[IDEMPOTENCY_KEY_ARGUMENT]
  return value === undefined || value === null
    ? Effect.succeed(undefined)
    : Effect.fromResult(Idempotency.decodeKey(IDEMPOTENCY_KEY_ARGUMENT, value))
}

/** An integer or boolean parameter of the list query also takes its JSON value, as assistants tend to send it. */
export const widenScalars = (property: Record<string, unknown>): Record<string, unknown> => {
  const { description, ...text } = property
  if (text.pattern === ListQuery.INTEGER_TEXT) return { description, anyOf: [{ type: "integer" }, text] }
  if (ListQuery.isBooleanText(text)) return { description, anyOf: [{ type: "boolean" }, text] }
  return property
}

/** A JSON argument read as the text a query string would carry it in. */
const AsText = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean]).pipe(
  Schema.decodeTo(Schema.String, SchemaTransformation.transform<string, string | number | boolean>({ decode: String, encode: (text) => text }))
)

/** search_listings' arguments: the list query's own schema, numbers and booleans read as their text. */
const SearchArguments = Schema.Struct(Record.map(ListQuery.ListQueryParameters, () => Schema.optionalKey(AsText))).pipe(
  Schema.decodeTo(ListQuery.ListQuerySchema)
)
const decodeSearch = Schema.decodeUnknownResult(SearchArguments)

export const searchArguments = (args: Record<string, unknown>): Effect.Effect<ListQuery.ListQuery, Errors.InvalidRequest> =>
  Effect.fromResult(Result.mapError(decodeSearch(args, ListQuery.LIST_QUERY_PARSE_OPTIONS), (error) => ListQuery.refusalOf(error.issue)))

export const ListingIdInput = Schema.String.annotate({ description: "Listing id: 8 characters, case-sensitive (the `id` of a listing)" })
export const HoldIdInput = Schema.String.annotate({ description: "Hold id, as returned by hold_listing or list_holds (`hold.id`)" })

/**
 * A required string argument, or the refusal the REST API gives for a bad parameter. An id is
 * looked up in the store, so it must be storable text (a path cannot carry what is not).
 */
export const stringArg = (args: Record<string, unknown>, name: string, accepts: string) => {
  const value = args[name]
  return typeof value === "string" && value.length > 0
    ? Effect.fromResult(Text.storable(name, value))
    : Effect.fail(new Errors.InvalidRequest({ parameter: name, message: `${name} is required and accepts ${accepts}` }))
}

export const outcomeArg = (args: Record<string, unknown>): Effect.Effect<Hold.HoldOutcome, Errors.InvalidRequest> => {
  const value = args.outcome
  if (value === undefined || value === null) return Effect.succeed("released" as const)
  return value === "released" || value === "registered"
    ? Effect.succeed(value)
    : Effect.fail(new Errors.InvalidRequest({ parameter: "outcome", message: "outcome accepts released, registered" }))
}

export const WatchIdInput = Schema.String.annotate({ description: "Watch id, as returned by create_watch or list_watches (`id`)" })

export const WatchQueryInput = Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String)])).annotate({
  description:
    "The search_listings filters by name (tld, category, rsMin, q, …), validated as search_listings validates them; cursor, since, sort and limit are not part of a watch. Omitted: every listing."
})
