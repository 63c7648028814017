import { type Listing, ListingFilter, type ListingStore } from "@dropshelf/core"
import { Effect, type Scope } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import type { Fragment } from "effect/sql/Statement"
import type * as ColumnPages from "./ColumnPages.ts"
import type * as ListingCache from "./ListingCache.ts"
import type { PageStatement, PageStatementRequest } from "./PageStatement.ts"
import {
  accountsAsked,
  anchorExistsIn,
  COLUMN,
  COLUMNS,
  layoutOf,
  LISTING_COLUMNS,
  type ReaderAnswers,
  readerAnswers,
  toRecord,
  type Values,
  VERSION_COLUMNS
} from "./ListingRows.ts"
import { instant, opaqueIds } from "./Rows.ts"
import * as SharedReads from "./SharedReads.ts"

/*
 * Reading a page's rows. In full, every column decoded (a since pull, read once); or through
 * the row cache (ListingCache): ids and versions first, then only the rows not cached at that
 * version. Pages other than since runs also share statements: concurrent reads of the same page
 * ride on one statement (SharedReads), each reader getting its own reveals back.
 */

/** The rows of a page (`limit + 1` at most) and what its statement said of readers and anchor. */
export interface Read {
  readonly records: Array<Listing.ListingRecord>
  /** Undefined when the page was read without a reader (read ahead). */
  readonly answers: ReaderAnswers | undefined
  /** Undefined without a cursor, or when no row came back to carry the answer. */
  readonly anchorExists: boolean | undefined
}

/** A page read with its reader: the statement answered for it. */
export interface Served extends Read {
  readonly answers: ReaderAnswers
}

export interface PageReads {
  /** The page decoded in full; `keep` puts its rows in the cache. */
  readonly fullPage: {
    (request: ListingStore.PageRequest, where: ReadonlyArray<Fragment>, keep: boolean, accounts: ReadonlyArray<string>): Effect.Effect<Served, SqlError.SqlError>
    (request: PageStatementRequest, where: ReadonlyArray<Fragment>, keep: boolean, accounts: ReadonlyArray<string>): Effect.Effect<Read, SqlError.SqlError>
  }
  /** The page through the cache, sharing its statement with concurrent reads of the same page. */
  readonly sharedPage: (request: ListingStore.PageRequest) => Effect.Effect<Served>
}

export const make = (
  sql: SqlClient.SqlClient,
  scope: Scope.Scope,
  cache: ListingCache.ListingCache,
  statement: PageStatement,
  sharing: boolean,
  columns: ColumnPages.ColumnPages
): PageReads => {
  const { anchorColumn, limitOf, orderOf, pageConditions, positionConditions, withReader } = statement

  /**
   * What full `rows` (each `selected` columns before the anchor's) say: records, kept in the
   * cache or not, and the reader's answers for the first `answered` rows.
   */
  const decoded = (request: PageStatementRequest, rows: ReadonlyArray<Values>, selected: number, keep: boolean, answered = request.limit) => {
    const anchored = request.after !== undefined
    const layout = layoutOf(anchored, selected)
    return {
      records: rows.map((row) => (keep ? cache.intern(toRecord(row)) : toRecord(row))),
      answers: request.reader === undefined ? undefined : readerAnswers(rows.slice(0, answered), layout),
      anchorExists: anchorExistsIn(anchored, rows, layout)
    }
  }

  // With a reader, withReader joins its answers: the overload for a PageRequest says so.
  const fullPage = ((
    request: PageStatementRequest,
    where: ReadonlyArray<Fragment>,
    keep: boolean,
    accounts: ReadonlyArray<string>
  ): Effect.Effect<Read, SqlError.SqlError> =>
    withReader(
      request,
      sql`SELECT ${sql.literal(COLUMNS)}${anchorColumn(request)} FROM listings WHERE ${sql.and(where)}
        ORDER BY ${orderOf(request)} LIMIT ${limitOf(request)}`,
      accounts
    ).pipe(
      Effect.map((rows) => decoded(request, rows, LISTING_COLUMNS.length, keep))
    )) as PageReads["fullPage"]

  /** A page's ids and versions, with `extra` columns after them (before the anchor's). */
  const versionsOf = (request: ListingStore.PageRequest, where: ReadonlyArray<Fragment>, extra: Fragment, accounts: ReadonlyArray<string>) =>
    withReader(
      request,
      sql`SELECT ${sql.literal(VERSION_COLUMNS.join(", "))}${extra}${anchorColumn(request)} FROM listings WHERE ${sql.and(where)}
        ORDER BY ${orderOf(request)} LIMIT ${limitOf(request)}`,
      accounts
    )

  /**
   * The rows of `versions` (each `selected` columns, then the anchor's and the reader's), from
   * the cache or else read, with the reader's answers for the first `answered`. A row written
   * between the two statements is not mixed in at its newer version (it might no longer match):
   * the page is then read again in full, as one statement of `where`.
   */
  const recordsOf = (
    request: ListingStore.PageRequest,
    versions: ReadonlyArray<Values>,
    selected: number,
    where: ReadonlyArray<Fragment>,
    accounts: ReadonlyArray<string>,
    answered = request.limit
  ) =>
    Effect.gen(function*(): Effect.fn.Return<Served, SqlError.SqlError> {
      const records = new Array<Listing.ListingRecord | undefined>(versions.length)
      const missing: Array<string> = []
      // Each version starts with VERSION_COLUMNS: [id, updated_at, …].
      versions.forEach((version, index) => {
        records[index] = cache.get(version[0] as string, instant(version[1]))
        if (records[index] === undefined) missing.push(version[0] as string)
      })
      const anchored = request.after !== undefined
      const layout = layoutOf(anchored, selected)
      const answers = readerAnswers(versions.slice(0, answered), layout)
      const anchorExists = anchorExistsIn(anchored, versions, layout)
      if (missing.length === 0) return { records: records as Array<Listing.ListingRecord>, answers, anchorExists }
      const fetched = yield* sql`SELECT ${sql.literal(COLUMNS)} FROM listings WHERE id = ANY(${opaqueIds(sql, missing)})`.values
      const byId = new Map(fetched.map((row) => [row[COLUMN.id] as string, toRecord(row)]))
      for (let index = 0; index < versions.length; index++) {
        if (records[index] !== undefined) continue
        const record = byId.get(versions[index]![0] as string)
        if (record === undefined || record.updatedAt !== instant(versions[index]![1])) {
          return yield* fullPage(request, where, true, accounts)
        }
        records[index] = cache.intern(record)
      }
      return { records: records as Array<Listing.ListingRecord>, answers, anchorExists }
    })

  /**
   * Whether most of a page's first `rows` candidates have no record cached: the statement then
   * reads them in full, where ids and versions first would take a second statement for the rows.
   */
  const mostlyUncached = (candidates: ReadonlyArray<string>, rows: number) => {
    const first = Math.min(rows, candidates.length)
    let uncached = 0
    for (let index = 0; index < first; index++) if (!cache.has(candidates[index]!)) uncached++
    return uncached * 2 > first
  }

  /**
   * A page found in the filter columns (ColumnPages): its statement reads the candidates and the
   * rows written since, at the page's position and visible to its reader, and the core's own
   * filter then keeps the page's rows. Its text is the same for every filter set and value, so
   * a connection plans it once where a statement of the page's filters is planned at every page
   * of a population of callers. Undefined when more rows were written since than it reads.
   */
  const narrowedPage = (request: ListingStore.PageRequest, narrowed: ColumnPages.Narrowed, accounts: ReadonlyArray<string>) =>
    Effect.gen(function*(): Effect.fn.Return<Served | undefined, SqlError.SqlError> {
      // Read in full, the rows need no second statement; as ids and versions, cached rows are not decoded.
      const full = mostlyUncached(narrowed.candidates, request.limit + 1)
      const selected = full ? LISTING_COLUMNS.length : VERSION_COLUMNS.length
      const rows = yield* withReader(
        request,
        sql`SELECT ${sql.literal(full ? COLUMNS : VERSION_COLUMNS.join(", "))}${narrowed.overflowColumn}${anchorColumn(request)}
          FROM listings WHERE ${sql.and([sql`status = 'active'`, ...positionConditions(request, true), narrowed.condition])}
          ORDER BY ${orderOf(request)}`,
        accounts
      )
      const overflow = rows[0] === undefined ? yield* narrowed.overflowNow : rows[0][selected] === true
      if (overflow) return undefined
      const read = full
        ? decoded(request, rows, selected + 1, true, rows.length) as Served
        : yield* recordsOf(request, rows, selected + 1, pageConditions(request), accounts, rows.length)
      const matching = read.records.filter((record) => ListingFilter.matchesFilters(record, request.filters, request.now))
      return { ...read, records: matching.slice(0, request.limit + 1) }
    })

  /**
   * A page whose filters match few rows is found in the filter columns; should their candidates
   * not make the whole page (gone since), the columns are asked for more, then the page's
   * statement runs alone.
   */
  const cachedPage = (request: ListingStore.PageRequest, accounts: ReadonlyArray<string>) =>
    Effect.gen(function*(): Effect.fn.Return<Served, SqlError.SqlError> {
      let wanted = request.limit + 1
      for (let attempt = 0; attempt < 3; attempt++) {
        const narrowed = yield* columns.narrow(request, wanted)
        if (narrowed === undefined) break
        const read = yield* narrowedPage(request, narrowed, accounts)
        if (read === undefined) break
        if (narrowed.complete(read.records)) return read
        wanted *= 4
      }
      const where = pageConditions(request)
      return yield* recordsOf(request, yield* versionsOf(request, where, sql.literal(""), accounts), VERSION_COLUMNS.length, where, accounts)
    })

  /*
   * Reads of the same page (same filters, position, size, access delay) that arrive while one is
   * being read share the next statement. It runs at the latest clock of its batch; every request
   * in it started before, so each answer is still the directory at an instant inside its own
   * request.
   */
  const sharedPageKey = (request: ListingStore.PageRequest) =>
    JSON.stringify([
      request.order,
      request.after,
      request.limit,
      request.filters,
      request.now - request.visibleBefore,
      request.reader.at - request.now
    ])

  const pagesFor = (batch: ReadonlyArray<ListingStore.PageRequest>) =>
    Effect.gen(function*() {
      const accounts = [...new Set(batch.flatMap((request) => accountsAsked(request.reader)))]
      const read = yield* cachedPage(SharedReads.latest(batch, (request) => request.now), accounts)
      return batch.map(() => read)
    }).pipe(Effect.orDie)
  const sharedPages = SharedReads.makeOutsideTransactions(sql, scope, pagesFor, sharing)

  const sharedPage = (request: ListingStore.PageRequest) => sharedPages(sharedPageKey(request), request)

  return { fullPage, sharedPage }
}
