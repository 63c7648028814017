import { Bands, type Hold, type Ids, type Listing, ListingFilter, ListingStore, ListQuery, Masking, Time } from "@dropshelf/core"
import { Deferred, Effect, Exit, Layer, Scope } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import type { Fragment } from "effect/sql/Statement"
import * as ListingCache from "./ListingCache.ts"
import * as SharedReads from "./SharedReads.ts"
import { HOLD_COLUMN_NAMES, runningAt, toHoldAt } from "./SqlHoldStore.ts"
import { instant, instantOrNull, int, intOrNull, json, storable, textOrNull, toDate } from "./Rows.ts"

/*
 * Listings on Postgres. Every filter of `ListingFilter.matchesFilters` is one SQL condition
 * over plain columns; the derived ones (tld, published value, citability score, search text)
 * are computed at write time by the core's own functions, so the two cannot drift.
 */

/** How far `synced_at` trails the database clock, as in the spec. */
export const SYNC_LAG_SECONDS = 120

/** How long one reading of the since watermark serves later pages (see `syncedAt`). */
export const SYNCED_AT_REUSE_MS = 1_000

/** How long a since page read ahead waits for its request; how many may wait at once. */
const READ_AHEAD_MS = 5_000
const MAX_READS_AHEAD = 32

/** Rows per statement in `backfillMasks`. */
const BACKFILL_CHUNK = 1000

/**
 * The columns of a listing, in the order every read selects them. Listing rows are read with
 * `.values`, as arrays, and taken apart by position (`COLUMN`): the driver's building of one
 * object per row, keyed by column name, was ~40 % of the work of reading a page (callgrind,
 * a 250-row since page through the store: 12.5 → 7.6 M instructions).
 */
const LISTING_COLUMNS = [
  "id",
  "domain",
  "tier",
  "status",
  "discovered_at",
  "updated_at",
  "estimated_value_cents",
  "category",
  "age_years",
  "backlinks",
  "referring_domains",
  "domain_authority",
  "snapshots",
  "directory_score",
  "spam",
  "linked_by",
  "tags",
  "blurb",
  "source",
  "agent_citability",
  "featured_rank",
  "availability_checked_at",
  "mask_hint",
  "word_count"
] as const
const COLUMNS = LISTING_COLUMNS.join(", ")
const COLUMN = Object.fromEntries(LISTING_COLUMNS.map((name, index) => [name, index])) as {
  readonly [Name in typeof LISTING_COLUMNS[number]]: number
}

/** What a page's first statement reads of each row: enough to find the row in the cache. */
const VERSION_COLUMNS = ["id", "updated_at", "discovered_at"] as const

/** The running hold a page statement joins, in `toHoldAt`'s order, named apart from the listing's columns. */
const JOINED_HOLD_COLUMNS = HOLD_COLUMN_NAMES.map((name) => `h.${name} AS h_${name}`).join(", ")

type Row = Record<string, unknown>
/** A row read with `.values`: its columns in the order of the statement's select list. */
type Values = ReadonlyArray<unknown>

/** A listing from a row whose first columns are `COLUMNS`. */
export const toRecord = (row: Values): Listing.ListingRecord => ({
  id: row[COLUMN.id] as Ids.ListingId,
  domain: row[COLUMN.domain] as string,
  tier: row[COLUMN.tier] as Listing.Tier,
  status: row[COLUMN.status] as Listing.ListingStatus,
  discoveredAt: instant(row[COLUMN.discovered_at]),
  updatedAt: instant(row[COLUMN.updated_at]),
  estimatedValueCents: intOrNull(row[COLUMN.estimated_value_cents]),
  category: textOrNull(row[COLUMN.category]),
  ageYears: intOrNull(row[COLUMN.age_years]),
  backlinks: intOrNull(row[COLUMN.backlinks]),
  referringDomains: intOrNull(row[COLUMN.referring_domains]),
  domainAuthority: intOrNull(row[COLUMN.domain_authority]),
  snapshots: intOrNull(row[COLUMN.snapshots]),
  directoryScore: intOrNull(row[COLUMN.directory_score]),
  spam: textOrNull(row[COLUMN.spam]) as Listing.Spam | null,
  linkedBy: json(row[COLUMN.linked_by]) as ReadonlyArray<string>,
  tags: json(row[COLUMN.tags]) as ReadonlyArray<string>,
  blurb: textOrNull(row[COLUMN.blurb]),
  source: textOrNull(row[COLUMN.source]),
  agentCitability: (json(row[COLUMN.agent_citability]) ?? null) as Listing.AgentCitability | null,
  featuredRank: intOrNull(row[COLUMN.featured_rank]),
  availabilityCheckedAt: instantOrNull(row[COLUMN.availability_checked_at]),
  maskHint: textOrNull(row[COLUMN.mask_hint]),
  wordCount: int(row[COLUMN.word_count])
})

/*
 * The batch upsert sends one Postgres array literal per column (27 text parameters whatever the
 * batch size) and expands them with a multi-argument `unnest`. Each literal is bound untyped and
 * cast to text[] by the statement, so both drivers take it alike, an all-null column included;
 * the typed casts happen per element in the SELECT. Measured against the earlier single
 * `jsonb_to_recordset` document in docs/performance.md.
 */

/** One element of an array literal: NULL, or the text double-quoted with `\` and `"` escaped. */
const element = (value: string | null): string => {
  if (value === null) return "NULL"
  return value.includes("\\") || value.includes("\"") ? `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"` : `"${value}"`
}

const numberText = (value: number | null): string | null => (value === null ? null : String(value))

type Column = readonly [name: string, type: string, text: (input: ListingStore.ListingInput) => string | null]

/** The upserted columns in statement order, each with how an input becomes its text (or null). */
const UPSERT_COLUMNS: ReadonlyArray<Column> = [
  ["id", "text", (i) => i.id],
  ["domain", "text", (i) => i.domain],
  ["tier", "text", (i) => i.tier],
  ["status", "text", (i) => i.status],
  ["discovered_at", "timestamptz", (i) => Time.toIso(i.discoveredAt)],
  ["estimated_value_cents", "bigint", (i) => numberText(i.estimatedValueCents)],
  ["published_value_cents", "bigint", (i) => String(i.estimatedValueCents ?? Bands.REFERENCE_VALUE_CENTS)],
  ["category", "text", (i) => i.category],
  ["age_years", "integer", (i) => numberText(i.ageYears)],
  ["backlinks", "bigint", (i) => numberText(i.backlinks)],
  ["referring_domains", "bigint", (i) => numberText(i.referringDomains)],
  ["domain_authority", "integer", (i) => numberText(i.domainAuthority)],
  ["snapshots", "bigint", (i) => numberText(i.snapshots)],
  ["directory_score", "integer", (i) => numberText(i.directoryScore)],
  ["spam", "text", (i) => i.spam],
  ["linked_by", "jsonb", (i) => JSON.stringify(i.linkedBy)],
  ["tags", "jsonb", (i) => JSON.stringify(i.tags)],
  ["blurb", "text", (i) => i.blurb],
  ["source", "text", (i) => i.source],
  ["agent_citability", "jsonb", (i) => (i.agentCitability === null ? null : JSON.stringify(i.agentCitability))],
  ["citability_score", "integer", (i) => numberText(i.agentCitability?.score ?? null)],
  ["featured_rank", "integer", (i) => numberText(i.featuredRank)],
  ["availability_checked_at", "timestamptz", (i) =>
    i.availabilityCheckedAt === null ? null : Time.toIso(i.availabilityCheckedAt)],
  ["mask_hint", "text", (i) => i.maskHint],
  ["word_count", "integer", (i) => String(i.wordCount)],
  ["tld", "text", (i) => Masking.tldOf(i.domain)],
  ["search_text", "text", (i) => ListingFilter.searchText(i)]
]

const UPSERT_NAMES = UPSERT_COLUMNS.map(([name]) => name).join(", ")
const UPSERT_SELECT = UPSERT_COLUMNS.map(([name, type]) => (type === "text" ? `u.${name}` : `u.${name}::${type}`))
  .join(", ")
const UPSERT_SET = UPSERT_COLUMNS.filter(([name]) => name !== "id" && name !== "discovered_at")
  .map(([name]) => `${name} = EXCLUDED.${name}`)
  .join(", ")

/** The batch as one array literal per column, in `UPSERT_COLUMNS` order. */
export const upsertArrays = (batch: ReadonlyArray<ListingStore.ListingInput>): Array<string> =>
  UPSERT_COLUMNS.map(([, , text]) => {
    const parts = new Array<string>(batch.length)
    for (let index = 0; index < batch.length; index++) parts[index] = element(text(batch[index]!))
    return `{${parts.join(",")}}`
  })

/** `LIKE` pattern for "contains term", with the pattern characters taken literally. */
const containsPattern = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/**
 * The batch upsert: one statement whatever the batch size. It never touches `discovered_at` on
 * conflict; the trigger stamps `updated_at`; `xmax = 0` tells an insert from an update.
 */
export const upsertStatement = (sql: SqlClient.SqlClient, arrays: ReadonlyArray<string>) =>
  sql<{ inserted: boolean }>`INSERT INTO listings (${sql.literal(UPSERT_NAMES)})
        SELECT ${sql.literal(UPSERT_SELECT)}
        FROM unnest(${sql.csv(arrays.map((array) => sql`${array}::text[]`))}) AS u(${sql.literal(UPSERT_NAMES)})
        ON CONFLICT (id) DO UPDATE SET ${sql.literal(UPSERT_SET)}
        RETURNING (xmax = 0) AS inserted`

/** A page request whose reader may be left out: a page read ahead reads rows only. */
type PageQuery = Omit<ListingStore.PageRequest, "reader"> & { readonly reader: ListingStore.PageReader | undefined }

export interface Options {
  /** How far `synced_at` trails the database clock; the spec's 120 s unless a test says otherwise. */
  readonly syncLagSeconds: number
  /** Decoded rows kept between pages (ListingCache); 0 keeps none. */
  readonly cacheCapacity?: number | undefined
}

export const makeWith = (options: Options) => Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const scope = yield* Scope.Scope
  const cache = ListingCache.make(options.cacheCapacity)

  /** The directory-score range's bounds, by the same decile rule as `Bands.directoryScoreRange`. */
  const scoreLow = `LEAST(90, (directory_score / 10) * 10)`
  const scoreHigh = `CASE WHEN ${scoreLow} = 90 THEN 100 ELSE ${scoreLow} + 9 END`

  const filterConditions = (filters: ListQuery.ListFilters, now: Time.Instant): Array<Fragment> => {
    const f = filters
    const where: Array<Fragment> = []
    if (f.ageMin !== undefined) where.push(sql`age_years >= ${f.ageMin}`)
    if (f.categories !== undefined) where.push(sql`category = ANY(${[...f.categories]}::text[])`)
    if (f.checkedDays !== undefined) {
      where.push(sql`availability_checked_at >= ${toDate(now - f.checkedDays * Time.DAY)}`)
    }
    if (f.citabilityMin !== undefined) where.push(sql`citability_score >= ${f.citabilityMin}`)
    if (f.featured !== undefined) {
      where.push(f.featured ? sql`featured_rank IS NOT NULL` : sql`featured_rank IS NULL`)
    }
    if (f.priceRange !== undefined) {
      const { high, low } = Bands.priceRangeBounds[f.priceRange]
      where.push(sql`published_value_cents >= ${low}`)
      if (high !== null) where.push(sql`published_value_cents < ${high}`)
    }
    if (f.q !== undefined) {
      // search_text is already lower-cased by the core; LIKE then matches exactly as `includes`.
      // A term holding U+0000 occurs in no listing (Postgres text cannot hold it): it matches nothing.
      for (const term of ListingFilter.searchTerms(f.q)) {
        where.push(storable(term) ? sql`search_text LIKE ${containsPattern(term)}` : sql.literal("FALSE"))
      }
    }
    if (f.referringDomainBands !== undefined) {
      const bands = f.referringDomainBands.map((band) => {
        const { high, low } = Bands.referringDomainsBandBounds(band)
        return high === null
          ? sql`referring_domains >= ${low}`
          : sql`referring_domains BETWEEN ${low} AND ${high}`
      })
      where.push(sql.or(bands))
    }
    if (f.recommended === true) {
      where.push(sql`category IS NOT NULL`)
      where.push(sql`jsonb_array_length(linked_by) > 0`)
      where.push(sql`directory_score >= ${ListQuery.RECOMMENDED_SCORE_FLOOR}`)
    }
    if (f.rsMin !== undefined || f.rsMax !== undefined) where.push(sql`directory_score IS NOT NULL`)
    if (f.rsMin !== undefined) where.push(sql`${sql.literal(scoreLow)} >= ${f.rsMin}`)
    if (f.rsMax !== undefined) where.push(sql`${sql.literal(scoreHigh)} <= ${f.rsMax}`)
    if (f.sources !== undefined) where.push(sql`source = ANY(${[...f.sources]}::text[])`)
    if (f.spam !== undefined) where.push(sql`spam = ${f.spam}`)
    if (f.openTierOnly === true) where.push(sql`tier = 'open'`)
    if (f.tld !== undefined) where.push(sql`tld = ${f.tld}`)
    return where
  }

  /*
   * Postgres plans a prepared statement anew for every execution (a "custom" plan) while its
   * parameters' values change its estimates, and a page's always do: the access-delay bound is
   * the clock, the LIMIT a parameter. Planning the page statement cost more than running it
   * (docs/performance.md). So the clock-valued bounds go in as one-row subqueries, whose value
   * the planner never sees, and the LIMIT as a literal: the plan is then the same for every
   * execution and Postgres keeps one (a "generic" plan) per connection. Filter values and
   * `since` stay visible parameters: there the plan should follow the value.
   */
  const opaque = (at: Time.Instant) => sql`(SELECT ${toDate(at)}::timestamptz)`
  const limitOf = (request: PageQuery) => {
    const rows = request.limit + 1
    if (!Number.isSafeInteger(rows) || rows < 2) throw new RangeError(`page limit must be a positive integer, got ${request.limit}`)
    return sql.literal(String(rows))
  }

  /** Every condition of a page request: status, filters, access delay and the keyset position. */
  const pageConditions = (request: PageQuery): Array<Fragment> => {
    const where: Array<Fragment> = []
    const filters = filterConditions(request.filters, request.now)
    if (request.since === undefined) {
      where.push(sql`status = 'active'`, ...filters)
    } else {
      // Tombstones carry no metrics worth filtering on: a since run delivers every one.
      // The database stamps updated_at with its own clock, so no row predates 1970: an earlier
      // since means the same, and years before 1 would not even reach PGlite (no year 0 there).
      where.push(sql`updated_at >= ${toDate(Math.max(request.since, 0))}`)
      where.push(sql`status IN ('active', 'sold', 'blocked', 'delisted')`)
      if (filters.length > 0) where.push(sql`(status <> 'active' OR ${sql.and(filters)})`)
    }
    where.push(sql`discovered_at <= ${opaque(request.visibleBefore)}`)
    const after = request.after
    if (after !== undefined) {
      if (after.order === "id") {
        where.push(sql`id > ${after.id}`)
      } else {
        const at = toDate(after.discoveredAt)
        // The leading `<=` is an index range on (discovered_at DESC, id): without it the
        // planner reads every row before the position (measured: 400 ms at row 360 000).
        where.push(sql`discovered_at <= ${at}`)
        where.push(sql`(discovered_at < ${at} OR id > ${after.id})`)
      }
    }
    return where
  }

  const orderOf = (request: PageQuery, table = "") =>
    request.order === "latest"
      ? sql.literal(`${table}discovered_at DESC, ${table}id ASC`)
      : sql.literal(`${table}id ASC`)

  const revealedBy = (revealers: ReadonlyArray<string>) =>
    revealers.length === 0
      ? sql.literal("'{}'::text[]")
      : sql`ARRAY(SELECT r.account_id FROM reveals r WHERE r.listing_id = l.id AND r.account_id = ANY(${revealers}::text[]))`

  /** The hold running at `at` on row `l`, as `HoldStore.runningOn` would find it. */
  const runningHold = (at: Time.Instant) =>
    sql`LEFT JOIN LATERAL (SELECT * FROM holds
        WHERE listing_id = l.id AND ${runningAt(sql, opaque(at))}
        ORDER BY held_at DESC LIMIT 1) AS h ON true`

  /**
   * A page's rows as `select` (a statement over listings, in page order) reads them; with a
   * reader, in the same statement, the hold running on each row (as `HoldStore.runningOn`) and
   * which of `revealers` revealed it (as `RevealStore.revealedAmong`): one round trip where
   * three were. Several revealers when reads of one page share the statement (`SharedReads`).
   */
  const withReader = (
    request: PageQuery,
    select: Fragment,
    revealers: ReadonlyArray<string>
  ): Effect.Effect<ReadonlyArray<Values>, SqlError.SqlError> => {
    const reader = request.reader
    if (reader === undefined) return sql`${select}`.values
    return sql`SELECT l.*, ${revealedBy(revealers)} AS revealed_by, ${sql.literal(JOINED_HOLD_COLUMNS)}
      FROM (${select}) AS l
      ${runningHold(reader.at)}
      ORDER BY ${orderOf(request, "l.")}`.values
  }

  /** For rows read ahead: each id with its running hold at `reader.at` and which of `revealers` revealed it. */
  const readerOf = (ids: ReadonlyArray<string>, reader: ListingStore.PageReader, revealers: ReadonlyArray<string>) =>
    sql`SELECT l.id, ${revealedBy(revealers)} AS revealed_by, ${sql.literal(JOINED_HOLD_COLUMNS)}
      FROM unnest(${[...ids]}::text[]) AS l(id)
      ${runningHold(reader.at)}`.values

  /**
   * Where a page statement's own columns sit in its rows: after the `selected` columns of its
   * select come the anchor's answer (with a cursor), then, with a reader, `revealed_by` and the
   * running hold's columns (`withReader`). Every select starts with `id`.
   */
  interface Layout {
    readonly anchorHeld: number
    readonly revealedBy: number
    readonly hold: number
  }
  const layoutOf = (request: Pick<PageQuery, "after">, selected: number): Layout => {
    const anchored = request.after === undefined ? 0 : 1
    return { anchorHeld: selected, revealedBy: selected + anchored, hold: selected + anchored + 1 }
  }

  /** What the statement said of the readers: the running holds, and each revealer's reveals. */
  interface ReaderAnswers {
    readonly running: ReadonlyMap<string, Hold.HoldRecord>
    readonly revealedBy: ReadonlyMap<string, ReadonlySet<string>>
  }
  const readerAnswers = (rows: ReadonlyArray<Values>, layout: Layout): ReaderAnswers => {
    const running = new Map<string, Hold.HoldRecord>()
    const revealedBy = new Map<string, Set<string>>()
    for (const row of rows) {
      const id = row[0] as string
      if (row[layout.hold] !== null && row[layout.hold] !== undefined) running.set(id, toHoldAt(row, layout.hold))
      for (const account of (row[layout.revealedBy] ?? []) as ReadonlyArray<string>) {
        let ids = revealedBy.get(account)
        if (ids === undefined) revealedBy.set(account, ids = new Set())
        ids.add(id)
      }
    }
    return { running, revealedBy }
  }

  /** `PageResult`'s reader fields for `reader`, from what a (possibly shared) statement said. */
  const answersFor = (reader: ListingStore.PageReader, answers: ReaderAnswers) => ({
    running: answers.running,
    revealed: reader.revealsOf === undefined
      ? new Set<string>()
      : answers.revealedBy.get(reader.revealsOf) ?? new Set<string>()
  })

  const revealersOf = (request: PageQuery) =>
    request.reader?.revealsOf === undefined ? [] : [request.reader.revealsOf]

  interface Read {
    readonly records: Array<Listing.ListingRecord>
    /** Undefined when the page was read without a reader (read ahead). */
    readonly answers: ReaderAnswers | undefined
    /** Undefined without a cursor, or when no row came back to carry the answer. */
    readonly anchorExists: boolean | undefined
  }
  interface Served extends Read {
    readonly answers: ReaderAnswers
  }

  /**
   * With a cursor, whether its anchor row is held, as one more column of the page (Postgres
   * evaluates the uncorrelated EXISTS once): it saves a look-up per page. A page with no rows
   * carries no answer, and `page` asks `find`.
   */
  const anchorColumn = (request: PageQuery) =>
    request.after === undefined
      ? sql.literal("")
      : sql`, EXISTS (SELECT 1 FROM listings AS anchor WHERE anchor.id = ${request.after.id}) AS anchor_held`
  const anchorExistsIn = (request: PageQuery, rows: ReadonlyArray<Values>, layout: Layout) =>
    request.after === undefined || rows[0] === undefined ? undefined : rows[0][layout.anchorHeld] === true

  /** The page decoded in full: a since pull (read once, not worth caching) and the fallback. */
  // With a reader, withReader joins its answers: the overload for a PageRequest says so.
  const fullPage = ((
    request: PageQuery,
    where: ReadonlyArray<Fragment>,
    keep: boolean,
    revealers: ReadonlyArray<string>
  ): Effect.Effect<Read, SqlError.SqlError> =>
    withReader(
      request,
      sql`SELECT ${sql.literal(COLUMNS)}${anchorColumn(request)} FROM listings WHERE ${sql.and(where)}
        ORDER BY ${orderOf(request)} LIMIT ${limitOf(request)}`,
      revealers
    ).pipe(
      Effect.map((rows) => {
        const layout = layoutOf(request, LISTING_COLUMNS.length)
        return {
          records: rows.map((row) => (keep ? cache.intern(toRecord(row)) : toRecord(row))),
          answers: request.reader === undefined ? undefined : readerAnswers(rows.slice(0, request.limit), layout),
          anchorExists: anchorExistsIn(request, rows, layout)
        }
      })
    )) as {
      (request: ListingStore.PageRequest, where: ReadonlyArray<Fragment>, keep: boolean, revealers: ReadonlyArray<string>): Effect.Effect<Served, SqlError.SqlError>
      (request: PageQuery, where: ReadonlyArray<Fragment>, keep: boolean, revealers: ReadonlyArray<string>): Effect.Effect<Read, SqlError.SqlError>
    }

  /**
   * A listing page: the ids and versions first, then only the rows not cached at that version.
   * A row written between the two statements is not mixed in at its newer version (it might no
   * longer match): the page is then read again in full, as one statement.
   */
  const cachedPage = (request: ListingStore.PageRequest, revealers: ReadonlyArray<string>) =>
    Effect.gen(function*(): Effect.fn.Return<Served, SqlError.SqlError> {
      const where = pageConditions(request)
      const versions = yield* withReader(
        request,
        sql`SELECT ${sql.literal(VERSION_COLUMNS.join(", "))}${anchorColumn(request)} FROM listings WHERE ${sql.and(where)}
          ORDER BY ${orderOf(request)} LIMIT ${limitOf(request)}`,
        revealers
      )
      const records = new Array<Listing.ListingRecord | undefined>(versions.length)
      const missing: Array<string> = []
      // Each version starts with VERSION_COLUMNS: [id, updated_at, …].
      versions.forEach((version, index) => {
        records[index] = cache.get(version[0] as string, instant(version[1]))
        if (records[index] === undefined) missing.push(version[0] as string)
      })
      const layout = layoutOf(request, VERSION_COLUMNS.length)
      const answers = readerAnswers(versions.slice(0, request.limit), layout)
      const anchorExists = anchorExistsIn(request, versions, layout)
      if (missing.length === 0) return { records: records as Array<Listing.ListingRecord>, answers, anchorExists }
      const fetched = yield* sql`SELECT ${sql.literal(COLUMNS)} FROM listings WHERE id = ANY(${missing}::text[])`.values
      const byId = new Map(fetched.map((row) => [row[COLUMN.id] as string, toRecord(row)]))
      for (let index = 0; index < versions.length; index++) {
        if (records[index] !== undefined) continue
        const record = byId.get(versions[index]![0] as string)
        if (record === undefined || record.updatedAt !== instant(versions[index]![1])) {
          return yield* fullPage(request, where, true, revealers)
        }
        records[index] = cache.intern(record)
      }
      return { records: records as Array<Listing.ListingRecord>, answers, anchorExists }
    })

  /**
   * Pages other than since runs go through `SharedReads`: reads of the same page (same filters,
   * position, size, access delay) that arrive while one is being read share the next statement.
   * That statement runs at the latest clock of its batch; every request in it started before,
   * so each answer is still the directory at an instant inside its own request. The reveals of
   * every reader in the batch come back with it.
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
      const revealers = [...new Set(batch.flatMap(revealersOf))]
      const read = yield* cachedPage(SharedReads.latest(batch, (request) => request.now), revealers)
      return batch.map(() => read)
    }).pipe(Effect.orDie)
  const sharedPages = SharedReads.make(scope, pagesFor)

  /*
   * Read-ahead for since runs. A consumer asks for the next page only once it has this one, so
   * while this page travels and is processed the store already reads the next (rows only; who
   * holds or revealed what is read when the page is served, `answersNow`). The next page was read a
   * moment earlier than asked, with an access-delay bound no later than the request's: it can
   * miss a row written since, never show one the caller may not see, and a row written after
   * the run's synced_at reaches the consumer on its next run anyway (the spec's overlap). Its
   * anchor (the last row of the page just served) existed when it was read; rows leave the
   * directory as tombstones, so only a row deleted by hand in between would go unnoticed.
   */
  const readAhead = new Map<string, { readonly visibleBefore: number; readonly startedAt: number; readonly read: Deferred.Deferred<Read, unknown> }>()
  const readAheadKey = (request: PageQuery, afterId: string) =>
    JSON.stringify([request.since, request.order, request.limit, request.filters, afterId])

  /** The reader's holds and reveals on rows read ahead, asked now. */
  const answersNow = (read: Read, request: ListingStore.PageRequest) =>
    Effect.gen(function*() {
      const ids = read.records.slice(0, request.limit).map((record) => record.id)
      if (ids.length === 0) return { running: new Map(), revealedBy: new Map() } satisfies ReaderAnswers
      const rows = yield* readerOf(ids, request.reader, revealersOf(request))
      return readerAnswers(rows, layoutOf({ after: undefined }, 1))
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
      read ??= yield* fullPage(request, pageConditions(request), false, revealersOf(request))
      const last = read.records[request.limit - 1]
      const now = performance.now()
      for (const [stale, entry] of readAhead) if (now - entry.startedAt >= READ_AHEAD_MS) readAhead.delete(stale)
      // Only a run that already follows a cursor is read ahead: a poller that reads one page
      // from its watermark and stops would make every read-ahead wasted work.
      const following = request.after !== undefined
      if (following && read.records.length > request.limit && last !== undefined && readAhead.size < MAX_READS_AHEAD) {
        const next: PageQuery = { ...request, after: { order: "id", id: last.id }, reader: undefined }
        const nextRead = Deferred.makeUnsafe<Read, unknown>()
        readAhead.set(readAheadKey(next, last.id), { visibleBefore: next.visibleBefore, startedAt: now, read: nextRead })
        yield* fullPage(next, pageConditions(next), false, []).pipe(
          Effect.exit,
          Effect.flatMap((exit) => Deferred.done(nextRead, exit)),
          Effect.forkIn(scope)
        )
      }
      const answers = read.answers ?? (yield* answersNow(read, request))
      return { ...read, answers }
    }).pipe(Effect.orDie)

  const sharedPage = (request: ListingStore.PageRequest) =>
    SharedReads.unlessInTransaction(
      sql,
      sharedPages.read(sharedPageKey(request), request),
      Effect.map(pagesFor([request]), (pages) => pages[0]!)
    )

  // The span captures no stack trace: capturing one cost ~5 µs a page, measured.
  const page = (request: ListingStore.PageRequest): Effect.Effect<ListingStore.PageResult> =>
    Effect.gen(function*() {
      const read = request.since !== undefined ? yield* sincePage(request) : yield* sharedPage(request)
      const after = request.after
      // A page with no rows carries no answer for its anchor: then it is looked up.
      const anchorExists = after === undefined || (read.anchorExists ?? (yield* find(after.id)) !== undefined)
      return {
        rows: read.records.slice(0, request.limit),
        hasMore: read.records.length > request.limit,
        ...answersFor(request.reader, read.answers),
        anchorExists
      }
    }).pipe(Effect.withSpan("SqlListingStore.page", undefined, { captureStackTrace: false }))

  const findOne = (id: Ids.ListingId) =>
    sql`SELECT ${sql.literal(COLUMNS)} FROM listings WHERE id = ${id}`.values.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : cache.intern(toRecord(rows[0])))),
      Effect.orDie
    )

  /** Look-ups of one id share statements as pages do: a busy listing, a cursor many follow. */
  const sharedFinds = SharedReads.make(scope, (batch: ReadonlyArray<Ids.ListingId>) =>
    Effect.map(findOne(batch[0]!), (found) => batch.map(() => found)))

  const find = (id: Ids.ListingId) => SharedReads.unlessInTransaction(sql, sharedFinds.read(id, id), findOne(id))

  /** One index probe per code (listings_category): a DISTINCT over every matching row took 0.9 s on 1 M rows. */
  const unknownCategories = (codes: ReadonlyArray<string>) =>
    codes.length === 0 ? Effect.succeed([]) : sql<{ code: string }>`SELECT code FROM unnest(${[...codes]}::text[]) AS code
      WHERE NOT EXISTS (SELECT 1 FROM listings WHERE category = code AND status = 'active')`.pipe(
      Effect.map((rows) => {
        const unknown = new Set(rows.map((row) => row.code))
        return codes.filter((code) => unknown.has(code))
      }),
      Effect.orDie
    )

  /*
   * updated_at is the time of the write, not of the commit: a transaction that stamped a row
   * and has not committed yet can still make that row visible with an updated_at in the past.
   * So the watermark never passes the start of the oldest open transaction that has written
   * anything (it holds an xid), and it trails the clock by 120 s besides.
   *
   * A watermark that was valid when read stays valid: any row a later page cannot see yet was
   * written after that read, or by a transaction that was already open (and counted) then. So
   * one reading serves every page for SYNCED_AT_REUSE_MS, which costs consumers at most that
   * much more overlap and saves a statement per page.
   */
  const readSyncedAt = sql<{ synced_at: unknown }>`SELECT LEAST(
      clock_timestamp() - make_interval(secs => ${options.syncLagSeconds}),
      (SELECT min(xact_start) FROM pg_stat_activity
        WHERE backend_xid IS NOT NULL AND datname = current_database() AND pid <> pg_backend_pid())
    ) AS synced_at`.pipe(
    Effect.map((rows) => instant(rows[0]!.synced_at)),
    Effect.orDie
  )
  let lastSyncedAt: { readonly value: Time.Instant; readonly readAt: number } | undefined
  const syncedAt = Effect.suspend(() => {
    const readAt = performance.now()
    if (lastSyncedAt !== undefined && readAt - lastSyncedAt.readAt < SYNCED_AT_REUSE_MS) {
      return Effect.succeed(lastSyncedAt.value)
    }
    return Effect.map(readSyncedAt, (value) => {
      lastSyncedAt = { value, readAt }
      return value
    })
  })

  const upsert = (batch: ReadonlyArray<ListingStore.ListingInput>) =>
    Effect.gen(function*() {
      if (batch.length === 0) return { inserted: 0, updated: 0 }
      // One statement cannot touch a row twice: the last occurrence of an id wins, the
      // earlier ones count as updates, as they would one statement at a time.
      const last = new Map<string, ListingStore.ListingInput>()
      for (const input of batch) last.set(input.id, input)
      const repeats = batch.length - last.size
      const rows = yield* upsertStatement(sql, upsertArrays([...last.values()]))
      const inserted = rows.filter((row) => row.inserted === true).length
      return { inserted, updated: rows.length - inserted + repeats }
    }).pipe(Effect.orDie, Effect.withSpan("SqlListingStore.upsert"))

  const delist = (ids: ReadonlyArray<Ids.ListingId>, reason: Listing.DelistReason) =>
    Effect.gen(function*() {
      if (ids.length === 0) return []
      const unique = [...new Set(ids)]
      const rows = yield* sql<{ id: string }>`UPDATE listings SET status = ${reason}
        WHERE id = ANY(${unique}::text[]) AND status IN ('active', 'draft', 'blocked') RETURNING id`
      const changed = new Set(rows.map((row) => row.id))
      return unique.filter((id) => changed.has(id))
    }).pipe(Effect.orDie)

  const stampAvailability = (id: Ids.ListingId, at: Time.Instant) =>
    sql`UPDATE listings SET availability_checked_at = ${toDate(at)} WHERE id = ${id}
      RETURNING ${sql.literal(COLUMNS)}`.values.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toRecord(rows[0]))),
      Effect.orDie
    )

  const backfillMasks = (mask: (domain: string) => string) =>
    Effect.gen(function*() {
      let changed = 0
      let after = ""
      while (true) {
        const rows = yield* sql<Row>`SELECT id, domain, tags, category, blurb FROM listings
          WHERE mask_hint IS NULL AND id > ${after} ORDER BY id LIMIT ${BACKFILL_CHUNK}`
        if (rows.length === 0) return changed
        after = rows[rows.length - 1]!.id as string
        const document = JSON.stringify(rows.map((row) => {
          const maskHint = mask(row.domain as string)
          const searchText = ListingFilter.searchText({
            maskHint,
            tags: json(row.tags) as ReadonlyArray<string>,
            category: textOrNull(row.category),
            blurb: textOrNull(row.blurb)
          })
          return { id: row.id, mask_hint: maskHint, search_text: searchText }
        }))
        const updated = yield* sql<{ id: string }>`UPDATE listings AS l
          SET mask_hint = r.mask_hint, search_text = r.search_text
          FROM jsonb_to_recordset(${document}::jsonb) AS r(id text, mask_hint text, search_text text)
          WHERE l.id = r.id AND l.mask_hint IS NULL
          RETURNING l.id`
        changed += updated.length
      }
    }).pipe(Effect.orDie, Effect.withSpan("SqlListingStore.backfillMasks"))

  return ListingStore.ListingStore.of({
    page,
    find,
    unknownCategories,
    syncedAt,
    upsert,
    delist,
    stampAvailability,
    backfillMasks
  })
})

export const make = makeWith({ syncLagSeconds: SYNC_LAG_SECONDS })

export const layer = Layer.effect(ListingStore.ListingStore, make)

export const layerWith = (options: Options) => Layer.effect(ListingStore.ListingStore, makeWith(options))
