import type { ListingStore, Time } from "@dropshelf/core"
import { Deferred, Effect, Exit, type Scope } from "effect"
import type { SqlClient } from "effect/sql"
import type { PageStatement, PageStatementRequest } from "./PageStatement.ts"
import { accountsAsked, layoutOf, type ReaderAnswers, readerAnswers } from "./ListingRows.ts"
import type { PageReads, Read, Served } from "./PageReads.ts"
import type * as StoreCaches from "./StoreCaches.ts"
import { readWatermark } from "./Watermark.ts"

/*
 * The since feed: its `synced_at` watermark, and the pages of a since run, the next of which is
 * read ahead while a consumer that follows a cursor handles the current one. A page read ahead
 * carries rows only: who holds or revealed what is read when the page is served.
 */

/** How far `synced_at` trails the database clock, as in the spec. */
export const SYNC_LAG_SECONDS = 120

/** How long one reading of the since watermark serves later pages (see `syncedAt`). */
export const SYNCED_AT_REUSE_MS = 1_000

/** How long a since page read ahead waits for its request; how many may wait at once. */
const READ_AHEAD_MS = 5_000
const MAX_READS_AHEAD = 32

export interface SinceFeed {
  readonly syncedAt: Effect.Effect<Time.Instant>
  /**
   * When the newest watermark handed out was read (this process's monotonic ms): a replica
   * answers a page only once it has replayed what the primary had committed then.
   */
  readonly watermarkFloor: () => number
  /** A page of a since run, with what its statement (or a statement now) said of the reader. */
  readonly sincePage: (request: ListingStore.PageRequest) => Effect.Effect<Served>
}

export const make = (
  sql: SqlClient.SqlClient,
  scope: Scope.Scope,
  syncLagSeconds: number,
  statement: PageStatement,
  reads: PageReads,
  caches: Pick<StoreCaches.Switches, "syncedAt" | "sinceReadAhead">,
  /** Whether a read replica has replayed what the primary had committed at a moment (ReadReplicas). */
  caughtUp: (floor: number) => boolean = () => false
): SinceFeed => {
  /*
   * A watermark that was valid when read stays valid: any row a later page cannot see yet was
   * written after that read, or by a transaction that was already open (and counted) then. So
   * one reading serves every page for SYNCED_AT_REUSE_MS, which costs consumers at most that
   * much more overlap and saves a statement per page.
   */
  const readSyncedAt = readWatermark(sql, syncLagSeconds)
  type Reading = { readonly value: Time.Instant; readonly readAt: number; readonly doneAt: number }
  let lastSyncedAt: Reading | undefined
  let previousSyncedAt: Reading | undefined
  let servedFloor = -Infinity
  /*
   * With read replicas, the reading before the newest is handed out until a replica has replayed
   * what the primary had committed when the newest was read, so pages need not wait for the
   * sampler after each new reading; an older watermark stays valid (see above).
   */
  const serve = (reading: Reading) => {
    const served = caughtUp(reading.doneAt) || previousSyncedAt === undefined || !caughtUp(previousSyncedAt.doneAt)
      ? reading
      : previousSyncedAt
    servedFloor = Math.max(servedFloor, served.doneAt)
    return served.value
  }
  const syncedAt = Effect.suspend(() => {
    const readAt = performance.now()
    if (caches.syncedAt && lastSyncedAt !== undefined && readAt - lastSyncedAt.readAt < SYNCED_AT_REUSE_MS) {
      return Effect.succeed(serve(lastSyncedAt))
    }
    return Effect.map(readSyncedAt, (value) => {
      previousSyncedAt = lastSyncedAt
      lastSyncedAt = { value, readAt, doneAt: performance.now() }
      return serve(lastSyncedAt)
    })
  })

  /*
   * The next page is read a moment earlier than asked, with an access-delay bound no later than
   * the request's: it can miss a row written since, never show one the caller may not see, and a
   * row written after the run's synced_at reaches the consumer on its next run anyway (the spec's
   * overlap). Its anchor (the last row of the page just served) existed when it was read; rows
   * leave the directory as tombstones, so only a row deleted by hand in between would go unnoticed.
   */
  const readAhead = new Map<string, { readonly visibleBefore: number; readonly startedAt: number; readonly read: Deferred.Deferred<Read, unknown> }>()
  const readAheadKey = (request: PageStatementRequest, afterId: string) =>
    JSON.stringify([request.since, request.order, request.limit, request.filters, afterId])

  /** The reader's holds and reveals on rows read ahead, asked now. */
  const answersNow = (read: Read, request: ListingStore.PageRequest) =>
    Effect.gen(function*() {
      const ids = read.records.slice(0, request.limit).map((record) => record.id)
      if (ids.length === 0) return { running: new Map(), revealed: new Map() } satisfies ReaderAnswers
      const rows = yield* statement.readerColumnsOf(ids, request.reader, accountsAsked(request.reader))
      return readerAnswers(rows, layoutOf(false, 1))
    })

  const sincePage = (request: ListingStore.PageRequest) =>
    Effect.gen(function*() {
      const key = request.after === undefined ? undefined : readAheadKey(request, request.after.id)
      const ahead = key === undefined ? undefined : readAhead.get(key)
      if (key !== undefined) readAhead.delete(key)
      let read: Read | undefined
      if (ahead !== undefined && ahead.visibleBefore <= request.visibleBefore && performance.now() - ahead.startedAt < READ_AHEAD_MS) {
        const finished = yield* Effect.exit(Deferred.await(ahead.read))
        if (Exit.isSuccess(finished)) read = finished.value
      }
      read ??= yield* reads.fullPage(request, statement.pageConditions(request), false, accountsAsked(request.reader))
      const answers = read.answers ?? (yield* answersNow(read, request))
      const last = read.records[request.limit - 1]
      const now = performance.now()
      for (const [stale, entry] of readAhead) if (now - entry.startedAt >= READ_AHEAD_MS) readAhead.delete(stale)
      // Only a run that already follows a cursor is read ahead: a poller that reads one page
      // from its watermark and stops would make every read-ahead wasted work.
      const following = request.after !== undefined
      if (caches.sinceReadAhead && following && read.records.length > request.limit && last !== undefined && readAhead.size < MAX_READS_AHEAD) {
        const next: PageStatementRequest = { ...request, after: { order: "id", id: last.id }, reader: undefined }
        const nextRead = Deferred.makeUnsafe<Read, unknown>()
        readAhead.set(readAheadKey(next, last.id), { visibleBefore: next.visibleBefore, startedAt: now, read: nextRead })
        yield* reads.fullPage(next, statement.pageConditions(next), false, []).pipe(
          Effect.exit,
          Effect.flatMap((exit) => Deferred.done(nextRead, exit)),
          Effect.forkIn(scope)
        )
      }
      return { ...read, answers }
    }).pipe(Effect.orDie)

  return { syncedAt, sincePage, watermarkFloor: () => servedFloor }
}
