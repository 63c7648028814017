import type { Time } from "@dropshelf/core"
import type { SqlClient } from "effect/sql"
import type { Fragment } from "effect/sql/Statement"

type Instant = Time.Instant

/*
 * Column values as the two drivers hand them over: @effect/sql-pg decodes timestamptz to Date
 * and int8 to bigint, PGlite decodes int8 to number. Every row goes through these, so the
 * stores see one shape whichever database is behind them.
 */

export const instant = (value: unknown): Instant => {
  if (value instanceof Date) return value.getTime()
  if (typeof value === "number") return value
  if (typeof value === "bigint") return Number(value)
  if (typeof value === "string") return Date.parse(value)
  throw new TypeError(`Expected a timestamp, got ${String(value)}`)
}

export const instantOrNull = (value: unknown): Instant | null =>
  value === null || value === undefined ? null : instant(value)

export const int = (value: unknown): number => {
  if (typeof value === "number") return value
  if (typeof value === "bigint" || typeof value === "string") return Number(value)
  throw new TypeError(`Expected a number, got ${String(value)}`)
}

export const intOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : int(value)

export const textOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value)

/** A jsonb column: PGlite parses it, @effect/sql-pg parses it; a string means it was not parsed. */
export const json = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

/** Instants travel to the database as Date values, which both drivers bind as timestamptz. */
export const toDate = (value: Instant): Date => new Date(value)

/*
 * Values the planner cannot see, each a one-row subquery. A statement whose plan should not follow
 * its values (a look-up by key, a clock bound, a position in the newest-first order) then gets one
 * generic plan per connection after its first five runs instead of being planned anew at every
 * execution, which costs more than running it (docs/decisions/0509-read-paths.md). Filter values
 * are written into the statement instead (PageStatement.ts): there the plan should follow them.
 */
export const opaqueInstant = (sql: SqlClient.SqlClient, at: Instant): Fragment => sql`(SELECT ${toDate(at)}::timestamptz)`
export const opaqueText = (sql: SqlClient.SqlClient, value: string): Fragment => sql`(SELECT ${value}::text)`
export const opaqueIds = (sql: SqlClient.SqlClient, ids: ReadonlyArray<string>): Fragment => sql`(SELECT ${ids}::text[])::text[]`

export const toDateOrNull = (value: Instant | null): Date | null => (value === null ? null : new Date(value))

/** SQLSTATE of a database error wrapped in a SqlError, whichever driver raised it. */
export const sqlState = (error: unknown): string | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code
    const next = (current as { reason?: unknown; cause?: unknown }).reason ?? (current as { cause?: unknown }).cause
    current = next
  }
  return undefined
}

/** Whether Postgres text can hold `value`: it cannot hold U+0000, so a key with it names no row. */
export const storable = (value: string): boolean => !value.includes("\u0000")
