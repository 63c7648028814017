/**
 * Instants are epoch milliseconds inside the core: cheap to compare and to store.
 * They become ISO 8601 strings (UTC, millisecond precision) only on the wire.
 */
export type Instant = number

export const MINUTE = 60_000
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`)
const three = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`)
/** 0000-01-01 and 9999-12-31T23:59:59.999Z: the years `toISOString` writes with four digits. */
const FOUR_DIGIT_YEARS = [-62_167_219_200_000, 253_402_300_799_999] as const

/**
 * `new Date(instant).toISOString()`, character for character, without making a `Date`: every
 * published listing carries three or four of these, and a since pull publishes every listing.
 * The civil date is Howard Hinnant's days-from-epoch algorithm.
 */
export const toIso = (instant: Instant): string => {
  if (!Number.isInteger(instant) || instant < FOUR_DIGIT_YEARS[0] || instant > FOUR_DIGIT_YEARS[1]) {
    return new Date(instant).toISOString()
  }
  const days = Math.floor(instant / DAY)
  let rest = instant - days * DAY
  const shifted = days + 719_468
  const era = Math.floor(shifted / 146_097)
  const dayOfEra = shifted - era * 146_097
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365
  )
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  const hours = Math.floor(rest / HOUR)
  rest -= hours * HOUR
  const minutes = Math.floor(rest / MINUTE)
  rest -= minutes * MINUTE
  const seconds = Math.floor(rest / 1000)
  const millis = rest - seconds * 1000
  return `${String(year).padStart(4, "0")}-${two(month)}-${two(day)}T${two(hours)}:${two(minutes)}:${two(seconds)}.${three(millis)}Z`
}

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
