import { Effect, Exit, Result, Stream } from "effect"
import { FetchHttpClient } from "effect/http"
import type { WatchesApi } from "@dropshelf/api"
import type { Hold as HoldSchemas, Listing as ListingSchemas, ListQuery, Me as MeSchemas, WatchView } from "@dropshelf/core"
import * as DropshelfClient from "./DropshelfClient.ts"
import { DropshelfError, DropshelfTransportError, fromCause } from "./DropshelfError.ts"
import * as Idempotency from "./Idempotency.ts"
import { type ListParameters, toListQuery } from "./ListParameters.ts"

/*
 * The client for programs that do not use Effect: every call returns a promise of the
 * contract's type, and rejects with a `DropshelfError` (a refusal: status and envelope) or a
 * `DropshelfTransportError` (no usable answer after the retries).
 */

export type Listing = ListingSchemas.ListingView
export type RevealedListing = ListingSchemas.RevealedListingView
export type Tombstone = ListingSchemas.TombstoneView
export type ListingPage = ListingSchemas.PageView
export type Me = MeSchemas.MeView
export type Hold = HoldSchemas.HoldView
export type HoldResponse = HoldSchemas.HoldResponse
export type HoldList = HoldSchemas.HoldList
export type HoldOutcome = HoldSchemas.HoldOutcome
export type Watch = WatchView.WatchView
export type CreatedWatch = WatchView.CreatedWatchView
export type WatchList = WatchView.WatchList
export type WatchMatchPage = WatchView.MatchPage
export type WatchMatch = WatchView.MatchView
export type WatchDeliveryAttempts = WatchView.AttemptList
export type RotatedWatchSecret = WatchView.RotatedSecretView
export type WatchResend = WatchView.ResendView
export type CreateWatch = typeof WatchesApi.CreateWatchBody.Type
export type WatchChange = typeof WatchesApi.PatchWatchBody.Type

export interface DropshelfOptions extends DropshelfClient.Options {
  /** The `fetch` to send with; default the platform's. */
  readonly fetch?: typeof globalThis.fetch | undefined
}

export interface CallOptions {
  /** Aborts the call, its retries and waits included; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined
}

export interface WriteOptions extends CallOptions {
  /**
   * The write's idempotency key, 1 to 255 visible ASCII characters. Default: a new random key
   * for each call, reused by its retries. Pass your own to repeat a write safely across
   * processes (a job that restarts, say): the server answers a repeat with the first answer.
   */
  readonly idempotencyKey?: string | undefined
}

/** A run of the `since` feed: listings and tombstones, and the watermark to keep for the next run. */
export interface SinceFeed extends AsyncIterable<Listing | Tombstone> {
  /**
   * The `synced_at` of this run's first page, once it has arrived: store it, and pass it as
   * `since` on the next run (the feed's rule 1).
   */
  readonly syncedAt: string | undefined
}

/** A watch's matches after a cursor, oldest first, and the cursor to keep for the next pull. */
export interface MatchFeed extends AsyncIterable<WatchMatch> {
  /**
   * Where the next pull starts: once the iteration has ended, the last page's `next_cursor`
   * (the cursor passed, while no match has arrived). Store it and pass it to
   * `watches.newMatches` next time for only the matches recorded since.
   */
  readonly cursor: string | undefined
}

/** A bulk snapshot: every listing the key can read, then the watermark to continue with the since feed. */
export interface Snapshot extends AsyncIterable<Listing> {
  /**
   * The snapshot's `synced_at`, once its last line has arrived: pass it as `since` to
   * `listings.since` to follow every change from there. Iteration rejects with a
   * `DropshelfTransportError` when the body ends without that line (start again).
   */
  readonly syncedAt: string | undefined
}

const isListing = (row: Listing | Tombstone): row is Listing => row.status === "active"

export class Dropshelf {
  readonly listings: {
    /** One page of `GET /domains`. */
    readonly list: (parameters?: ListParameters, options?: CallOptions) => Promise<ListingPage>
    /** One listing; 404 `not_found` when it left the directory or the plan cannot see it yet. */
    readonly get: (id: string, options?: CallOptions) => Promise<Listing>
    /** Every page of a query, following `next_cursor` until it is null. */
    readonly pages: (parameters?: Omit<ListParameters, "since">, options?: CallOptions) => AsyncIterable<ListingPage>
    /** Every listing of a query, page after page. */
    readonly iterate: (parameters?: Omit<ListParameters, "since">, options?: CallOptions) => AsyncIterable<Listing>
    /**
     * The `since` feed (business plan): every listing changed at or after `since`, and a
     * tombstone (`status: "delisted"`) for each that left. `null` for a first run: the whole
     * directory, listings only. Other plans are refused 402 `upgrade_required`. A `since` older
     * than the feed's horizon (`since_horizon_days` of `me()`, 30 days by default) is refused 400
     * `invalid_request` naming `since` (`DropshelfError.resyncRequired`): run `since(null)` again and replace the
     * copy. A run that started inside the horizon is never refused halfway.
     */
    readonly since: (
      since: string | Date | null,
      parameters?: Omit<ListParameters, "since" | "sort" | "cursor">,
      options?: CallOptions
    ) => SinceFeed
    /**
     * The bulk snapshot (business plan): every listing the key can read in one request, in no
     * set order, from one consistent state of the directory; then `syncedAt`. 4 per account and
     * hour (429 `snapshot_limit_reached`); other plans are refused 402 `upgrade_required`.
     */
    readonly snapshot: (options?: CallOptions) => Snapshot
  }

  readonly holds: {
    /** The account's running holds and those that ended within 30 days. */
    readonly list: (options?: CallOptions) => Promise<HoldList>
    /** Takes the hold's one extension. */
    readonly extend: (holdId: string, options?: WriteOptions) => Promise<HoldResponse>
    /** Ends the hold as `released` (the default) or `registered`. */
    readonly end: (holdId: string, outcome?: HoldOutcome, options?: WriteOptions) => Promise<HoldResponse>
  }

  /** Saved filters that report each listing as it becomes readable and passes them (docs/api.md, Watches). */
  readonly watches: {
    /** A new watch; with a `webhook_url`, its signing secret `webhook_secret`, shown this once. */
    readonly create: (watch: CreateWatch, options?: WriteOptions) => Promise<CreatedWatch>
    /** The account's watches, oldest first, without secrets. */
    readonly list: (options?: CallOptions) => Promise<WatchList>
    readonly get: (id: string, options?: CallOptions) => Promise<Watch>
    /** Changes any of `name`, `query`, `webhook_url`, `paused`; a new webhook's secret comes in this answer only. */
    readonly update: (id: string, change: WatchChange, options?: WriteOptions) => Promise<CreatedWatch>
    /** Deletes the watch with its matches and pending deliveries. */
    readonly delete: (id: string, options?: WriteOptions) => Promise<void>
    /** A new signing secret, shown this once; the previous one keeps signing beside it for 24 hours. */
    readonly rotateSecret: (id: string, options?: WriteOptions) => Promise<RotatedWatchSecret>
    /**
     * One page of the watch's matches, oldest first: ask with `next_cursor` while `has_more`;
     * the last page has a `next_cursor` too, and a later call with it returns only newer ones.
     */
    readonly matches: (id: string, page?: { readonly cursor?: string; readonly limit?: number }, options?: CallOptions) => Promise<WatchMatchPage>
    /**
     * Every match recorded after `cursor` (all of them without one), oldest first, page after
     * page while `has_more`; then `cursor` to keep for the next pull.
     */
    readonly newMatches: (id: string, cursor?: string, options?: CallOptions) => MatchFeed
    /** The latest 100 webhook delivery attempts, newest first. */
    readonly deliveries: (id: string, options?: CallOptions) => Promise<WatchDeliveryAttempts>
    /** One more delivery of an event (a match's `id`), with the same `webhook-id`. */
    readonly retry: (id: string, eventId: string, options?: WriteOptions) => Promise<WatchResend>
  }

  readonly #client: DropshelfClient.Client
  readonly #fetch: typeof globalThis.fetch | undefined

  constructor(options: DropshelfOptions) {
    this.#client = Effect.runSync(DropshelfClient.make(options).pipe(Effect.provide(FetchHttpClient.layer)))
    this.#fetch = options.fetch
    this.listings = {
      list: (parameters, options) => this.#list(parameters, options),
      get: (id, options) => this.#run((client) => client.domains.get({ params: { id } }), options),
      pages: (parameters, options) => this.#pages(parameters, options),
      iterate: (parameters, options) => this.#listings(parameters, options),
      since: (since, parameters, options) => this.#since(since, parameters, options),
      snapshot: (options) => this.#snapshot(options)
    }
    this.holds = {
      list: (options) => this.#run((client) => client.holds.list(), options),
      extend: (holdId, options) => this.#run((client) => client.holds.extend({ params: { id: holdId } }), options),
      end: (holdId, outcome, options) =>
        this.#run(
          (client) => client.holds.end({ params: { id: holdId }, payload: outcome === undefined ? {} : { outcome } }),
          options
        )
    }
    this.watches = {
      create: (watch, options) => this.#run((client) => client.watches.create({ payload: watch }), options),
      list: (options) => this.#run((client) => client.watches.list(), options),
      get: (id, options) => this.#run((client) => client.watches.get({ params: { id } }), options),
      update: (id, change, options) => this.#run((client) => client.watches.update({ params: { id }, payload: change }), options),
      delete: (id, options) => this.#run((client) => Effect.asVoid(client.watches.delete({ params: { id } })), options),
      rotateSecret: (id, options) => this.#run((client) => client.watches.rotateSecret({ params: { id } }), options),
      matches: (id, page, options) => this.#run((client) => client.watches.matches({ params: { id }, query: page ?? {} }), options),
      newMatches: (id, cursor, options) => this.#newMatches(id, cursor, options),
      deliveries: (id, options) => this.#run((client) => client.watches.deliveries({ params: { id } }), options),
      retry: (id, eventId, options) => this.#run((client) => client.watches.retry({ params: { id, event: eventId } }), options)
    }
  }

  /** The key and its plan: reveals left this month, requests left this minute, whether `since` is on. */
  me(options?: CallOptions): Promise<Me> {
    return this.#run((client) => client.account.me(), options)
  }

  /** Reveals a name: the only call that spends. A repeat returns the original `revealed_at` at no cost. */
  reveal(id: string, options?: WriteOptions): Promise<RevealedListing> {
    return this.#run((client) => client.domains.reveal({ params: { id } }), options)
  }

  /** Holds a listing the account has revealed; holding it again returns the running hold. */
  hold(id: string, options?: WriteOptions): Promise<HoldResponse> {
    return this.#run((client) => client.domains.hold({ params: { id } }), options)
  }

  /** Runs one call; on failure, rejects with the error `fromCause` names. */
  async #run<A>(call: (client: DropshelfClient.Client) => Effect.Effect<A, unknown>, options: WriteOptions | undefined): Promise<A> {
    let effect = call(this.#client)
    if (options?.idempotencyKey !== undefined) effect = Idempotency.withKey(effect, options.idempotencyKey)
    if (this.#fetch !== undefined) effect = Effect.provideService(effect, FetchHttpClient.Fetch, this.#fetch)
    const signal = options?.signal
    const exit = await Effect.runPromiseExit(effect, signal === undefined ? undefined : { signal })
    if (Exit.isSuccess(exit)) return exit.value
    if (signal?.aborted === true) throw signal.reason
    throw await Effect.runPromise(fromCause(exit.cause))
  }

  #list(parameters: ListParameters | undefined, options: CallOptions | undefined): Promise<ListingPage> {
    const decoded = toListQuery(parameters)
    if (Result.isFailure(decoded)) return Promise.reject(refusedLocally(decoded.failure))
    return this.#page(decoded.success, options)
  }

  #page(query: ListQuery.ListQuery, options: CallOptions | undefined): Promise<ListingPage> {
    return this.#run((client) => client.domains.list({ query }), options)
  }

  async *#pages(parameters: ListParameters | undefined, options: CallOptions | undefined): AsyncGenerator<ListingPage> {
    const decoded = toListQuery(parameters)
    if (Result.isFailure(decoded)) throw refusedLocally(decoded.failure)
    let cursor = decoded.success.cursor
    do {
      const page = await this.#page({ ...decoded.success, cursor }, options)
      yield page
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
  }

  async *#listings(parameters: ListParameters | undefined, options: CallOptions | undefined): AsyncGenerator<Listing> {
    for await (const page of this.#pages(parameters, options)) yield* page.data.filter(isListing)
  }

  #snapshot(options: CallOptions | undefined): Snapshot {
    const run = this.#run.bind(this)
    let syncedAt: string | undefined
    return {
      get syncedAt() {
        return syncedAt
      },
      async *[Symbol.asyncIterator]() {
        const lines = await run((client) => client.domains.snapshot(), options)
        const signal = options?.signal
        const iterable = Stream.toAsyncIterable(Stream.mapError(lines, (cause) =>
          new DropshelfTransportError("response", "the snapshot's body could not be read in full; start again", { cause })))
        for await (const line of iterable) {
          if (signal?.aborted === true) throw signal.reason
          if (isSnapshotEnd(line)) syncedAt = line.synced_at
          else yield line
        }
        if (syncedAt === undefined) throw new DropshelfTransportError("response", "the snapshot ended without its synced_at line; start again")
      }
    }
  }

  #newMatches(id: string, after: string | undefined, options: CallOptions | undefined): MatchFeed {
    // The largest page the endpoint serves: fewest requests for a backlog.
    const page = (cursor: string | undefined) =>
      this.#run((client) => client.watches.matches({ params: { id }, query: { limit: 250, ...(cursor === undefined ? {} : { cursor }) } }), options)
    let cursor = after
    return {
      get cursor() {
        return cursor
      },
      async *[Symbol.asyncIterator]() {
        while (true) {
          const answer = await page(cursor)
          // An empty page answers null: the cursor sent still stands.
          if (answer.next_cursor !== null) cursor = answer.next_cursor
          yield* answer.data
          if (!answer.has_more) return
        }
      }
    }
  }

  #since(
    since: string | Date | null,
    parameters: Omit<ListParameters, "since" | "sort" | "cursor"> | undefined,
    options: CallOptions | undefined
  ): SinceFeed {
    const pages = (): AsyncIterable<ListingPage> => this.#pages({ ...parameters, ...(since === null ? {} : { since }) }, options)
    let syncedAt: string | undefined
    return {
      get syncedAt() {
        return syncedAt
      },
      async *[Symbol.asyncIterator]() {
        let first = true
        for await (const page of pages()) {
          if (first) syncedAt = page.synced_at
          first = false
          yield* page.data
        }
      }
    }
  }
}

/** Whether a snapshot line is its closing line rather than a listing. */
const isSnapshotEnd = (line: Listing | { readonly synced_at: string }): line is { readonly synced_at: string } => "synced_at" in line

/** A query the contract's schema refuses: the 400 the server would answer, without sending it. */
const refusedLocally = (refusal: { readonly parameter: string; readonly message: string }) =>
  new DropshelfError(400, { code: "invalid_request", message: refusal.message, parameter: refusal.parameter })
