/**
 * @dropshelf/core — the expired-domain directory as a library: pure rules and schemas, ports
 * for storage, clock and plans, and the use cases that the REST server, the MCP tools, the CLI
 * and any embedding service share.
 */
export * as ApiKey from "./domain/ApiKey.ts"
export * as Bands from "./domain/Bands.ts"
export * as Cursor from "./domain/Cursor.ts"
export * as Disclosure from "./domain/Disclosure.ts"
export * as Errors from "./domain/errors.ts"
export * as Hold from "./domain/Hold.ts"
export * as Idempotency from "./domain/Idempotency.ts"
export * as Ids from "./domain/Ids.ts"
export * as Keyset from "./domain/Keyset.ts"
export * as ImportLine from "./domain/ImportLine.ts"
export * as Listing from "./domain/Listing.ts"
export * as ListingJson from "./domain/ListingJson.ts"
export * as ListingFilter from "./domain/ListingFilter.ts"
export * as ListQuery from "./domain/ListQuery.ts"
export * as Masking from "./domain/Masking.ts"
export * as Me from "./domain/Me.ts"
export * as Plan from "./domain/Plan.ts"
export * as Quote from "./domain/Quote.ts"
export * as RevealLedger from "./domain/RevealLedger.ts"
export * as SinceHorizon from "./domain/SinceHorizon.ts"
export * as Time from "./domain/Time.ts"

export * as AccountStore from "./ports/AccountStore.ts"
export * as AvailabilityCheck from "./ports/AvailabilityCheck.ts"
export * as HoldStore from "./ports/HoldStore.ts"
export * as IdempotencyStore from "./ports/IdempotencyStore.ts"
export * as KeyStore from "./ports/KeyStore.ts"
export * as ListingStore from "./ports/ListingStore.ts"
export * as RateLimiter from "./ports/RateLimiter.ts"
export * as RevealStore from "./ports/RevealStore.ts"

export * as Directory from "./Directory.ts"
export * as DirectoryMetrics from "./DirectoryMetrics.ts"
export * as Operators from "./Operators.ts"
