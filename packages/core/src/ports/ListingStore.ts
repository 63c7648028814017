import { Context, type Effect } from "effect"
import type { CursorPosition } from "../domain/Cursor.ts"
import type { HoldRecord } from "../domain/Hold.ts"
import type { ListingId } from "../domain/Ids.ts"
import type { DelistReason, ListingRecord, ListingStatus } from "../domain/Listing.ts"
import type { ListFilters, ListOrder } from "../domain/ListQuery.ts"
import type { Instant } from "../domain/Time.ts"

/**
 * One page of listings. Its instants (`now`, and `visibleBefore` and `reader.at` taken from it)
 * are the caller's clock when it asked. The caller gets the page it would have got by asking at
 * some moment between its call and the answer: the rows, holds and reveals of that moment, read
 * with the instants the caller would then have sent (all three the same distance apart). But
 * the rows of a `since` page after the first (`after` set) may be as they stood shortly before
 * the call, read with a `visibleBefore` no later than this one: a row changed in between is
 * missed or shown as it was, and the next run, from the first page's `synced_at`, brings it.
 */
export interface PageRequest {
  readonly order: ListOrder
  /** Keyset position: rows strictly after it in `order`. */
  readonly after: CursorPosition | undefined
  readonly limit: number
  readonly filters: ListFilters
  /** Access delay: only rows with `discoveredAt <= visibleBefore`. */
  readonly visibleBefore: Instant
  /** A `since` run: rows with `updatedAt >= since`, tombstones included, ordered by id. */
  readonly since: Instant | undefined
  /** Reference time for relative filters (`checkedDays`). */
  readonly now: Instant
  /** Who will read the page: the page answers, with its rows, what this reader needs of each. */
  readonly reader: PageReader
}

export interface PageReader {
  /** The instant at which a hold counts as running. */
  readonly at: Instant
  /** The account whose reveals matter; undefined when none do (a plan without a ceiling). */
  readonly revealsOf: string | undefined
  /** The account reading, when one is: a store with read replicas shows it its own writes. */
  readonly accountId?: string | undefined
  /**
   * The answer decides a write (a reveal, a hold) or is sent out (a webhook's listing): the store
   * answers from its latest state, never from a read replica that may trail it.
   */
  readonly latest?: boolean | undefined
}

/**
 * One page and what the directory needs to tell its reader about each row: the holds running
 * on the rows and which of them the reader revealed.
 */
export interface PageResult {
  /** Active rows, plus sold, blocked and delisted rows on a `since` run; never drafts. */
  readonly rows: ReadonlyArray<ListingRecord>
  readonly hasMore: boolean
  /** Exactly `HoldStore.runningOn(ids of rows, reader.at)`. */
  readonly running: ReadonlyMap<string, HoldRecord>
  /** Exactly `RevealStore.revealedAmong(reader.revealsOf, ids of rows)`; empty when `revealsOf` is undefined. */
  readonly revealed: ReadonlySet<string>
  /**
   * Whether the row `after` names is in the directory (any status, tombstones included), as
   * `find(after.id) !== undefined` would say; true when there is no `after`.
   */
  readonly anchorExists: boolean
}

/** A bulk snapshot: every active row the reader may see, read from one consistent state of the store. */
export interface SnapshotRequest {
  /** Access delay: only rows with `discoveredAt <= visibleBefore`. */
  readonly visibleBefore: Instant
  /** Rows handed over at a time. */
  readonly chunkSize: number
  readonly reader: PageReader
}

/** Rows of a snapshot and, as for a page, what the reader needs of each. */
export interface SnapshotChunk {
  readonly rows: ReadonlyArray<ListingRecord>
  /** Exactly `HoldStore.runningOn(ids of rows, reader.at)`. */
  readonly running: ReadonlyMap<string, HoldRecord>
  /** Exactly `RevealStore.revealedAmong(reader.revealsOf, ids of rows)`; empty when `revealsOf` is undefined. */
  readonly revealed: ReadonlySet<string>
}

/** One listing and what its reader needs of it, read together (`ListingStore.findForReader`). */
export interface ReaderFind {
  readonly listing: ListingRecord
  /** Exactly `HoldStore.runningOn([listing.id], reader.at)`'s hold, if any. */
  readonly running: HoldRecord | undefined
  /** Exactly whether `RevealStore.revealedAmong(reader.revealsOf, [listing.id])` holds it; false when `revealsOf` is undefined. */
  readonly revealed: boolean
}

/** A listing as written by an import: exact figures; `discoveredAt` applies only on insert. */
export interface ListingInput extends Omit<ListingRecord, "updatedAt" | "status" | "discoveredAt"> {
  readonly status: Extract<ListingStatus, "active" | "draft" | "blocked">
  readonly discoveredAt: Instant
}

export interface UpsertResult {
  readonly inserted: number
  readonly updated: number
}

/** The listing fields a list filter names codes of: a filter's code must be one the directory holds. */
export type CodeField = "category" | "source"

/** The directory's listings. `updatedAt` is the store's to stamp on every change of a row. */
export class ListingStore extends Context.Service<ListingStore, {
  readonly page: (request: PageRequest) => Effect.Effect<PageResult>
  /** Any row, whatever its status. */
  readonly find: (id: ListingId) => Effect.Effect<ListingRecord | undefined>
  /**
   * `find(id)` with its running hold and its reveal by `reader`, as a page answers them, in one
   * look-up: what a single read needs. As with a page, the caller gets the answer it would
   * have got by asking at some moment between its call and the answer.
   */
  readonly findForReader: (id: ListingId, reader: PageReader) => Effect.Effect<ReaderFind | undefined>
  /**
   * Of `codes`, in the order given, those no listing in the directory carries in `field` (active
   * listings; drafts and tombstones do not count).
   */
  readonly unknownCodes: (field: CodeField, codes: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Up to `limit` distinct codes active listings carry in `field`, ascending in the store's
   * order, from the first at or after `from` (`""`: from the first). Asked only when a filter
   * names an unknown code, to list those that exist.
   */
  readonly knownCodes: (field: CodeField, from: string, limit: number) => Effect.Effect<ReadonlyArray<string>>
  /**
   * The `synced_at` watermark of a page, read before any row: 120 s behind the store's clock,
   * and never later than a change that may still commit.
   */
  readonly syncedAt: Effect.Effect<Instant>
  /**
   * Every active row visible before `request.visibleBefore`, in chunks of at most `chunkSize`,
   * in no promised order, all read from one state of the store: a write that commits while it
   * runs is seen whole or not at all. `emit` is awaited before the next chunk is read, so a slow
   * consumer slows the read rather than growing memory. A write that was not seen carries an
   * `updatedAt` at or after a `syncedAt` read before the call.
   */
  readonly snapshot: (request: SnapshotRequest, emit: (chunk: SnapshotChunk) => Effect.Effect<void>) => Effect.Effect<void>
  readonly upsert: (batch: ReadonlyArray<ListingInput>) => Effect.Effect<UpsertResult>
  /** Active, draft or blocked rows among `ids` leave the directory; returns the ids that changed. */
  readonly delist: (ids: ReadonlyArray<ListingId>, reason: DelistReason) => Effect.Effect<ReadonlyArray<ListingId>>
  /**
   * Deletes tombstones (sold, blocked and delisted rows) last changed before `before`; returns
   * how many. Active and draft rows are never deleted. An id pruned and imported again is a new
   * row: `discoveredAt` is the import's.
   */
  readonly pruneTombstones: (before: Instant) => Effect.Effect<number>
  /** Records a confirmation that the name is unregistered. */
  readonly stampAvailability: (id: ListingId, at: Instant) => Effect.Effect<ListingRecord | undefined>
  /** Computes `maskHint` on rows where it is null; returns how many rows changed. */
  readonly backfillMasks: (mask: (domain: string) => string) => Effect.Effect<number>
}>()("@dropshelf/core/ListingStore") {}
