import { Clock, Effect, Queue, Semaphore, Stream } from "effect"
import { type CursorPosition, CursorCodec } from "../domain/Cursor.ts"
import { isReadableAt, readerViewOf, revealsOf } from "../domain/Disclosure.ts"
import { InvalidRequest, ListingNotFound, SinceTooOld, UpgradeRequired } from "../domain/errors.ts"
import type { HoldRecord } from "../domain/Hold.ts"
import { isListingId } from "../domain/Ids.ts"
import { isTombstone, type ListingRecord, type ReaderListing, type ReaderPage, type ReaderRow } from "../domain/Listing.ts"
import type { ListQuery } from "../domain/ListQuery.ts"
import { quote } from "../domain/Quote.ts"
import { oldestAcceptedSince, pruneBefore } from "../domain/SinceHorizon.ts"
import type { Instant } from "../domain/Time.ts"
import { type CodeField, ListingStore, type ReaderFind } from "../ports/ListingStore.ts"
import { span as useCase } from "../Spans.ts"
import type { Caller } from "./Authentication.ts"

/*
 * The reads: a page (`Directory.list`), one listing (`Directory.get`), the bulk snapshot, each
 * record with what its reader is told of it; and the pruning of tombstones past the since
 * feed's horizon.
 */

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

/** A listing the caller may read, with its running hold and whether `revealsOf` revealed it. */
export type FindReadable = (
  caller: Caller,
  id: string,
  now: Instant,
  revealsOf: string | undefined
) => Effect.Effect<ReaderFind, ListingNotFound>

/**
 * `list`, `get`, `snapshot` and `pruneTombstones`, and `findReadable` for the writes that start
 * from a listing; `horizonDays` is the since feed's reach.
 */
export const make = (horizonDays: number) => Effect.gen(function*() {
  const listings = yield* ListingStore
  const cursors = yield* CursorCodec

  /**
   * A listing `caller` may read, with its running hold and whether `revealsOf` revealed it,
   * in one look-up (a single read's): no page machinery.
   */
  const findReadable = Effect.fnUntraced(function*(caller: Caller, id: string, now: Instant, revealsOf: string | undefined, latest = true) {
    if (!isListingId(id)) return yield* new ListingNotFound({ listingId: id })
    const found = yield* listings.findForReader(id, { at: now, revealsOf, accountId: caller.accountId, latest })
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
      reader: { at: now, revealsOf: revealsOf(caller.plan, caller.accountId), accountId: caller.accountId }
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
    const found = yield* findReadable(caller, id, now, revealsOf(caller.plan, caller.accountId), false)
    const reader = readerViewOf({
      plan: caller.plan,
      accountId: caller.accountId,
      tier: found.listing.tier,
      hold: found.running,
      revealed: found.revealed
    })
    return { _tag: "Listing", listing: found.listing, reader } as const satisfies ReaderListing
  }, useCase("Directory.get"))

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
          reader: { at: now, revealsOf: revealsOf(caller.plan, caller.accountId), accountId: caller.accountId }
        }, (chunk) => Queue.offer(queue, { _tag: "Rows", rows: readerRowsFor(caller, chunk.rows, chunk.running, chunk.revealed) }))
        yield* Queue.offer(queue, { _tag: "End", syncedAt })
        yield* Queue.end(queue)
      }).pipe(Semaphore.withPermits(snapshotSlots, 1)), { bufferSize: SNAPSHOT_READ_AHEAD, strategy: "suspend" })
  }, useCase("Directory.snapshot"))

  const pruneTombstones = Effect.flatMap(
    Clock.currentTimeMillis,
    (now) => listings.pruneTombstones(pruneBefore(now, horizonDays))
  ).pipe(useCase("Directory.pruneTombstones"))

  return { list, get, snapshot, pruneTombstones, findReadable: findReadable satisfies FindReadable }
})
