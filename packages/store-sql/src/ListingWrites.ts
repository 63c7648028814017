import { Bands, type Ids, type Listing, ListingFilter, type ListingStore, Masking, Time } from "@dropshelf/core"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { COLUMNS, toRecord } from "./ListingRows.ts"
import { json, textOrNull, toDate } from "./Rows.ts"

/*
 * Every write to listings: the batch upsert (with the derived filter columns the core computes:
 * tld, published value, citability score, search text), delisting, the availability stamp and
 * the mask backfill. A trigger stamps `updated_at` on each (Migrations.ts).
 */

/** Rows per statement in `backfillMasks`. */
const BACKFILL_CHUNK = 1000

/** Tombstones deleted per statement in `pruneTombstones`. */
export const PRUNE_CHUNK = 1000

type Row = Record<string, unknown>

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

/**
 * The batch as one array literal per column, in `UPSERT_COLUMNS` order: 27 text parameters
 * whatever the batch size, expanded by a multi-argument `unnest`. Each literal is bound untyped
 * and cast to text[] by the statement, so both drivers take it alike, an all-null column
 * included; the typed casts happen per element in the SELECT (docs/decisions/0100-sql-adapter.md).
 */
export const upsertArrays = (batch: ReadonlyArray<ListingStore.ListingInput>): Array<string> =>
  UPSERT_COLUMNS.map(([, , text]) => {
    const parts = new Array<string>(batch.length)
    for (let index = 0; index < batch.length; index++) parts[index] = element(text(batch[index]!))
    return `{${parts.join(",")}}`
  })

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

export const make = (sql: SqlClient.SqlClient) => {
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

  /**
   * Walks the partial index of tombstones (migration 0005), never the active rows, in statements
   * of PRUNE_CHUNK rows: on the embedded database every request waits for the one connection,
   * so no statement should run long. The conditions are repeated on the deleted row itself, so
   * a row imported again meanwhile is rechecked and kept.
   */
  const pruneTombstones = (before: Time.Instant) =>
    Effect.gen(function*() {
      let pruned = 0
      while (true) {
        const rows = yield* sql<{ found: number; pruned: number }>`WITH doomed AS (
            SELECT id FROM listings
            WHERE status IN ('sold', 'blocked', 'delisted') AND updated_at < ${toDate(before)}
            ORDER BY updated_at LIMIT ${PRUNE_CHUNK}
          ), deleted AS (
            DELETE FROM listings AS l USING doomed
            WHERE l.id = doomed.id AND l.status IN ('sold', 'blocked', 'delisted') AND l.updated_at < ${toDate(before)}
            RETURNING 1
          ) SELECT (SELECT count(*) FROM doomed)::int AS found, (SELECT count(*) FROM deleted)::int AS pruned`
        const found = Number(rows[0]?.found ?? 0)
        pruned += Number(rows[0]?.pruned ?? 0)
        if (found < PRUNE_CHUNK) return pruned
      }
    }).pipe(Effect.orDie, Effect.withSpan("SqlListingStore.pruneTombstones"))

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

  return { upsert, delist, pruneTombstones, stampAvailability, backfillMasks }
}
