import { Bands, ListingFilter, type ListingStore, type ListQuery, Time } from "@dropshelf/core"
import { Effect } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import type { Fragment } from "effect/sql/Statement"
import { JOINED_HOLD_COLUMNS, type Values } from "./ListingRows.ts"
import { runningAt } from "./SqlHoldStore.ts"
import { opaqueIds, opaqueInstant, opaqueText, storable, toDate } from "./Rows.ts"

/*
 * A page request as SQL. Every filter of `ListingFilter.matchesFilters` is one condition over
 * plain columns; the derived ones (tld, published value, citability score, search text) are
 * computed at write time by the core's own functions, so the two cannot drift. Besides the
 * filters: the run (active rows, or a since run with its tombstones), the access delay, the
 * keyset position, the order and the LIMIT, and the reader's holds and reveals joined onto a
 * page's rows.
 */

/** A page request whose reader may be left out: a page read ahead reads rows only. */
export type PageStatementRequest = Omit<ListingStore.PageRequest, "reader"> & {
  readonly reader: ListingStore.PageReader | undefined
}

/** `LIKE` pattern for "contains term", with the pattern characters taken literally. */
export const containsPattern = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/**
 * Whose reveals a reader statement asks for: every account of `accounts` on every row (a page,
 * read by one account or by the few that share its statement), or each account on the one
 * listing it reads (single reads of many listings by many accounts, sharing a statement).
 */
export type RevealsAsked =
  | { readonly _tag: "OnEveryRow"; readonly accounts: ReadonlyArray<string> }
  | { readonly _tag: "OnOwnListing"; readonly pairs: ReadonlyArray<{ readonly accountId: string; readonly listingId: string }> }

export interface PageStatement {
  /** Every condition of a page request: status, filters, access delay and the keyset position. */
  readonly pageConditions: (request: PageStatementRequest) => Array<Fragment>
  /**
   * The access delay and the keyset position alone, every value a parameter; `opaquePosition`
   * hides the id position from the planner too, so that the text has one plan whatever its values.
   */
  readonly positionConditions: (request: PageStatementRequest, opaquePosition: boolean) => Array<Fragment>
  readonly orderOf: (request: PageStatementRequest, table?: string) => Fragment
  /** `limit + 1`, as a literal, so that one more row says whether there are more. */
  readonly limitOf: (request: PageStatementRequest) => Fragment
  /** With a cursor, whether its anchor row exists, as one more column of the page. */
  readonly anchorColumn: (request: PageStatementRequest) => Fragment
  /** The rows of `select` and, with a reader, each row's running hold and which of `accounts` revealed it. */
  readonly withReader: (
    request: PageStatementRequest,
    select: Fragment,
    accounts: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<Values>, SqlError.SqlError>
  /**
   * The rows of `select` (whose first column is the listing's id), each with the hold running
   * at `at` and which of the accounts `reveals` asks about revealed it, in `order` (`l.` names
   * the rows' columns).
   */
  readonly joinReader: (
    select: Fragment,
    at: Time.Instant,
    reveals: RevealsAsked,
    order: Fragment | undefined
  ) => Effect.Effect<ReadonlyArray<Values>, SqlError.SqlError>
  /** For rows already read: each id with its running hold at `reader.at` and which of `accounts` revealed it. */
  readonly readerColumnsOf: (
    ids: ReadonlyArray<string>,
    reader: ListingStore.PageReader,
    accounts: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<Values>, SqlError.SqlError>
}

/** A text value that can be written into a statement as `'value'`: no quote, backslash or space. */
const PLAIN_TEXT = /^[A-Za-z0-9._-]{1,63}$/

export const make = (sql: SqlClient.SqlClient): PageStatement => {
  /*
   * Filter values a client picks from a small set (codes, bands, enumerations, small integers)
   * are written into the statement's text: each filter set is then a statement of its own, which
   * Postgres plans for its values and, once it has run a few times on a connection, keeps that
   * plan instead of planning again at every page (planning cost more than running most page
   * statements). Anything else stays a parameter: the search term, whose plan must follow it.
   */
  const text = (value: string) => PLAIN_TEXT.test(value) ? sql.literal(`'${value}'`) : sql`${value}`
  const texts = (values: ReadonlyArray<string>) =>
    values.length > 0 && values.every((value) => PLAIN_TEXT.test(value))
      ? sql.literal(`ARRAY[${values.map((value) => `'${value}'`).join(",")}]::text[]`)
      : sql`${[...values]}::text[]`
  const integer = (value: number) => Number.isSafeInteger(value) ? sql.literal(String(value)) : sql`${value}`

  const filterConditions = (filters: ListQuery.ListFilters, now: Time.Instant): Array<Fragment> => {
    const f = filters
    const where: Array<Fragment> = []
    if (f.ageMin !== undefined) where.push(sql`age_years >= ${integer(f.ageMin)}`)
    if (f.categories !== undefined) where.push(sql`category = ANY(${texts(f.categories)})`)
    if (f.checkedDays !== undefined) {
      where.push(sql`availability_checked_at >= ${toDate(now - f.checkedDays * Time.DAY)}`)
    }
    if (f.citabilityMin !== undefined) where.push(sql`citability_score >= ${integer(f.citabilityMin)}`)
    if (f.featured !== undefined) {
      where.push(f.featured ? sql`featured_rank IS NOT NULL` : sql`featured_rank IS NULL`)
    }
    if (f.priceRange !== undefined) {
      const { high, low } = Bands.priceRangeBounds[f.priceRange]
      where.push(sql`published_value_cents >= ${integer(low)}`)
      if (high !== null) where.push(sql`published_value_cents < ${integer(high)}`)
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
          ? sql`referring_domains >= ${integer(low)}`
          : sql`referring_domains BETWEEN ${integer(low)} AND ${integer(high)}`
      })
      where.push(sql.or(bands))
    }
    if (f.recommended === true) {
      where.push(sql`category IS NOT NULL`)
      where.push(sql`linked`)
    }
    // rsMin, rsMax and recommended as one range of exact scores; a set admitting none is FALSE,
    // which Postgres folds: the page is answered without reading an index.
    const scores = ListingFilter.directoryScoreBounds(f)
    if (scores === null) where.push(sql.literal("FALSE"))
    else if (scores !== undefined) where.push(sql`directory_score BETWEEN ${integer(scores.low)} AND ${integer(scores.high)}`)
    if (f.sources !== undefined) where.push(sql`source = ANY(${texts(f.sources)})`)
    if (f.spam !== undefined) where.push(sql`spam = ${text(f.spam)}`)
    if (f.openTierOnly === true) where.push(sql`tier = 'open'`)
    if (f.tld !== undefined) where.push(sql`tld = ${text(f.tld)}`)
    return where
  }

  /*
   * The clock-valued bounds go in opaque (Rows.ts) and the LIMIT as a literal, so that a page
   * statement gets one plan per connection for its filter set. The search term and `since`
   * stay visible parameters: there the plan should follow the value.
   */
  const opaque = (at: Time.Instant) => opaqueInstant(sql, at)
  const limitOf = (request: PageStatementRequest) => {
    const rows = request.limit + 1
    if (!Number.isSafeInteger(rows) || rows < 2) throw new RangeError(`page limit must be a positive integer, got ${request.limit}`)
    return sql.literal(String(rows))
  }

  const pageConditions = (request: PageStatementRequest): Array<Fragment> => {
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
    where.push(...positionConditions(request, false))
    return where
  }

  const positionConditions = (request: PageStatementRequest, opaquePosition: boolean): Array<Fragment> => {
    const where: Array<Fragment> = [sql`discovered_at <= ${opaque(request.visibleBefore)}`]
    const after = request.after
    if (after !== undefined) {
      if (after.order === "id") {
        // Visible in a page's own statement: several indexes hold the id order, and which is
        // best follows how much of the directory lies after the position.
        where.push(opaquePosition ? sql`id > ${opaqueText(sql, after.id)}` : sql`id > ${after.id}`)
      } else {
        // Opaque: only listings_latest holds this order, so every page after the first is
        // read the same way and can keep one plan per connection.
        const at = opaque(after.discoveredAt)
        const id = opaqueText(sql, after.id)
        // The leading `<=` is an index range on (discovered_at DESC, id): without it the
        // planner reads every row before the position.
        where.push(sql`discovered_at <= ${at}`)
        where.push(sql`(discovered_at < ${at} OR id > ${id})`)
      }
    }
    return where
  }

  const orderOf = (request: PageStatementRequest, table = "") =>
    request.order === "latest"
      ? sql.literal(`${table}discovered_at DESC, ${table}id ASC`)
      : sql.literal(`${table}id ASC`)

  /** Postgres evaluates the uncorrelated EXISTS once per statement. */
  const anchorColumn = (request: PageStatementRequest) =>
    request.after === undefined
      ? sql.literal("")
      : sql`, EXISTS (SELECT 1 FROM listings AS anchor WHERE anchor.id = ${request.after.id}) AS anchor_held`

  /*
   * The reveals asked for, as a join onto the rows. A page's accounts are read over the span of
   * its ids, one descent of reveals' key (account, listing) an account, not one per row and
   * account; a newest-first page may span all of an account's reveals, which grow by at most
   * its plan's monthly allowance. Single reads ask each account about its own listing only:
   * one descent a read, where every account on every listing of a batch grows with their product.
   */
  const revealsJoin = (reveals: RevealsAsked) => {
    if (reveals._tag === "OnEveryRow") {
      return reveals.accounts.length === 0
        ? undefined
        : sql`SELECT listing_id, array_agg(account_id) AS revealed_by FROM reveals
          WHERE account_id = ANY(${opaqueIds(sql, reveals.accounts)})
            AND listing_id >= (SELECT min(id) FROM l) AND listing_id <= (SELECT max(id) FROM l)
          GROUP BY listing_id`
    }
    return reveals.pairs.length === 0
      ? undefined
      : sql`SELECT r.listing_id, array_agg(r.account_id) AS revealed_by
          FROM unnest(${reveals.pairs.map((pair) => pair.accountId)}::text[], ${reveals.pairs.map((pair) => pair.listingId)}::text[])
            AS asked (account_id, listing_id)
          JOIN reveals AS r ON r.account_id = asked.account_id AND r.listing_id = asked.listing_id
          GROUP BY r.listing_id`
  }

  /*
   * The holds of all the rows are found in one scan of holds_running over their ids, not probed
   * row by row: a probe per row costs a page of 250 rows more than reading the page, and through
   * the exclusion constraint's GiST (the only other index on listing_id) far more once holds
   * have a history. Of a listing's running holds, the latest, as `HoldStore.runningOn` finds it.
   */
  const joinReader = (select: Fragment, at: Time.Instant, reveals: RevealsAsked, order: Fragment | undefined) => {
    const revealed = revealsJoin(reveals)
    return sql`WITH l AS MATERIALIZED (${select})
      SELECT l.*, ${revealed === undefined ? sql.literal("'{}'::text[]") : sql.literal("COALESCE(r.revealed_by, '{}'::text[])")} AS revealed_by,
        ${sql.literal(JOINED_HOLD_COLUMNS)}
      FROM l LEFT JOIN (SELECT DISTINCT ON (listing_id) * FROM holds
        WHERE listing_id = ANY(ARRAY(SELECT id FROM l)) AND ${runningAt(sql, opaque(at))}
        ORDER BY listing_id, held_at DESC) AS h ON h.listing_id = l.id
      ${revealed === undefined ? sql.literal("") : sql`LEFT JOIN (${revealed}) AS r ON r.listing_id = l.id`}
      ${order === undefined ? sql.literal("") : sql`ORDER BY ${order}`}`.values
  }

  // One round trip where the rows, the holds and the reveals would take three. Several accounts
  // when reads of one page share the statement (SharedReads).
  const withReader = (request: PageStatementRequest, select: Fragment, accounts: ReadonlyArray<string>) =>
    request.reader === undefined
      ? sql`${select}`.values
      : joinReader(select, request.reader.at, { _tag: "OnEveryRow", accounts }, orderOf(request, "l."))

  /**
   * Of `ids`, the running holds and the reveals by `accounts`, as rows laid out like a page
   * statement's reader columns (`[id, revealed_by, hold…]`). Two plain index look-ups that return
   * only the rows that matter: a join over every id costs a since page far more.
   */
  const readerColumnsOf = (ids: ReadonlyArray<string>, reader: ListingStore.PageReader, accounts: ReadonlyArray<string>) =>
    Effect.map(
      Effect.all([
        sql`SELECT h.listing_id, '{}'::text[], ${sql.literal(JOINED_HOLD_COLUMNS)} FROM holds AS h
          WHERE h.listing_id = ANY(${[...ids]}::text[]) AND ${runningAt(sql, toDate(reader.at))}`.values,
        accounts.length === 0
          ? Effect.succeed<ReadonlyArray<Values>>([])
          : sql`SELECT listing_id, array_agg(account_id) FROM reveals
            WHERE listing_id = ANY(${[...ids]}::text[]) AND account_id = ANY(${[...accounts]}::text[])
            GROUP BY listing_id`.values
      ]),
      ([held, revealed]): ReadonlyArray<Values> => [...held, ...revealed]
    )

  return { pageConditions, positionConditions, orderOf, limitOf, anchorColumn, withReader, joinReader, readerColumnsOf }
}
