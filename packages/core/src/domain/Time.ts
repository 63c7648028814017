/**
 * Instants are epoch milliseconds inside the core: cheap to compare and to store.
 * They become ISO 8601 strings (UTC, millisecond precision) only on the wire.
 */
export type Instant = number

export const MINUTE = 60_000
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

export const toIso = (instant: Instant): string => new Date(instant).toISOString()

const isoInstant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/

/** Parses an ISO 8601 instant that carries its offset; `undefined` for anything else. */
export const parseIsoInstant = (text: string): Instant | undefined => {
  if (!isoInstant.test(text)) return undefined
  const ms = Date.parse(text)
  return Number.isFinite(ms) ? ms : undefined
}

/** The calendar month (UTC) an instant falls in, as `YYYY-MM`: the key of the monthly reveal allowance. */
export const monthOf = (instant: Instant): string => toIso(instant).slice(0, 7)

/** Start of the calendar month (UTC) after the one holding `instant`. */
export const startOfNextMonth = (instant: Instant): Instant => {
  const d = new Date(instant)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
}

/** Start of the wall-clock minute holding `instant`. */
export const startOfMinute = (instant: Instant): Instant => instant - (instant % MINUTE)
