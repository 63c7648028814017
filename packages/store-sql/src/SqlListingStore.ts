import { type Ids, ListingStore, Spans } from "@dropshelf/core"
import { Effect, Layer, Option, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as ColumnPages from "./ColumnPages.ts"
import * as CopyLoader from "./CopyLoader.ts"
import * as ListingCache from "./ListingCache.ts"
import * as PageStatement from "./PageStatement.ts"
import { accountsAsked, answersFor, COLUMNS, layoutOf, LISTING_COLUMNS, readerAnswers, toRecord } from "./ListingRows.ts"
import * as ListingWrites from "./ListingWrites.ts"
import * as PageReads from "./PageReads.ts"
import { opaqueIds, toDate } from "./Rows.ts"
import * as SharedReads from "./SharedReads.ts"
import * as SinceFeed from "./SinceFeed.ts"
import * as ReadReplicas from "./ReadReplicas.ts"
import * as StoreCaches from "./StoreCaches.ts"

/*
 * Listings on Postgres, composed of: PageStatement (a page request as SQL), ListingRows (columns
 * and row decoding), PageReads (the row cache and shared page statements), SinceFeed (the
 * watermark and the read-ahead of since runs) and ListingWrites (upsert, delist, stamps). What
 * stays here: single-row look-ups, the category and source checks, and which path a page takes.
 */

export interface Options {
  /** How far `synced_at` trails the database clock; the spec's 120 s unless a test says otherwise. */
  readonly syncLagSeconds: number
  /** Decoded rows kept between pages (ListingCache); 0 keeps none. */
  readonly cacheCapacity?: number | undefined
  /** When pages use the filter columns (ColumnPages); its defaults unless a test says otherwise. */
  readonly filterColumns?: ColumnPages.Options | undefined
}

/** The reads of the store on one server, the primary or a replica; rows decoded once for all of them (`cache`). */
function readsOn(
  sql: SqlClient.SqlClient,
  scope: Scope.Scope,
  cache: ListingCache.ListingCache,
  caches: StoreCaches.Switches,
  options: Options,
  columns: ColumnPages.ColumnPages,
  caughtUp?: (floor: number) => boolean
) {
  const statement = PageStatement.make(sql)
  const reads = PageReads.make(sql, scope, cache, statement, caches.sharedReads, columns)
  const since = SinceFeed.make(sql, scope, options.syncLagSeconds, statement, reads, caches, caughtUp)

  const findOne = (id: Ids.ListingId) =>
    sql`SELECT ${sql.literal(COLUMNS)} FROM listings WHERE id = ${id}`.values.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : cache.intern(toRecord(rows[0])))),
      Effect.orDie
    )

  /** Look-ups of one id share statements as pages do: a busy listing, a cursor many follow. */
  const sharedFinds = SharedReads.make(scope, (batch: ReadonlyArray<Ids.ListingId>) =>
    Effect.map(findOne(batch[0]!), (found) => batch.map(() => found)), caches.sharedReads)

  const find = (id: Ids.ListingId) => SharedReads.unlessInTransaction(sql, sharedFinds.read(id, id), findOne(id))

  /**
   * Single reads: the rows, their running holds and the readers' reveals in one statement on the
   * primary key, joined as a page's rows are (PageStatement.joinReader) but with none of a page's
   * conditions, order or cursor.
   */
  const findWithReaders = (ids: ReadonlyArray<Ids.ListingId>, at: number, reveals: PageStatement.RevealsAsked) =>
    statement.joinReader(
      sql`SELECT ${sql.literal(COLUMNS)} FROM listings WHERE id = ANY(${opaqueIds(sql, [...new Set(ids)])})`,
      at,
      reveals,
      undefined
    ).pipe(
      Effect.map((rows) => ({
        listings: new Map(rows.map((row) => [row[0] as string, cache.intern(toRecord(row))])),
        answers: readerAnswers(rows, layoutOf(false, LISTING_COLUMNS.length))
      })),
      Effect.orDie
    )

  type ReaderFindRequest = { readonly id: Ids.ListingId; readonly reader: ListingStore.PageReader }
  /** Each reader's own listing, once: whether another reader of the batch revealed it is not asked. */
  const revealsAskedIn = (batch: ReadonlyArray<ReaderFindRequest>): PageStatement.RevealsAsked => {
    const pairs = new Map<string, { readonly accountId: string; readonly listingId: string }>()
    for (const { id, reader } of batch) {
      if (reader.revealsOf !== undefined) pairs.set(`${reader.revealsOf} ${id}`, { accountId: reader.revealsOf, listingId: id })
    }
    return { _tag: "OnOwnListing", pairs: [...pairs.values()] }
  }
  const readBatch = (batch: ReadonlyArray<ReaderFindRequest>) =>
    Effect.map(
      findWithReaders(batch.map(({ id }) => id), SharedReads.latest(batch, ({ reader }) => reader.at).reader.at, revealsAskedIn(batch)),
      (found) => batch.map(() => found)
    )

  /*
   * Single reads of any listings that arrive while one is being read share the next statement
   * (SharedReads, at the latest clock of the batch): under load, one round trip answers the
   * reads of many connections. One batch at a time: a statement's round trip costs both
   * processes far more than another id in it, so spreading reads over several concurrent
   * statements only made more of them (docs/decisions/0509-read-paths.md).
   */
  const sharedReaderFinds = SharedReads.makeOutsideTransactions(sql, scope, readBatch, caches.sharedReads)

  const findForReader = (id: Ids.ListingId, reader: ListingStore.PageReader): Effect.Effect<ListingStore.ReaderFind | undefined> =>
    sharedReaderFinds("single reads", { id, reader }).pipe(Effect.map(({ answers, listings }) => {
      const listing = listings.get(id)
      if (listing === undefined) return undefined
      return {
        listing,
        running: answers.running.get(id),
        revealed: reader.revealsOf !== undefined && (answers.revealed.get(reader.revealsOf)?.has(id) ?? false)
      }
    }))

  const page = (request: ListingStore.PageRequest): Effect.Effect<ListingStore.PageResult> =>
    Effect.flatMap(request.since !== undefined ? since.sincePage(request) : reads.sharedPage(request), (read) => {
      const result = (anchorExists: boolean): ListingStore.PageResult => ({
        rows: read.records.slice(0, request.limit),
        hasMore: read.records.length > request.limit,
        ...answersFor(request.reader, read.answers),
        anchorExists
      })
      const after = request.after
      if (after === undefined) return Effect.succeed(result(true))
      if (read.anchorExists !== undefined) return Effect.succeed(result(read.anchorExists))
      // A page with no rows carries no answer for its anchor: then it is looked up.
      return Effect.map(find(after.id), (found) => result(found !== undefined))
    }).pipe(Spans.span("SqlListingStore.page"))

  /**
   * One REPEATABLE READ, READ ONLY transaction: every FETCH reads the state its first statement
   * saw, whatever commits meanwhile. A server-side cursor hands rows over a chunk at a time, so
   * neither the server nor this process holds the whole result, and the next chunk is fetched
   * only once `emit` has taken the last. The reader's holds and reveals are read per chunk in the
   * same transaction (on PGlite, the one connection it holds).
   */
  const snapshot = (request: ListingStore.SnapshotRequest, emit: (chunk: ListingStore.SnapshotChunk) => Effect.Effect<void>) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`
      yield* sql`DECLARE dropshelf_snapshot NO SCROLL CURSOR FOR
        SELECT ${sql.literal(COLUMNS)} FROM listings
        WHERE status = 'active' AND discovered_at <= ${toDate(request.visibleBefore)}`
      const fetch = sql.unsafe(`FETCH FORWARD ${Math.max(1, Math.trunc(request.chunkSize))} FROM dropshelf_snapshot`).values
      const accounts = accountsAsked(request.reader)
      while (true) {
        const rows = yield* fetch
        if (rows.length === 0) break
        const records = rows.map(toRecord)
        const answers = readerAnswers(yield* statement.readerColumnsOf(records.map((record) => record.id), request.reader, accounts), layoutOf(false, 1))
        yield* emit({ rows: records, ...answersFor(request.reader, answers) })
      }
    })).pipe(Effect.orDie, Spans.span("SqlListingStore.snapshot"))

  /** One index probe per code (listings_category, listings_source), not a DISTINCT over every matching row. */
  const unknownCodesNow = (field: ListingStore.CodeField, codes: ReadonlyArray<string>) => {
    const column = sql.literal(CODE_COLUMNS[field])
    return codes.length === 0 ? Effect.succeed([]) : sql<{ code: string }>`SELECT code FROM unnest(${[...codes]}::text[]) AS code
      WHERE NOT EXISTS (SELECT 1 FROM listings WHERE ${column} = code AND status = 'active')`.pipe(
      Effect.map((rows) => {
        const unknown = new Set(rows.map((row) => row.code))
        return codes.filter((code) => unknown.has(code))
      }),
      Effect.orDie
    )
  }

  /** A filtered page asks it of the codes its rows do not carry; concurrent checks of the same codes share a statement, as page reads do. */
  const sharedCodeChecks = SharedReads.make(scope, (batch: ReadonlyArray<readonly [ListingStore.CodeField, ReadonlyArray<string>]>) =>
    Effect.map(unknownCodesNow(batch[0]![0], batch[0]![1]), (unknown) => batch.map(() => unknown)), caches.sharedReads)
  const unknownCodes = (field: ListingStore.CodeField, codes: ReadonlyArray<string>) =>
    codes.length === 0
      ? Effect.succeed<ReadonlyArray<string>>([])
      : SharedReads.unlessInTransaction(
        sql,
        sharedCodeChecks.read(JSON.stringify([field, codes]), [field, codes] as const),
        unknownCodesNow(field, codes)
      )

  /**
   * A skip scan of the same index: each step is one probe for the next code after the last,
   * so listing the codes costs one probe per code listed, however many rows carry each.
   */
  const knownCodes = (field: ListingStore.CodeField, from: string, limit: number) => {
    const column = sql.literal(CODE_COLUMNS[field])
    return sql<{ code: string }>`WITH RECURSIVE known(code) AS (
        (SELECT ${column} FROM listings WHERE status = 'active' AND ${column} >= ${from} ORDER BY ${column} LIMIT 1)
        UNION ALL
        SELECT (SELECT ${column} FROM listings WHERE status = 'active' AND ${column} > known.code ORDER BY ${column} LIMIT 1)
        FROM known WHERE known.code IS NOT NULL
      )
      SELECT code FROM known WHERE code IS NOT NULL LIMIT ${limit}`.pipe(
      Effect.map((rows) => rows.map((row) => row.code)),
      Effect.orDie
    )
  }

  return { since, page, snapshot, find, findForReader, unknownCodes, knownCodes }
}

type Reads = ReturnType<typeof readsOn>

export const makeWith = (options: Options) => Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const scope = yield* Scope.Scope
  const caches = yield* StoreCaches.StoreCaches
  const replicas = yield* ReadReplicas.ReadReplicas
  const cache = ListingCache.make(caches.listingRecords ? options.cacheCapacity : 0)
  // Fed from the primary; a replica answers a page found in them once it has replayed that far.
  const columns = ColumnPages.make(sql, scope, caches.filterColumns, options.filterColumns)
  const primary = readsOn(sql, scope, cache, caches, options, columns, replicas.caughtUp)
  const onReplicas = replicas.replicas.map((replica) =>
    readsOn(replica.sql, scope, cache, caches, options, ColumnPages.onReplica(columns, (floor) => replicas.replayed(replica, floor)))
  )
  const writes = ListingWrites.make(sql)
  // On server PostgreSQL imports go through COPY (CopyLoader); PGlite keeps the one-statement upsert.
  const copy = yield* Effect.serviceOption(CopyLoader.CopyLoader)
  const upsert = Option.isSome(copy) ? ListingWrites.upsertWith(copy.value.load) : writes.upsert

  /**
   * A read on a replica that has replayed what the primary had committed when the watermark
   * handed out was read and when `accountId` last wrote here; else, inside a transaction, or
   * should the replica fail it, on the primary (ReadReplicas.ts). `retry` false: a read that
   * has already handed something on (a snapshot's chunk) is not read again.
   */
  const routed = <A>(accountId: string | undefined, read: (on: Reads) => Effect.Effect<A>, retry?: () => boolean, floor = -Infinity) =>
    onReplicas.length === 0 ? read(primary) : SharedReads.unlessInTransaction(
      sql,
      ReadReplicas.route(
        replicas,
        Math.max(primary.since.watermarkFloor(), replicas.floorOf(accountId), floor),
        (replica) => read(replica === undefined ? primary : onReplicas[replica.index]!),
        retry
      ),
      read(primary)
    )

  const snapshot = (request: ListingStore.SnapshotRequest, emit: (chunk: ListingStore.SnapshotChunk) => Effect.Effect<void>) =>
    Effect.suspend(() => {
      let emitted = false
      return routed(request.reader.accountId, (on) => on.snapshot(request, (chunk) => {
        emitted = true
        return emit(chunk)
      }), () => !emitted)
    })

  return ListingStore.ListingStore.of({
    page: (request) => routed(request.reader.accountId, (on) => on.page(request), undefined, columns.floor(request)),
    snapshot,
    // Looked up by writes (a reveal, a hold) and operators, as `latest` reads are: on the primary.
    find: primary.find,
    findForReader: (id, reader) => reader.latest === true ? primary.findForReader(id, reader) : routed(reader.accountId, (on) => on.findForReader(id, reader)),
    unknownCodes: (field, codes) => routed(undefined, (on) => on.unknownCodes(field, codes)),
    knownCodes: (field, from, limit) => routed(undefined, (on) => on.knownCodes(field, from, limit)),
    syncedAt: primary.since.syncedAt,
    ...writes,
    upsert
  })
})

const CODE_COLUMNS: { readonly [F in ListingStore.CodeField]: string } = { category: "category", source: "source" }

export const make = makeWith({ syncLagSeconds: SinceFeed.SYNC_LAG_SECONDS })

export const layer = Layer.effect(ListingStore.ListingStore, make)

export const layerWith = (options: Options) => Layer.effect(ListingStore.ListingStore, makeWith(options))
