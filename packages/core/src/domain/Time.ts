/**
 * Instants are epoch milliseconds inside the core: cheap to compare and to store.
 * They become ISO 8601 strings (UTC, millisecond precision) only on the wire.
 */
export type Instant = number

export const MINUTE = 60_000
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

export const toIso = (instant: Instant): string => new Date(instant).toISOString()

const isoInstant = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/

const daysInMonth = (year: number, month: number): number =>
  month === 2
    ? (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
    : [4, 6, 9, 11].includes(month) ? 30 : 31

/** Parses an ISO 8601 instant that carries its offset; `undefined` for anything else. */
export const parseIsoInstant = (text: string): Instant | undefined => {
  const match = isoInstant.exec(text)
  if (match === null) return undefined
  const year = Number(match[1])
  const month = Number(match[2])
  const day = Number(match[3])
  // Date.parse rolls a day the month lacks into the next month (02-30 becomes 03-02); refuse it.
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined
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
