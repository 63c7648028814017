import { Effect, Fiber, type Scope } from "effect"
import type { SqlClient } from "effect/sql"
import type { Fragment } from "effect/sql/Statement"
import { type ColumnRow, FilterColumns } from "./FilterColumns.ts"
import type { Values } from "./ListingRows.ts"
import type { PageStatementRequest } from "./PageStatement.ts"
import { instant, int, intOrNull, opaqueIds, opaqueInstant, textOrNull } from "./Rows.ts"
import { readWatermark } from "./Watermark.ts"

/*
 * Pages found in the filter columns (FilterColumns.ts): what a page's statement tests when its
 * filters match few rows. The columns hold the directory as it stood at their watermark (no row
 * written before it was missed, as for the since feed, with no lag); a page's statement then tests
 * the rows the columns found and every row written since the watermark, so it is exact whatever
 * the columns trail. Loaded when a page first could use them, brought up to date at most once a
 * second while pages use them. docs/decisions/0516-filter-columns.md.
 */

export interface Options {
  /**
   * A page whose scan tests fewer rows than this is read by its statement alone: Postgres walks
   * as few rows of its index, and concurrent reads of it share the statement.
   */
  readonly sparseRows: number
  /** Whether a page waits for the columns to load instead of being read without them (tests). */
  readonly awaitLoad: boolean
}

export const DEFAULTS: Options = { sparseRows: 20_000, awaitLoad: false }

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

/** A page narrowed to the columns' candidates, and how to tell whether its statement answered it whole. */
export interface Narrowed {
  /** The page's rows are among these. */
  readonly condition: Fragment
  /** One more column of the page's statement: whether more rows were written since the watermark than it read. */
  readonly overflowColumn: Fragment
  /** The same, asked alone (a page with no rows carries no column). */
  readonly overflowNow: Effect.Effect<boolean>
  /**
   * Whether rows read (`limit + 1` at most, in order, each `[id, …, discovered_at]` at the
   * indexes given) are the page: the columns found every candidate before the last row.
   */
  readonly complete: (rows: ReadonlyArray<Values>, idAt: number, discoveredAt: number) => boolean
}

export interface ColumnPages {
  /**
   * For a page the columns can answer and whose filters match few rows, its candidates; else
   * undefined. `wanted`: candidates to find (`limit + 1`, more when a first try came up short).
   */
  readonly narrow: (request: PageStatementRequest, wanted: number) => Effect.Effect<Narrowed | undefined>
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
  linked: row[15] === true
})

/** Whether the columns can answer a page: not a since run, no search term, some filter. */
const answerable = (request: PageStatementRequest) =>
  request.since === undefined && request.filters.q === undefined && Object.keys(request.filters).length > 0 &&
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
  let refreshing = false
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
      const rows = yield* sql`SELECT ${sql.literal(COLUMN_SELECT)} FROM listings
        WHERE updated_at >= ${opaqueInstant(sql, from.watermark)} ORDER BY updated_at LIMIT ${RELOAD_ROWS + 1}`.values
      if (rows.length > RELOAD_ROWS) return yield* load
      held = { columns: from.columns.apply(rows.map(toColumnRow)), watermark: at, readAt: performance.now() }
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

  const ready: Effect.Effect<Held | undefined> = Effect.gen(function*() {
    if (held !== undefined) {
      if (!refreshing && performance.now() - held.readAt >= REFRESH_MS) {
        refreshing = true
        yield* Effect.forkIn(inBackground(refresh(held), () => (refreshing = false)), scope)
      }
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

  const narrow = (request: PageStatementRequest, wanted: number): Effect.Effect<Narrowed | undefined> =>
    !enabled || !answerable(request) ? Effect.succeed(undefined) : Effect.map(ready, (now) => {
      if (now === undefined) return undefined
      const { columns } = now
      const scan = columns.scan(request.order, request.after, wanted, columns.test(request.filters, request.now, request.visibleBefore))
      if (scan.examined < options.sparseRows) return undefined
      const since = opaqueInstant(sql, now.watermark)
      const recent = sql`SELECT id FROM listings WHERE updated_at >= ${since} ORDER BY updated_at LIMIT ${RECENT_ROWS + 1}`
      const overflow = sql`(SELECT count(*) FROM (${recent}) AS recent) > ${RECENT_ROWS}`
      const last = scan.ids.at(-1)
      return {
        condition: sql`id = ANY(${opaqueIds(sql, scan.ids)} || ARRAY(${recent}))`,
        overflowColumn: sql`, ${overflow} AS recent_overflow`,
        overflowNow: sql<{ overflow: boolean }>`SELECT ${overflow} AS overflow`.pipe(
          Effect.map((rows) => rows[0]?.overflow === true),
          Effect.orDie
        ),
        complete: (rows, idAt, discoveredAt) => {
          if (scan.exhausted || last === undefined) return true
          const final = rows[request.limit]
          if (final === undefined) return false
          if (request.order === "id") return (final[idAt] as string) <= last
          const lastAt = scan.lastDiscoveredAt!
          const finalAt = instant(final[discoveredAt])
          return finalAt > lastAt || (finalAt === lastAt && (final[idAt] as string) <= last)
        }
      }
    })

  return {
    narrow,
    floor: (request) => (enabled && held !== undefined && answerable(request) ? held.readAt : -Infinity)
  }
}
