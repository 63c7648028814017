import { type Cursor, type Hold, type Ids, Listing, ListingFilter, ListingStore } from "@dropshelf/core"
import { Clock, Effect } from "effect"
import { compareIds } from "./IdOrder.ts"

/*
 * Listings in memory. The store reads the hold and reveal stores' state directly, so a page
 * answers for its reader exactly as those stores would at the same step.
 */

type ListingRecord = Listing.ListingRecord
type HoldRecord = Hold.HoldRecord

/** How far `synced_at` trails the clock, as in the spec. */
export const SYNC_LAG_MS = 120_000

/** What a page reads of the hold and reveal stores' state, to answer for its reader. */
export interface ReaderState {
  readonly runningOn: (listingIds: ReadonlyArray<string>, at: number) => ReadonlyMap<string, HoldRecord>
  readonly revealedAmong: (accountId: string, listingIds: ReadonlyArray<string>) => ReadonlySet<string>
  /** Told of every write of a listing row, in the same step (the watch store's change events). */
  readonly written: (before: ListingRecord | undefined, after: ListingRecord) => void
}

export const makeListingStore = (state: ReaderState, rows: Map<string, ListingRecord>) => Effect.gen(function*() {
  const now = Clock.currentTimeMillis

  const afterPosition = (position: Cursor.CursorPosition | undefined) => (row: ListingRecord): boolean => {
    if (position === undefined) return true
    if (position.order === "id") return row.id > position.id
    return row.discoveredAt < position.discoveredAt ||
      (row.discoveredAt === position.discoveredAt && row.id > position.id)
  }

  const page = (request: ListingStore.PageRequest) =>
    Effect.sync((): ListingStore.PageResult => {
      const isInRun = request.since === undefined
        ? (row: ListingRecord) => row.status === "active"
        : (row: ListingRecord) =>
          row.updatedAt >= request.since! && (row.status === "active" || Listing.isTombstone(row.status))
      const after = afterPosition(request.after)
      const matching = [...rows.values()].filter((row) =>
        isInRun(row) && row.discoveredAt <= request.visibleBefore && after(row) &&
        (row.status !== "active" || ListingFilter.matchesFilters(row, request.filters, request.now))
      )
      matching.sort(request.order === "id"
        ? (a, b) => compareIds(a.id, b.id)
        : (a, b) => b.discoveredAt - a.discoveredAt || compareIds(a.id, b.id))
      const page = matching.slice(0, request.limit)
      const ids = page.map((row) => row.id)
      const { after: anchor, reader } = request
      return {
        rows: page,
        hasMore: matching.length > request.limit,
        running: state.runningOn(ids, reader.at),
        revealed: reader.revealsOf === undefined ? new Set() : state.revealedAmong(reader.revealsOf, ids),
        anchorExists: anchor === undefined || rows.has(anchor.id)
      }
    })

  /** The rows as they are at the call (records are never mutated, only replaced), handed over chunk by chunk. */
  const snapshot = (request: ListingStore.SnapshotRequest, emit: (chunk: ListingStore.SnapshotChunk) => Effect.Effect<void>) =>
    Effect.gen(function*() {
      const visible = [...rows.values()].filter((row) => row.status === "active" && row.discoveredAt <= request.visibleBefore)
      const { reader } = request
      for (let start = 0; start < visible.length; start += request.chunkSize) {
        const chunk = visible.slice(start, start + request.chunkSize)
        const ids = chunk.map((row) => row.id)
        yield* emit({
          rows: chunk,
          running: state.runningOn(ids, reader.at),
          revealed: reader.revealsOf === undefined ? new Set() : state.revealedAmong(reader.revealsOf, ids)
        })
      }
    })

  const upsert = (batch: ReadonlyArray<ListingStore.ListingInput>) =>
    Effect.map(now, (at) => {
      let inserted = 0
      let updated = 0
      for (const input of batch) {
        const existing = rows.get(input.id)
        if (existing === undefined) inserted++
        else updated++
        const written = { ...input, discoveredAt: existing?.discoveredAt ?? input.discoveredAt, updatedAt: at }
        rows.set(input.id, written)
        state.written(existing, written)
      }
      return { inserted, updated }
    })

  const codesOf = (field: ListingStore.CodeField): Set<string> => {
    const known = new Set<string>()
    for (const row of rows.values()) {
      const code = row[field]
      if (row.status === "active" && code !== null) known.add(code)
    }
    return known
  }

  const delist = (ids: ReadonlyArray<Ids.ListingId>, reason: Listing.DelistReason) =>
    Effect.map(now, (at) => {
      const changed: Array<Ids.ListingId> = []
      for (const id of new Set(ids)) {
        const row = rows.get(id)
        if (row === undefined || row.status === "sold" || row.status === "delisted") continue
        const written = { ...row, status: reason, updatedAt: at }
        rows.set(id, written)
        state.written(row, written)
        changed.push(id)
      }
      return changed as ReadonlyArray<Ids.ListingId>
    })

  return ListingStore.ListingStore.of({
    page,
    snapshot,
    find: (id) => Effect.sync(() => rows.get(id)),
    findForReader: (id, reader) =>
      Effect.sync(() => {
        const listing = rows.get(id)
        if (listing === undefined) return undefined
        return {
          listing,
          running: state.runningOn([id], reader.at).get(id),
          revealed: reader.revealsOf !== undefined && state.revealedAmong(reader.revealsOf, [id]).has(id)
        }
      }),
    unknownCodes: (field, codes) =>
      Effect.sync(() => {
        const known = codesOf(field)
        return codes.filter((code) => !known.has(code))
      }),
    knownCodes: (field, from, limit) =>
      Effect.sync(() => [...codesOf(field)].filter((code) => code >= from).sort().slice(0, limit)),
    syncedAt: Effect.map(now, (at) => at - SYNC_LAG_MS),
    upsert,
    delist,
    pruneTombstones: (before) =>
      Effect.sync(() => {
        let pruned = 0
        for (const row of [...rows.values()]) {
          if (Listing.isTombstone(row.status) && row.updatedAt < before) {
            rows.delete(row.id)
            pruned++
          }
        }
        return pruned
      }),
    stampAvailability: (id, checkedAt) =>
      Effect.map(now, (at) => {
        const row = rows.get(id)
        if (row === undefined) return undefined
        const stamped = { ...row, availabilityCheckedAt: checkedAt, updatedAt: at }
        rows.set(id, stamped)
        state.written(row, stamped)
        return stamped
      }),
    backfillMasks: (mask) =>
      Effect.map(now, (at) => {
        let changed = 0
        for (const row of rows.values()) {
          if (row.maskHint !== null) continue
          const written = { ...row, maskHint: mask(row.domain), updatedAt: at }
          rows.set(row.id, written)
          state.written(row, written)
          changed++
        }
        return changed
      })
  })
})
