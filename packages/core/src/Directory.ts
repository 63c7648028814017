import { Clock, Context, Deferred, Effect, Fiber, Layer, Metric, Queue, Schedule, Semaphore, Stream } from "effect"
import { Digest } from "effect/crypto"
import { digestOf, formatOf, hasValidChecksum, isLiveAt, LEGACY_KEY_MARKER } from "./domain/ApiKey.ts"
import { type CursorPosition, CursorCodec } from "./domain/Cursor.ts"
import * as DirectoryMetrics from "./DirectoryMetrics.ts"
import { holdStateOf, isReadableAt, readerViewOf, revealsOf } from "./domain/Disclosure.ts"
import {
  type EndError,
  type ExtendError,
  type HoldError,
  HeldByOther,
  HoldNotFound,
  HoldsRequirePro,
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  InvalidRequest,
  type ListError,
  ListingNotFound,
  QuotaExhausted,
  RevealRequired,
  type RevealError,
  SinceTooOld,
  Unauthorized,
  UpgradeRequired
} from "./domain/errors.ts"
import {
  ENDED_HOLD_LISTING_MS,
  type HoldList,
  type HoldOutcome,
  type HoldRecord,
  type HoldResponse,
  toHoldView
} from "./domain/Hold.ts"
import {
  type Answer,
  decodeOutcome,
  encodeOutcome,
  fingerprintOf,
  DEFAULT_WAIT_MS,
  type IdempotencyKey,
  RETENTION_MS,
  type Write,
  type WriteError,
  type WriteValue
} from "./domain/Idempotency.ts"
import { type AccountId, isListingId } from "./domain/Ids.ts"
import {
  isTombstone,
  type ListingRecord,
  type ReaderListing,
  type ReaderPage,
  type ReaderRow,
  type RevealedListingView,
  toListingView
} from "./domain/Listing.ts"
import type { ListQuery } from "./domain/ListQuery.ts"
import type { MeView } from "./domain/Me.ts"
import { quote } from "./domain/Quote.ts"
import { effectivePlan, extensionMs, type PlanLimits } from "./domain/Plan.ts"
import { allowanceAt, planReveal, remainingReveals } from "./domain/RevealLedger.ts"
import { DEFAULT_HORIZON_DAYS, oldestAcceptedSince, pruneBefore } from "./domain/SinceHorizon.ts"
// Each use case runs in a span of its name (`Directory.list`…) while tracing is on.
import { span as useCase } from "./Spans.ts"
import { HOUR, type Instant, MINUTE, monthOf, startOfNextMonth, toIso } from "./domain/Time.ts"
import { AvailabilityCheck } from "./ports/AvailabilityCheck.ts"
import { HoldStore } from "./ports/HoldStore.ts"
import { IdempotencyStore } from "./ports/IdempotencyStore.ts"
import { KeyStore, type KeyRecord } from "./ports/KeyStore.ts"
import { type CodeField, ListingStore } from "./ports/ListingStore.ts"
import type { RateDecision } from "./ports/RateLimiter.ts"
import { RevealStore } from "./ports/RevealStore.ts"

/** An authenticated call: the key, its account, and that account's plan as resolved for this request. */
export interface Caller {
  readonly accountId: AccountId
  readonly plan: PlanLimits
  readonly key: KeyRecord
}

/** A bulk snapshot's rows, a chunk at a time, then its watermark. */
export type SnapshotItem =
  | { readonly _tag: "Rows"; readonly rows: ReadonlyArray<ReaderRow> }
  | { readonly _tag: "End"; readonly syncedAt: Instant }

/** Rows a snapshot reads at a time, and chunks read ahead of the consumer. */
export const SNAPSHOT_CHUNK = 1000
const SNAPSHOT_READ_AHEAD = 1

/**
 * Snapshots read at once by one process; more wait for a slot. Each holds a database connection
 * (on the embedded database, the only one) for as long as its client takes to read it.
 */
export const SNAPSHOTS_AT_ONCE = 2

/** How many existing codes a refusal of an unknown `category` or `source` lists. */
export const CODES_SHOWN = 25

/** `last_used_at` is written at most this often per key, so reads do not turn into writes. */
export const KEY_TOUCH_INTERVAL_MS = MINUTE

/** How many digests of unknown or revoked keys are remembered; past it the oldest is forgotten. */
export const DEAD_KEYS_REMEMBERED = 10_000

/** While a key of the earlier format lives, whether one still does is asked again this often. */
export const LEGACY_RECHECK_MS = MINUTE

/**
 * How long a repeat of a write waits for the first request with its idempotency key to end,
 * in milliseconds; past it the repeat is refused `IdempotencyKeyInUse`.
 */
export const IdempotencyWait = Context.Reference<number>("@dropshelf/core/IdempotencyWait", {
  defaultValue: () => DEFAULT_WAIT_MS
})

/**
 * How many days back the since feed reaches: an older `since` is refused `SinceTooOld`, and
 * tombstones are pruned a little after it (domain/SinceHorizon.ts).
 */
export const SinceHorizonDays = Context.Reference<number>("@dropshelf/core/SinceHorizonDays", {
  defaultValue: () => DEFAULT_HORIZON_DAYS
})

/** How often a repeat asks the store again while its first request runs in another process. */
export const IDEMPOTENCY_POLL_MS = 100

/**
 * The directory's use cases, for the REST server, the MCP tools and any service that embeds
 * the core. Every method takes an authenticated caller and returns domain values or tagged
 * domain errors; none of them knows HTTP.
 */
export class Directory extends Context.Service<Directory, {
  /** Resolves a bearer secret to a caller; the plan is read afresh on every call. */
  readonly authenticate: (secret: string | undefined) => Effect.Effect<Caller, Unauthorized>
  readonly me: (caller: Caller, rate: RateDecision) => Effect.Effect<MeView>
  /**
   * A page of listings as this caller reads them: each record with what this caller is told of
   * it (`ListingJson.pageJson` renders it as REST and MCP send it, `Listing.toPageView` makes its
   * view). The query is decoded by `ListQuery.ListQuerySchema`.
   */
  readonly list: (caller: Caller, query: ListQuery) => Effect.Effect<ReaderPage, ListError>
  /**
   * One listing as this caller reads it: its record with what this caller is told of it
   * (`ListingJson.rowJson` renders it, `Listing.toListingView` makes its view).
   */
  readonly get: (caller: Caller, id: string) => Effect.Effect<ReaderListing, ListingNotFound>
  readonly reveal: (caller: Caller, id: string) => Effect.Effect<RevealedListingView, RevealError>
  readonly hold: (caller: Caller, id: string) => Effect.Effect<HoldResponse, HoldError>
  readonly extend: (caller: Caller, holdId: string) => Effect.Effect<HoldResponse, ExtendError>
  readonly end: (caller: Caller, holdId: string, outcome: HoldOutcome) => Effect.Effect<HoldResponse, EndError>
  readonly holds: (caller: Caller) => Effect.Effect<HoldList>
  /**
   * Every listing the caller can read, as `list` shows it, from one consistent state of the
   * directory, in chunks and in no promised order, then its `synced_at`: a since run from it
   * misses no change the snapshot did not show. Plans with the since feed only. The stream reads
   * a chunk ahead of its consumer at most (a slow consumer slows the read).
   */
  readonly snapshot: (caller: Caller) => Effect.Effect<Stream.Stream<SnapshotItem>, UpgradeRequired>
  /**
   * Runs a write at most once per idempotency key of the caller's account (Stripe's model): the
   * first request with the key runs it; a repeat of the same request within 24 hours gets that
   * answer back, refusals included, with `replayed` set, and changes nothing; a repeat that
   * arrives while the first runs waits for its answer (`IdempotencyWait`, then
   * `IdempotencyKeyInUse`); the key sent with a different request is `IdempotencyKeyReused`.
   * A write that ends in a fault keeps no answer, so its repeat runs it again. A write, once
   * begun, runs to its end even if the caller stops waiting.
   */
  readonly idempotent: <W extends Write>(
    caller: Caller,
    key: IdempotencyKey,
    write: W
  ) => Effect.Effect<Answer<W>, IdempotencyKeyReused | IdempotencyKeyInUse>
  /** Deletes the records of idempotency keys past their 24 hours; returns how many. */
  readonly pruneIdempotencyKeys: Effect.Effect<number>
  /** Deletes tombstones past the since feed's horizon (and its grace and margin); returns how many. */
  readonly pruneTombstones: Effect.Effect<number>
}>()("@dropshelf/core/Directory") {
  /**
   * Prunes the records of idempotency keys and the tombstones past the since horizon once at
   * start, then every `interval` (default one hour), for as long as the layer lives. A failed
   * round is logged and the next one runs.
   */
  static readonly layerPruning = (interval: number = HOUR): Layer.Layer<never, never, Directory> =>
    Layer.effectDiscard(Effect.gen(function*() {
      const directory = yield* Directory
      const round = (what: string, prune: Effect.Effect<number>) =>
        prune.pipe(
          Effect.asVoid,
          Effect.catchCause((cause) => Effect.logWarning(`dropshelf: pruning ${what} failed`, cause))
        )
      yield* Effect.andThen(
        round("idempotency keys", directory.pruneIdempotencyKeys),
        round("tombstones", directory.pruneTombstones)
      ).pipe(
        Effect.repeat(Schedule.spaced(interval)),
        Effect.forkScoped
      )
    }))

  /** Needs every storage port, the availability check, the cursor codec and `Digest`. */
  static readonly layer = Layer.effect(
    Directory,
    Effect.gen(function*() {
      const listings = yield* ListingStore
      const reveals = yield* RevealStore
      const holdStore = yield* HoldStore
      const idempotencyStore = yield* IdempotencyStore
      const idempotencyWait = yield* IdempotencyWait
      const horizonDays = yield* SinceHorizonDays
      const keys = yield* KeyStore
      const availability = yield* AvailabilityCheck
      const cursors = yield* CursorCodec
      const digestService = yield* Digest.Digest
      const digest = (secret: string) => digestOf(secret).pipe(Effect.provideService(Digest.Digest, digestService))

      /*
       * Digests looked up and found unknown or revoked. Neither can come alive (a new key is
       * random, a revocation final), so the same dead key again costs no look-up, and unknown
       * and revoked keys take one path: one look-up the first time, none after.
       */
      const dead = new Set<string>()
      const remember = (deadDigest: string) => {
        if (dead.size >= DEAD_KEYS_REMEMBERED) dead.delete(dead.values().next().value!)
        dead.add(deadDigest)
      }

      /*
       * No key of the earlier format is issued any more, so once none lives none ever will: from
       * then on a key of that shape is refused without a look-up. Until then the answer is asked
       * again at most once a minute, by a request that carries such a key.
       */
      let legacy: { readonly live: boolean; readonly checkedAt: number } | undefined
      const legacyKeysLive = Effect.gen(function*() {
        if (legacy !== undefined && !legacy.live) return false
        const now = yield* Clock.currentTimeMillis
        if (legacy === undefined || now - legacy.checkedAt >= LEGACY_RECHECK_MS) {
          legacy = { live: yield* keys.anyLiveWithPrefix(LEGACY_KEY_MARKER), checkedAt: now }
        }
        return legacy.live
      })

      // One answer for unknown and revoked keys: a dead key should not tell whether it ever lived.
      const notKnown = () => new Unauthorized({ message: "The API key is not known or has been revoked" })

      const authenticate = Effect.fnUntraced(function*(secret: string | undefined) {
        if (secret === undefined || secret.length === 0) {
          return yield* new Unauthorized({ message: "An API key is required: send Authorization: Bearer <API_KEY>" })
        }
        const format = formatOf(secret)
        if (format === undefined) return yield* new Unauthorized({ message: "The API key is malformed" })
        if (format === "current" && !hasValidChecksum(secret)) {
          return yield* new Unauthorized({ message: "The API key is malformed: its checksum does not match; copy the whole key again" })
        }
        if (format === "legacy" && !(yield* legacyKeysLive)) return yield* notKnown()
        const keyDigest = yield* digest(secret)
        if (dead.has(keyDigest)) return yield* notKnown()
        const found = yield* keys.findByDigest(keyDigest)
        const now = yield* Clock.currentTimeMillis
        // An expired key reads as revoked, and stays so: an expiry is only ever brought forward.
        if (found === undefined || !isLiveAt(found.key, now)) {
          remember(keyDigest)
          return yield* notKnown()
        }
        const due = found.key.lastUsedAt === null || now - found.key.lastUsedAt >= KEY_TOUCH_INTERVAL_MS
        if (due) yield* keys.touch(found.key.id, now)
        return {
          accountId: found.account.id,
          plan: effectivePlan(found.account.plan),
          key: due ? { ...found.key, lastUsedAt: now } : found.key
        } satisfies Caller
      }, useCase("Directory.authenticate"))

      const me = Effect.fnUntraced(function*(caller: Caller, rate: RateDecision) {
        const now = yield* Clock.currentTimeMillis
        const used = yield* reveals.usedIn(caller.accountId, monthOf(now))
        return {
          plan: caller.plan.name,
          reveals: {
            limit: caller.plan.revealsPerMonth,
            remaining: remainingReveals(caller.plan, used),
            used,
            resets_at: toIso(startOfNextMonth(now))
          },
          rate_limit: { limit: rate.limit, remaining: rate.remaining },
          sync_feed: caller.plan.sinceFeed,
          since_horizon_days: caller.plan.sinceFeed ? horizonDays : null,
          key: {
            name: caller.key.name,
            prefix: caller.key.prefix,
            created_at: toIso(caller.key.createdAt),
            last_used_at: caller.key.lastUsedAt === null ? null : toIso(caller.key.lastUsedAt)
          }
        } satisfies MeView
      }, useCase("Directory.me"))

      /**
       * A listing `caller` may read, with its running hold and whether `revealsOf` revealed it,
       * in one look-up (a single read's): no page machinery.
       */
      const findReadable = Effect.fnUntraced(function*(caller: Caller, id: string, now: Instant, revealsOf: string | undefined) {
        if (!isListingId(id)) return yield* new ListingNotFound({ listingId: id })
        const found = yield* listings.findForReader(id, { at: now, revealsOf })
        if (found === undefined || !isReadableAt(found.listing, caller.plan, now)) return yield* new ListingNotFound({ listingId: id })
        return found
      })

      /** What `caller` is told of each row, given the holds running on them and the rows it revealed. */
      const readerRowsFor = (
        caller: Caller,
        rows: ReadonlyArray<ListingRecord>,
        running: ReadonlyMap<string, HoldRecord>,
        revealed: ReadonlySet<string>
      ): Array<ReaderRow> =>
        rows.map((row): ReaderRow =>
          isTombstone(row.status)
            ? { _tag: "Tombstone", listing: row }
            : {
              _tag: "Listing",
              listing: row,
              reader: readerViewOf({
                plan: caller.plan,
                accountId: caller.accountId,
                tier: row.tier,
                hold: running.get(row.id),
                revealed: revealed.has(row.id)
              })
            }
        )

      const positionAfter = (row: ListingRecord, order: "id" | "latest"): CursorPosition =>
        order === "id" ? { order, id: row.id } : { order, discoveredAt: row.discoveredAt, id: row.id }

      /**
       * A filter's codes must be ones listings carry: an unknown one is refused with the codes
       * that exist, or, past `CODES_SHOWN`, with those from the unknown one on, so that sending
       * codes no listing carries walks the whole list.
       */
      const checkCodes = Effect.fnUntraced(function*(field: CodeField, codes: ReadonlyArray<string> | undefined) {
        if (codes === undefined || codes.length === 0) return
        const unknown = yield* listings.unknownCodes(field, codes)
        if (unknown.length === 0) return
        const refused = `unknown: ${quote(unknown.join(", "))}`
        const first = yield* listings.knownCodes(field, "", CODES_SHOWN + 1)
        if (first.length === 0) {
          return yield* new InvalidRequest({ parameter: field, message: `${field} accepts the codes listings carry, and none carries one; ${refused}` })
        }
        if (first.length <= CODES_SHOWN) {
          return yield* new InvalidRequest({ parameter: field, message: `${field} accepts the codes listings carry: ${first.join(", ")}; ${refused}` })
        }
        const from = yield* listings.knownCodes(field, unknown[0]!, CODES_SHOWN + 1)
        const shown = from.length > 0 ? from : first
        const start = from.length > 0 ? `those from ${quote(unknown[0]!)} on` : "the first"
        const next = shown.length > CODES_SHOWN ? `, …; the next ones: ${field}=${shown[CODES_SHOWN - 1]!}-` : ""
        return yield* new InvalidRequest({
          parameter: field,
          message: `${field} accepts the codes listings carry, more than ${CODES_SHOWN} (a code no listing carries lists those from it on); ${start}: ${
            shown.slice(0, CODES_SHOWN).join(", ")
          }${next}; ${refused}`
        })
      })

      /** Of `codes`, those no active row of `rows` carries. */
      const unseen = (
        codes: ReadonlyArray<string> | undefined,
        rows: ReadonlyArray<ListingRecord>,
        codeOf: (row: ListingRecord) => string | null
      ) => {
        if (codes === undefined) return undefined
        const carried = new Set<string | null>()
        for (const row of rows) if (row.status === "active") carried.add(codeOf(row))
        return codes.filter((code) => !carried.has(code))
      }

      /**
       * The filters' category and source codes, but those an active row of `rows` carries: such
       * a row is a listing carrying the code, so only the others need the store's word.
       */
      const checkCodesBeyond = (filters: ListQuery["filters"], rows: ReadonlyArray<ListingRecord>) =>
        Effect.andThen(
          checkCodes("category", unseen(filters.categories, rows, (row) => row.category)),
          checkCodes("source", unseen(filters.sources, rows, (row) => row.source))
        )

      const list = Effect.fnUntraced(function*(caller: Caller, query: ListQuery) {
        if (query.since !== undefined && !caller.plan.sinceFeed) {
          return yield* new UpgradeRequired({
            feature: "since",
            message: "The since feed is available on the business plan"
          })
        }
        if (query.since !== undefined) {
          const oldestAccepted = oldestAcceptedSince(yield* Clock.currentTimeMillis, horizonDays, query.cursor !== undefined)
          if (query.since < oldestAccepted) {
            return yield* new SinceTooOld({ since: query.since, oldestAccepted, horizonDays })
          }
        }
        // An unknown code is refused before a bad cursor, as when the codes were checked first.
        const after = query.cursor === undefined ? undefined : yield* cursors.read(query.cursor, query.order).pipe(
          Effect.catch((error) => Effect.andThen(checkCodesBeyond(query.filters, []), Effect.fail(error)))
        )
        // synced_at is read before any row, so nothing committed after it can be missed next run.
        const syncedAt = yield* listings.syncedAt
        const now = yield* Clock.currentTimeMillis
        const page = yield* listings.page({
          order: query.order,
          after,
          limit: query.limit,
          filters: query.filters,
          visibleBefore: now - caller.plan.accessDelayMs,
          since: query.since,
          now,
          reader: { at: now, revealsOf: revealsOf(caller.plan, caller.accountId) }
        })
        yield* checkCodesBeyond(query.filters, page.rows)
        if (!page.anchorExists) {
          return yield* new InvalidRequest({
            parameter: "cursor",
            message: "cursor names a position the directory no longer holds; start again without cursor"
          })
        }
        const rows = readerRowsFor(caller, page.rows, page.running, page.revealed)
        const last = page.rows[page.rows.length - 1]
        const nextCursor = page.hasMore && last !== undefined
          ? yield* cursors.issue(positionAfter(last, query.order))
          : null
        return { rows, nextCursor, syncedAt } satisfies ReaderPage
      }, useCase("Directory.list"))

      const get = Effect.fnUntraced(function*(caller: Caller, id: string) {
        const now = yield* Clock.currentTimeMillis
        const found = yield* findReadable(caller, id, now, revealsOf(caller.plan, caller.accountId))
        const reader = readerViewOf({
          plan: caller.plan,
          accountId: caller.accountId,
          tier: found.listing.tier,
          hold: found.running,
          revealed: found.revealed
        })
        return { _tag: "Listing", listing: found.listing, reader } as const satisfies ReaderListing
      }, useCase("Directory.get"))

      const reveal = Effect.fnUntraced(function*(caller: Caller, id: string) {
        const now = yield* Clock.currentTimeMillis
        const found = yield* findReadable(caller, id, now, caller.accountId)
        let listing = found.listing
        // The entry itself (its first instant) only for a repeat: a first reveal reads nothing more.
        const existing = found.revealed ? yield* reveals.find(caller.accountId, listing.id) : undefined
        const running = found.running
        const holdState = holdStateOf(caller.accountId, running)
        let plan = yield* Effect.fromResult(planReveal({
          plan: caller.plan,
          tier: listing.tier,
          existing,
          heldByOtherUntil: holdState === "other" ? running!.expiresAt : undefined
        }))
        let allowance = plan._tag === "First" && plan.charged ? allowanceAt(caller.plan, now) : undefined
        // The allowance looked spent; the unit may have gone to a concurrent reveal of this very
        // listing, and then this one is its repeat.
        const repeatOfConcurrent = Effect.flatMap(reveals.find(caller.accountId, listing.id), (entry) =>
          entry === undefined ? Effect.fail(new QuotaExhausted({ resetsAt: startOfNextMonth(now) })) : Effect.succeed(entry))
        // A cheap early refusal; the store's conditional charge below is what guarantees the ceiling.
        if (allowance !== undefined && (yield* reveals.usedIn(caller.accountId, allowance.month)) >= allowance.limit) {
          plan = { _tag: "Repeat", entry: yield* repeatOfConcurrent }
          allowance = undefined
        }
        const checked = yield* availability.check(listing.domain)
        if (checked._tag === "Registered") {
          yield* listings.delist([listing.id], "delisted")
          return yield* new ListingNotFound({ listingId: listing.id })
        }
        if (checked._tag === "Unregistered") {
          listing = (yield* listings.stampAvailability(listing.id, checked.checkedAt)) ?? listing
        }
        let revealedAt: Instant
        let first = false
        if (plan._tag === "Repeat") {
          revealedAt = plan.entry.revealedAt
        } else {
          const outcome = yield* reveals.record({
            accountId: caller.accountId,
            listingId: listing.id,
            at: now,
            charge: allowance
          })
          first = outcome._tag === "Recorded" && outcome.fresh
          revealedAt = outcome._tag === "AllowanceSpent" ? (yield* repeatOfConcurrent).revealedAt : outcome.entry.revealedAt
        }
        yield* Metric.update(first ? DirectoryMetrics.firstReveals : DirectoryMetrics.repeatReveals, 1)
        const view = toListingView(
          listing,
          readerViewOf({ plan: caller.plan, accountId: caller.accountId, tier: listing.tier, hold: running, revealed: true })
        )
        return { ...view, revealed_at: toIso(revealedAt) } satisfies RevealedListingView
      }, useCase("Directory.reveal"))

      const holdResponse = Effect.fnUntraced(function*(caller: Caller, hold: HoldRecord, now: Instant) {
        const active = yield* holdStore.countRunning(caller.accountId, now)
        return {
          hold: toHoldView(hold, now, caller.plan),
          holds: {
            active,
            hold_hours: caller.plan.holdHours,
            limit: caller.plan.concurrentHolds,
            plan: caller.plan.name
          }
        } satisfies HoldResponse
      })

      const hold = Effect.fnUntraced(function*(caller: Caller, id: string) {
        const now = yield* Clock.currentTimeMillis
        const { listing, running, revealed } = yield* findReadable(caller, id, now, caller.accountId)
        if (caller.plan.concurrentHolds === 0) return yield* new HoldsRequirePro()
        // Another account's hold is reported first, with when it ends, even to an account that has
        // not revealed: it could not reveal while the hold runs, and needs to know when to retry.
        if (running !== undefined && running.accountId !== caller.accountId) {
          return yield* new HeldByOther({ expiresAt: running.expiresAt })
        }
        if (!revealed) return yield* new RevealRequired()
        const { hold } = yield* holdStore.acquire({ accountId: caller.accountId, listingId: listing.id, plan: caller.plan, now })
        yield* Metric.update(DirectoryMetrics.holds, 1)
        return yield* holdResponse(caller, hold, now)
      }, useCase("Directory.hold"))

      const extend = Effect.fnUntraced(function*(caller: Caller, holdId: string) {
        const now = yield* Clock.currentTimeMillis
        const own = yield* holdStore.findOwn(caller.accountId, holdId)
        if (own === undefined) return yield* new HoldNotFound({ holdId })
        if (caller.plan.concurrentHolds === 0) return yield* new HoldsRequirePro()
        const extended = yield* holdStore.extend({
          accountId: caller.accountId,
          holdId,
          now,
          extensionMs: extensionMs(caller.plan)
        })
        return yield* holdResponse(caller, extended, now)
      }, useCase("Directory.extend"))

      const end = Effect.fnUntraced(function*(caller: Caller, holdId: string, outcome: HoldOutcome) {
        const now = yield* Clock.currentTimeMillis
        const ended = yield* holdStore.end({ accountId: caller.accountId, holdId, now, outcome })
        return yield* holdResponse(caller, ended, now)
      }, useCase("Directory.end"))

      const snapshotSlots = yield* Semaphore.make(SNAPSHOTS_AT_ONCE)
      const snapshot = Effect.fnUntraced(function*(caller: Caller) {
        if (!caller.plan.sinceFeed) {
          return yield* new UpgradeRequired({
            feature: "snapshot",
            message: "The bulk snapshot is available on the business plan"
          })
        }
        return Stream.callback<SnapshotItem>((queue) =>
          Effect.gen(function*() {
            // Read before the snapshot's own transaction starts, as a since page reads it before its rows.
            const syncedAt = yield* listings.syncedAt
            const now = yield* Clock.currentTimeMillis
            yield* listings.snapshot({
              visibleBefore: now - caller.plan.accessDelayMs,
              chunkSize: SNAPSHOT_CHUNK,
              reader: { at: now, revealsOf: revealsOf(caller.plan, caller.accountId) }
            }, (chunk) => Queue.offer(queue, { _tag: "Rows", rows: readerRowsFor(caller, chunk.rows, chunk.running, chunk.revealed) }))
            yield* Queue.offer(queue, { _tag: "End", syncedAt })
            yield* Queue.end(queue)
          }).pipe(Semaphore.withPermits(snapshotSlots, 1)), { bufferSize: SNAPSHOT_READ_AHEAD, strategy: "suspend" })
      }, useCase("Directory.snapshot"))

      const holds = Effect.fnUntraced(function*(caller: Caller) {
        const now = yield* Clock.currentTimeMillis
        const records = yield* holdStore.forAccount(caller.accountId, now - ENDED_HOLD_LISTING_MS, now)
        return { data: records.map((record) => toHoldView(record, now, caller.plan)) } satisfies HoldList
      }, useCase("Directory.holds"))

      const perform = <W extends Write>(caller: Caller, write: W): Effect.Effect<WriteValue<W>, WriteError<W>> => {
        const run: Write = write
        switch (run._tag) {
          case "Reveal":
            return reveal(caller, run.listingId) as Effect.Effect<WriteValue<W>, WriteError<W>>
          case "Hold":
            return hold(caller, run.listingId) as Effect.Effect<WriteValue<W>, WriteError<W>>
          case "Extend":
            return extend(caller, run.holdId) as Effect.Effect<WriteValue<W>, WriteError<W>>
          case "End":
            return end(caller, run.holdId, run.outcome) as Effect.Effect<WriteValue<W>, WriteError<W>>
        }
      }

      /*
       * Requests of this process holding a key of an account: one at a time asks the store, and
       * the one that runs the write holds the key here until the write has ended. A repeat that
       * arrives meanwhile waits for that, rather than asking the store again and again; only
       * a repeat whose first request runs in another process polls the store.
       */
      const keysHeld = new Map<string, Deferred.Deferred<void>>()

      /**
       * Runs the write and keeps its answer. A fault, in the write or in keeping its answer, keeps
       * none: the record is released, so a repeat runs the write again, and the fault is passed on.
       */
      const runAndKeep = <W extends Write>(caller: Caller, key: IdempotencyKey, write: W, startedAt: Instant) => {
        const run = { accountId: caller.accountId, key, startedAt }
        return Effect.result(perform(caller, write)).pipe(
          Effect.flatMap((result) => {
            const outcome = encodeOutcome<W>(write._tag, result)
            // Every caller gets the answer as it was kept, the first one included.
            return Effect.as(idempotencyStore.complete({ ...run, outcome }), decodeOutcome<W>(write._tag, outcome))
          }),
          Effect.onError(() => idempotencyStore.release(run))
        )
      }

      const idempotent = Effect.fnUntraced(function*<W extends Write>(caller: Caller, key: IdempotencyKey, write: W) {
        const fingerprint = fingerprintOf(write)
        const held = `${caller.accountId}\u0000${key}`
        const deadline = (yield* Clock.currentTimeMillis) + idempotencyWait
        while (true) {
          const now = yield* Clock.currentTimeMillis
          const mine = yield* Deferred.make<void>()
          const holder = keysHeld.get(held)
          if (holder !== undefined) {
            if (now >= deadline) return yield* new IdempotencyKeyInUse({ key })
            yield* Effect.timeoutOption(Deferred.await(holder), deadline - now)
            continue
          }
          keysHeld.set(held, mine)
          const letGo = Effect.suspend(() => {
            if (keysHeld.get(held) === mine) keysHeld.delete(held)
            return Deferred.succeed(mine, undefined)
          })
          // Asking the store and starting the write are one step: an abandoned request never leaves
          // a record claimed without a write running for it.
          const begun = yield* Effect.uninterruptible(Effect.gen(function*() {
            const decision = yield* Effect.onError(
              idempotencyStore.begin({ accountId: caller.accountId, key, fingerprint, now }),
              () => letGo
            )
            if (decision._tag !== "Run") {
              yield* letGo
              return { decision, runner: undefined }
            }
            // Detached: a caller that stops waiting does not cut the write short; its answer is kept.
            const runner = yield* Effect.forkDetach(runAndKeep(caller, key, write, now).pipe(Effect.ensuring(letGo)))
            return { decision, runner }
          }))
          if (begun.runner !== undefined) return { result: yield* Fiber.join(begun.runner), replayed: false } as Answer<W>
          switch (begun.decision._tag) {
            case "Replay": {
              const outcome = begun.decision.outcome
              return { result: yield* Effect.sync(() => decodeOutcome<W>(write._tag, outcome)), replayed: true } as Answer<W>
            }
            case "Reused":
              return yield* new IdempotencyKeyReused({ key })
            default:
              if (now >= deadline) return yield* new IdempotencyKeyInUse({ key })
              yield* Effect.sleep(Math.min(IDEMPOTENCY_POLL_MS, deadline - now))
          }
        }
      }, useCase("Directory.idempotent"))

      const pruneIdempotencyKeys = Effect.flatMap(
        Clock.currentTimeMillis,
        (now) => idempotencyStore.prune(now - RETENTION_MS)
      ).pipe(useCase("Directory.pruneIdempotencyKeys"))

      const pruneTombstones = Effect.flatMap(
        Clock.currentTimeMillis,
        (now) => listings.pruneTombstones(pruneBefore(now, horizonDays))
      ).pipe(useCase("Directory.pruneTombstones"))

      return Directory.of({
        authenticate,
        me,
        list,
        get,
        reveal,
        hold,
        extend,
        end,
        holds,
        snapshot,
        idempotent,
        pruneIdempotencyKeys,
        pruneTombstones
      })
    })
  )
}

