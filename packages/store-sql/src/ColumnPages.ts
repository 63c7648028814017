import { type Listing, ListingFilter } from "@dropshelf/core"
import { Effect, Fiber, type Scope } from "effect"
import type { SqlClient } from "effect/sql"
import type { Fragment } from "effect/sql/Statement"
import { type ColumnRow, FilterColumns } from "./FilterColumns.ts"
import type { Values } from "./ListingRows.ts"
import { containsPattern, type PageStatementRequest } from "./PageStatement.ts"
import { int, intOrNull, opaqueIds, opaqueInstant, storable, textOrNull } from "./Rows.ts"
import { readWatermark } from "./Watermark.ts"

/*
 * Pages found in the filter columns (FilterColumns.ts): what a page's statement reads when its
 * filters match few rows. The columns hold the directory as it stood at their watermark (no row
 * written before it was missed, as for the since feed, with no lag); a page's statement then
 * reads the rows the columns found and every row written since the watermark, and the core's
 * filter keeps the page's rows (PageReads), so it is exact whatever the columns trail. Loaded
 * when a page first could use them, brought up to date at most once a second while pages use
 * them. A search term's rows are read when a page first asks for it and then kept up to date
 * with the rest. docs/decisions/0516-filter-columns.md.
 */

export interface Options {
  /**
   * A page (without `q`) whose scan passes over fewer rows than this is read by its statement
   * alone: Postgres walks as few rows of its index, and concurrent reads of it share the statement.
   */
  readonly sparseRows: number
  /** Whether a page waits for the columns (and its search terms) to load instead of being read without them (tests). */
  readonly awaitLoad: boolean
  /** Search terms whose rows are held, those used last: a bit a listing each. */
  readonly terms: number
}

export const DEFAULTS: Options = { sparseRows: 2_000, awaitLoad: false, terms: 64 }

/** How often the columns are brought up to date while pages use them. */
const REFRESH_MS = 1_000
/** Rows written since the watermark that a page's statement reads besides the candidates; past it the page is read alone. */
const RECENT_ROWS = 2_000
/** A refresh bringing more rows than this loads the columns anew (a large import): merging them would hold the event loop. */
const RELOAD_ROWS = 50_000
/** How long after a failed load the columns are tried again. */
const RETRY_MS = 30_000
/** Rows a loading statement reads: few enough that their decoded rows die young. */
const LOAD_CHUNK = 5_000

/** A page narrowed to the columns' candidates, and how to tell whether they made it whole. */
export interface Narrowed {
  /** The rows the columns found, in the page's order: among them, every row of the page not written since the watermark. */
  readonly candidates: ReadonlyArray<string>
  /** The page's rows are among these. */
  readonly condition: Fragment
  /** One more column of the page's statement: whether more rows were written since the watermark than it read. */
  readonly overflowColumn: Fragment
  /** The same, asked alone (a page with no rows carries no column). */
  readonly overflowNow: Effect.Effect<boolean>
  /**
   * Whether the page's rows (`limit + 1` at most, in order) are the whole page: the columns
   * found every candidate before the last row.
   */
  readonly complete: (rows: ReadonlyArray<Listing.ListingRecord>) => boolean
}

export interface ColumnPages {
  /**
   * For a page the columns can answer whose filters match few rows, or that searches for a term,
   * its candidates; else undefined. `wanted`: candidates to find (`limit + 1`, more when a first try came up short).
   * `replayed`, on a read replica: whether it has replayed what the primary had at a time.
   */
  readonly narrow: (
    request: PageStatementRequest,
    wanted: number,
    replayed?: (floor: number) => boolean
  ) => Effect.Effect<Narrowed | undefined>
  /**
   * When the columns' rows were read (this process's monotonic ms), for a page that may use
   * them: a read replica answers it only once it has replayed that far (ReadReplicas).
   */
  readonly floor: (request: PageStatementRequest) => number
}

// Instants as epoch milliseconds: a number each, where a timestamp would decode into a Date.
export const COLUMN_SELECT = `id, status = 'active', extract(epoch FROM discovered_at)::float8 * 1000,
  extract(epoch FROM availability_checked_at)::float8 * 1000, tld, category, source, spam,
  tier = 'open', published_value_cents, referring_domains, directory_score, age_years, citability_score,
  featured_rank IS NOT NULL, linked`

/** A search term's rows, up to a LIMIT: its `LIKE` pattern follows. */
export const TERM_SELECT = `SELECT id FROM listings WHERE status = 'active' AND search_text LIKE`

/** Past this many rows of `size`, a term is held as every row: it keeps too many to be worth testing. */
export const mostTermRows = (size: number) => Math.ceil(size / 4)

/** What a refresh reads: the columns and the search text, which the held terms are tested on. */
const REFRESH_SELECT = `${COLUMN_SELECT}, search_text`

export const toColumnRow = (row: Values): ColumnRow => ({
  id: row[0] as string,
  active: row[1] === true,
  discoveredAt: Number(row[2]),
  checkedAt: row[3] === null ? null : Number(row[3]),
  tld: row[4] as string,
  category: textOrNull(row[5]),
  source: textOrNull(row[6]),
  spam: textOrNull(row[7]),
  openTier: row[8] === true,
  publishedCents: int(row[9]),
  referringDomains: intOrNull(row[10]),
  directoryScore: intOrNull(row[11]),
  ageYears: intOrNull(row[12]),
  citabilityScore: intOrNull(row[13]),
  featured: row[14] === true,
  linked: row[15] === true,
  searchText: row.length > 16 ? (row[16] as string) : undefined
})

/** Whether the columns can answer a page: not a since run, some filter. */
const answerable = (request: PageStatementRequest) =>
  request.since === undefined && Object.keys(request.filters).length > 0 &&
  (request.after === undefined || request.after.order === request.order)

interface Held {
  readonly columns: FilterColumns
  /** Every row written before this instant (database clock) is in the columns as it now stands. */
  readonly watermark: number
  /** When the rows were read, monotonic ms. */
  readonly readAt: number
}

export const make = (sql: SqlClient.SqlClient, scope: Scope.Scope, enabled: boolean, options: Options = DEFAULTS): ColumnPages => {
  let held: Held | undefined
  let loading: Effect.Effect<void> | undefined
  let working: Effect.Effect<void> | undefined
  /** Search terms pages asked for that are not held: read after the next refresh. */
  const pending = new Set<string>()
  let failedAt = -Infinity

  const watermark = readWatermark(sql, 0)

  const load = Effect.gen(function*() {
    const at = yield* watermark
    const [{ count }] = yield* sql<{ count: unknown }>`SELECT count(*) AS count FROM listings WHERE status = 'active'`
    const loader = FilterColumns.loader(int(count))
    const late: Array<ColumnRow> = []
    let after = ""
    for (;;) {
      const rows = yield* sql`SELECT ${sql.literal(COLUMN_SELECT)} FROM listings
        WHERE status = 'active' AND id > ${after} ORDER BY id LIMIT ${LOAD_CHUNK}`.values
      for (const row of rows) {
        const column = toColumnRow(row)
        if (!loader.add(column)) late.push(column)
      }
      if (rows.length < LOAD_CHUNK) break
      after = rows[rows.length - 1]![0] as string
    }
    held = { columns: loader.done().apply(late), watermark: at, readAt: performance.now() }
  })

  /** Rows written since the watermark: applied, or, when there are many, the columns load anew. */
  const refresh = (from: Held) =>
    Effect.gen(function*() {
      const at = yield* watermark
      const rows = yield* sql`SELECT ${sql.literal(REFRESH_SELECT)} FROM listings
        WHERE updated_at >= ${opaqueInstant(sql, from.watermark)} ORDER BY updated_at LIMIT ${RELOAD_ROWS + 1}`.values
      if (rows.length > RELOAD_ROWS) return yield* load
      held = { columns: from.columns.apply(rows.map(toColumnRow)), watermark: at, readAt: performance.now() }
    })

  /**
   * The rows holding each pending term, read after the columns' watermark, so that with the rows
   * written since they are every row holding it. A term on more than a quarter of the rows is held
   * as every row: its pages then find candidates by their other filters.
   */
  const readTerms = (from: Held) =>
    Effect.gen(function*() {
      const most = mostTermRows(from.columns.size)
      let read = false
      for (const term of pending) {
        pending.delete(term)
        if (from.columns.missingTerms([term]).length === 0) continue
        const rows = yield* sql`${sql.literal(TERM_SELECT)} ${containsPattern(term)} LIMIT ${most + 1}`.values
        from.columns.addTerm(term, rows.length > most ? "every" : rows.map((row) => row[0] as string), options.terms)
        read = true
      }
      // Read later than the rows: a replica answers pages tested on them once it has replayed as far.
      if (read) held = { ...from, readAt: performance.now() }
    })

  /** Runs `work` once at a time in the store's scope; a failure leaves the columns as they were. */
  const inBackground = (work: Effect.Effect<void, unknown>, done: () => void) =>
    work.pipe(
      Effect.catchCause((cause) =>
        Effect.sync(() => {
          failedAt = performance.now()
        }).pipe(Effect.andThen(Effect.logWarning("filter columns: not loaded; pages are read without them", cause)))
      ),
      Effect.ensuring(Effect.sync(done))
    )

  /** A refresh when due, then the terms pending: one at a time, so that each applies to the columns it read from. */
  const upkeep = Effect.gen(function*() {
    if (performance.now() - held!.readAt >= REFRESH_MS) yield* refresh(held!)
    if (pending.size > 0) yield* readTerms(held!)
  })

  /** Starts the upkeep unless it is under way; either way, what is under way, to wait for. */
  const keepUp: Effect.Effect<Effect.Effect<void>> = Effect.gen(function*() {
    if (working === undefined) {
      const fiber = yield* Effect.forkIn(inBackground(upkeep, () => (working = undefined)), scope)
      working = Fiber.join(fiber)
    }
    return working
  })

  const ready: Effect.Effect<Held | undefined> = Effect.gen(function*() {
    if (held !== undefined) {
      if (performance.now() - held.readAt >= REFRESH_MS) yield* keepUp
      return held
    }
    if (performance.now() - failedAt < RETRY_MS) return undefined
    if (loading === undefined) {
      const fiber = yield* Effect.forkIn(inBackground(load, () => (loading = undefined)), scope)
      loading = Fiber.join(fiber)
    }
    if (options.awaitLoad) yield* loading
    return held
  })

  /** The columns once they hold every term of `terms`; undefined while they are read. */
  const withTerms = (now: Held, terms: ReadonlyArray<string>) =>
    Effect.gen(function*(): Effect.fn.Return<Held | undefined> {
      for (;;) {
        const missing = now.columns.missingTerms(terms)
        if (missing.length === 0) return now
        // At most as many waiting as are held: each is a read of the whole directory.
        for (const term of missing) if (pending.size < options.terms) pending.add(term)
        const under = yield* keepUp
        if (!options.awaitLoad || performance.now() - failedAt < RETRY_MS) return undefined
        yield* under
        now = held!
      }
    })

  const narrow: ColumnPages["narrow"] = (request, wanted, replayed) =>
    Effect.gen(function*() {
      if (!enabled || !answerable(request)) return undefined
      const terms = request.filters.q === undefined ? [] : [...new Set(ListingFilter.searchTerms(request.filters.q))]
      // A term Postgres cannot hold makes the statement FALSE: answered at once.
      if (!terms.every(storable)) return undefined
      let now = yield* ready
      if (now !== undefined && terms.length > 0) now = yield* withTerms(now, terms)
      // Rows read since the page was routed to a replica that has not replayed them: its statement would miss them.
      if (now === undefined || (replayed !== undefined && !replayed(now.readAt))) return undefined
      const { columns } = now
      const scan = columns.scan(request.order, request.after, wanted, columns.test(request.filters, request.now, request.visibleBefore))
      // A page with a search term is always narrowed: its statement alone tests the text row by row.
      if (scan.examined < options.sparseRows && terms.length === 0) return undefined
      const since = opaqueInstant(sql, now.watermark)
      // Constants as literals: a parameter LIMIT is planned as unknown, and the plan kept for the
      // statement's text would then cost more than one made for the values, made again every page.
      const recent = sql`SELECT id FROM listings WHERE updated_at >= ${since} ORDER BY updated_at LIMIT ${sql.literal(String(RECENT_ROWS + 1))}`
      const overflow = sql`(SELECT count(*) FROM (${recent}) AS recent) > ${sql.literal(String(RECENT_ROWS))}`
      const last = scan.ids.at(-1)
      return {
        candidates: scan.ids,
        condition: sql`id = ANY(${opaqueIds(sql, scan.ids)} || ARRAY(${recent}))`,
        overflowColumn: sql`, ${overflow} AS recent_overflow`,
        overflowNow: sql<{ overflow: boolean }>`SELECT ${overflow} AS overflow`.pipe(
          Effect.map((rows) => rows[0]?.overflow === true),
          Effect.orDie
        ),
        complete: (rows) => {
          if (scan.exhausted || last === undefined) return true
          const final = rows[request.limit]
          if (final === undefined) return false
          if (request.order === "id") return final.id <= last
          const lastAt = scan.lastDiscoveredAt!
          return final.discoveredAt > lastAt || (final.discoveredAt === lastAt && final.id <= last)
        }
      }
    })

  return {
    narrow,
    floor: (request) => (enabled && held !== undefined && answerable(request) ? held.readAt : -Infinity)
  }
}

/** The columns for pages read on a replica: used only once it has replayed as far as they were read. */
export const onReplica = (columns: ColumnPages, replayed: (floor: number) => boolean): ColumnPages => ({
  ...columns,
  narrow: (request, wanted) => columns.narrow(request, wanted, replayed)
})
