/**
 * @dropshelf/client — a typed client for the dropshelf REST API.
 *
 * `Dropshelf` is the promise-based client; `DropshelfClient` the Effect one, derived from the
 * HttpApi contract (`@dropshelf/api`). Both retry 429 after the wait the server names and 5xx
 * and network failures with backoff (`RetryPolicy`), and send one `Idempotency-Key` per write,
 * reused by its retries (`Idempotency`).
 */
export {
  type CallOptions,
  type CreatedWatch,
  type CreateWatch,
  Dropshelf,
  type DropshelfOptions,
  type Hold,
  type HoldList,
  type HoldOutcome,
  type HoldResponse,
  type Listing,
  type ListingPage,
  type MatchFeed,
  type Me,
  type RevealedListing,
  type RotatedWatchSecret,
  type SinceFeed,
  type Snapshot,
  type Tombstone,
  type Watch,
  type WatchChange,
  type WatchDeliveryAttempts,
  type WatchList,
  type WatchMatch,
  type WatchMatchPage,
  type WatchResend,
  type WriteOptions
} from "./Dropshelf.ts"
export { DropshelfError, DropshelfTransportError, type ErrorFields } from "./DropshelfError.ts"
export type { ListParameters } from "./ListParameters.ts"
export * as DropshelfClient from "./DropshelfClient.ts"
export * as Idempotency from "./Idempotency.ts"
export * as RetryPolicy from "./RetryPolicy.ts"
