import { Bands, type Cursor, ListingFilter, type ListQuery } from "@dropshelf/core"
import { bitOf, Bitmaps, type Conjunct, equalitySlots, flagSlots, rangeSlots, setBit, type SlotTable, wordsOf } from "./ColumnBitmaps.ts"

/*
 * The filtered columns of the directory's listings as typed arrays, once in each order, so that a
 * page whose filters match few rows is found by scanning bytes (a few nanoseconds a row) instead
 * of by Postgres testing every row of its order's index (~220 ns a row). What a scan finds are
 * candidates: the page statement still tests them (ColumnPages.ts), so the columns may keep a
 * value coarser than the database does, as long as every test passes whatever the exact value
 * would pass (instants to the minute, codes past the 253rd of a column as "other"). Search terms
 * are held as the set of rows whose text holds each, read from the database when first asked.
 * docs/decisions/0516-filter-columns.md.
 */

/** One listing as the columns hold it: what the page statement's filters test, from its columns. */
export interface ColumnRow {
  readonly id: string
  readonly active: boolean
  readonly discoveredAt: number
  readonly checkedAt: number | null
  readonly tld: string
  readonly category: string | null
  readonly source: string | null
  readonly spam: string | null
  readonly openTier: boolean
  readonly publishedCents: number
  readonly referringDomains: number | null
  readonly directoryScore: number | null
  readonly ageYears: number | null
  readonly citabilityScore: number | null
  readonly featured: boolean
  readonly linked: boolean
  /** The text `q` searches, where read (a refresh): the held search terms are tested on it. */
  readonly searchText?: string | undefined
}

/** A byte of a coded column: values 0-252 as themselves, NONE for null, OTHER for anything else. */
const NONE = 255
const OTHER = 253
const LARGEST = 252

const OPEN = 1
const FEATURED = 2
const LINKED = 4
/** The row has left the active directory. */
const GONE = 8

/** An instant to the minute, 1 to 2^32 - 1 (0 is null): a test passes whatever the exact instant would pass. */
const minute = (at: number) => Math.min(0xffff_ffff, Math.max(1, Math.floor(at / 60_000)))

/** A search term's rows: a bit a row in each order. */
interface TermRows {
  readonly id: Uint32Array
  readonly latest: Uint32Array
}
const termRows = (n: number): TermRows => ({ id: new Uint32Array(wordsOf(n)), latest: new Uint32Array(wordsOf(n)) })

const byte = (value: number | null) =>
  value === null ? NONE : Number.isInteger(value) && value >= 0 && value <= LARGEST ? value : OTHER

/** Listing ids (8 characters of [0-9A-Za-z]) as numbers in their byte order. */
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const DIGIT = new Int8Array(128).fill(-1)
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i

/** NaN for anything that is not a listing id: the columns then cannot hold the directory. */
export const idNumber = (id: string): number => {
  if (id.length !== 8) return Number.NaN
  let value = 0
  for (let i = 0; i < 8; i++) {
    const digit = DIGIT[id.charCodeAt(i)] ?? -1
    if (digit < 0) return Number.NaN
    value = value * 62 + digit
  }
  return value
}

/** A row's id as a number; a row whose id is not a listing id cannot be held. */
const numberOf = (row: ColumnRow): number => {
  const id = idNumber(row.id)
  if (Number.isNaN(id)) throw new RangeError(`not a listing id: ${JSON.stringify(row.id)}`)
  return id
}

export const idText = (value: number): string => {
  let id = ""
  for (let i = 0; i < 8; i++) {
    id = ALPHABET[value % 62]! + id
    value = Math.floor(value / 62)
  }
  return id
}

/** A text column's values as bytes, in order of first sight. */
class Codes {
  private readonly byText = new Map<string, number>()
  code(text: string | null): number {
    if (text === null) return NONE
    let code = this.byText.get(text)
    if (code === undefined) {
      if (this.byText.size > LARGEST) return OTHER
      code = this.byText.size
      this.byText.set(text, code)
    }
    return code
  }
  /** A table passing the codes of `wanted`, and OTHER, which may hide any of them. */
  passing(wanted: ReadonlyArray<string> | undefined): Uint8Array {
    if (wanted === undefined) return ALL
    const table = new Uint8Array(256)
    table[OTHER] = 1
    for (const text of wanted) {
      const code = this.byText.get(text)
      if (code !== undefined) table[code] = 1
    }
    return table
  }
}

const ALL = new Uint8Array(256).fill(1)

/** A table of which bytes pass `test` on their value; OTHER passes, null does not. */
const valuesPassing = (test: (value: number) => boolean) => {
  const table = new Uint8Array(256)
  for (let value = 0; value <= LARGEST; value++) table[value] = test(value) ? 1 : 0
  table[OTHER] = 1
  return table
}

/** The `rd` band of a count, as its index in `Bands.REFERRING_DOMAIN_BANDS`. */
const rdBand = (count: number | null) => {
  if (count === null) return NONE
  const band = Bands.REFERRING_DOMAIN_BANDS.indexOf(Bands.referringDomainsBand(count))
  return band < 0 ? OTHER : band
}

/** The byte columns. */
const CODED = ["tld", "category", "source", "spam", "price", "rd", "score", "age", "citability", "flags"] as const
type Coded = typeof CODED[number]
type Bytes = { readonly [name in Coded]: Uint8Array }

const bytesOf = (n: number): Bytes => Object.fromEntries(CODED.map((name) => [name, new Uint8Array(n)])) as unknown as Bytes

/** How each byte column's values fall into its bitmaps' slots (ColumnBitmaps.ts): 32 values of a coded column, steps of a range. */
const SLOTS = new Map<Coded, SlotTable>([
  ...(["tld", "category", "source", "spam", "price", "rd"] as const).map((name) => [name, equalitySlots(32)] as const),
  ["score", rangeSlots(10, LARGEST)],
  ["age", rangeSlots(2, LARGEST)],
  ["citability", rangeSlots(10, LARGEST)],
  ["flags", flagSlots(OPEN | FEATURED | LINKED)]
])

/** One order's columns, a row's values at its position in that order, and their bitmaps once filled. */
interface Order {
  readonly bytes: Bytes
  readonly checked: Uint32Array
  bitmaps?: Bitmaps<Coded>
}

/** A page's filters as a table a byte column, flags and two instants. */
export interface Test {
  readonly tables: { readonly [name in Exclude<Coded, "flags">]: Uint8Array }
  readonly flagsMask: number
  readonly flagsWanted: number
  /** Checked at or after this minute; 0 when not asked. */
  readonly checkedFrom: number
  /** The access delay: discovered at or before this instant. */
  readonly visibleBefore: number
  /** The filters admit no row (a score range no score is in). */
  readonly none: boolean
  /** The rows holding each search term; a term not held is not tested. */
  readonly terms: ReadonlyArray<TermRows>
}

/**
 * What a scan found: candidates in order, how many rows it passed over (those its bitmaps ruled
 * out included: as many as Postgres would walk), and whether it reached the end.
 */
export interface Scan {
  readonly ids: Array<string>
  /** The last candidate's exact discovery, in the newest-first order. */
  readonly lastDiscoveredAt: number | undefined
  readonly examined: number
  readonly exhausted: boolean
}

type TextCodes = { readonly tld: Codes; readonly category: Codes; readonly source: Codes; readonly spam: Codes }
const newCodes = (): TextCodes => ({ tld: new Codes(), category: new Codes(), source: new Codes(), spam: new Codes() })

export class FilterColumns {
  /** Rows held, gone ones included until the next rebuild. */
  readonly size: number
  private readonly ids: Float64Array
  /** The id order: discovery to the minute. */
  private readonly discoveredMinute: Uint32Array
  private readonly byId: Order
  /** The newest-first order: each position's row in the id order, and its exact discovery. */
  private readonly latestRow: Uint32Array
  private readonly latestDiscovered: Float64Array
  private readonly byLatest: Order
  private readonly codes: TextCodes
  /** The rows whose search text holds each term; least recently used first. */
  private readonly terms = new Map<string, TermRows>()
  /** Rows marked gone since the last rebuild. */
  private gone = 0

  private constructor(n: number, codes: TextCodes) {
    this.size = n
    this.ids = new Float64Array(n)
    this.discoveredMinute = new Uint32Array(n)
    this.byId = orderOf(n)
    this.latestRow = new Uint32Array(n)
    this.latestDiscovered = new Float64Array(n)
    this.byLatest = orderOf(n)
    this.codes = codes
  }

  /**
   * Columns filled row by row in ascending id, as a load reads the directory: `add` takes up to
   * `capacity` rows, `done` sorts the newest-first order once.
   */
  static loader(capacity: number): { readonly add: (row: ColumnRow) => boolean; readonly done: () => FilterColumns } {
    const full = new FilterColumns(capacity, newCodes())
    let n = 0
    return {
      add: (row) => {
        const id = numberOf(row)
        if (n >= capacity || (n > 0 && full.ids[n - 1]! >= id)) return false
        full.ids[n] = id
        full.write(n, row)
        full.latestDiscovered[n] = row.discoveredAt
        n++
        return true
      },
      done: () => {
        // Rows that left while the load read make it short: then its arrays are copied to size.
        const columns = n === capacity ? full : new FilterColumns(n, full.codes)
        if (columns !== full) {
          columns.ids.set(full.ids.subarray(0, n))
          columns.discoveredMinute.set(full.discoveredMinute.subarray(0, n))
          columns.byId.checked.set(full.byId.checked.subarray(0, n))
          for (const name of CODED) columns.byId.bytes[name].set(full.byId.bytes[name].subarray(0, n))
        }
        // Until now latestDiscovered held each row's discovery in the id order.
        const discovered = full.latestDiscovered.slice(0, n)
        const positions = new Int32Array(n)
        for (let at = 0; at < n; at++) positions[at] = at
        positions.sort((x, y) => discovered[y]! - discovered[x]! || x - y)
        columns.fillLatest(positions, (row) => discovered[row]!)
        return columns.indexed()
      }
    }
  }

  /** The newest-first order from the id order's columns: `positions` lists id positions newest first. */
  private fillLatest(positions: Int32Array, discoveredOf: (row: number) => number) {
    for (let at = 0; at < this.size; at++) {
      const row = positions[at]!
      this.latestRow[at] = row
      this.latestDiscovered[at] = discoveredOf(row)
      this.byLatest.checked[at] = this.byId.checked[row]!
    }
    copyBytes(this.byLatest, this.byId, positions)
  }

  /**
   * A copy with `rows` merged in (rows of the same id replaced, rows no longer active dropped,
   * as are rows marked gone): both orders are merges of what is held with the few rows new.
   */
  private merged(rows: ReadonlyArray<ColumnRow>): FilterColumns {
    const incoming = new Map<number, ColumnRow>()
    for (const row of rows) incoming.set(numberOf(row), row)
    // Each held row's position in the copy; -1 for a row dropped, 0 until the merge places it.
    const keptAt = new Int32Array(this.size).fill(-1)
    let keptCount = 0
    for (let at = 0; at < this.size; at++) {
      if ((this.byId.bytes.flags[at]! & GONE) === 0 && !incoming.has(this.ids[at]!)) {
        keptAt[at] = 0
        keptCount++
      }
    }
    const added = [...incoming.entries()].filter(([, row]) => row.active).sort((a, b) => a[0] - b[0])
    const n = keptCount + added.length
    const columns = new FilterColumns(n, this.codes)
    const terms = [...this.terms].map(([term, rows]) => {
      const copy = termRows(n)
      columns.terms.set(term, copy)
      return [rows.id, copy.id] as const
    })
    const addedAt = new Uint32Array(added.length)
    // Each row's position in this copy's source, -1 for a row added.
    const source = new Int32Array(n)
    let from = 0
    let a = 0
    for (let at = 0; at < n; at++) {
      while (from < this.size && keptAt[from]! < 0) from++
      if (a >= added.length || (from < this.size && this.ids[from]! < added[a]![0])) {
        columns.ids[at] = this.ids[from]!
        columns.discoveredMinute[at] = this.discoveredMinute[from]!
        columns.byId.checked[at] = this.byId.checked[from]!
        source[at] = from
        keptAt[from++] = at
      } else {
        const [id, row] = added[a]!
        columns.ids[at] = id
        columns.write(at, row)
        source[at] = -1
        addedAt[a++] = at
      }
    }
    copyBytes(columns.byId, this.byId, source)
    for (const [bits, copy] of terms) {
      for (let at = 0; at < n; at++) if (source[at]! >= 0) setBit(copy, at, bitOf(bits, source[at]!) === 1)
    }
    // Newest first: the rows held, in their order, merged with the new ones sorted.
    const fresh = added.map(([id, row], index) => ({ id, discovered: row.discoveredAt, at: addedAt[index]! }))
      .sort((x, y) => y.discovered - x.discovered || x.id - y.id)
    const positions = new Int32Array(n)
    const discovered = new Float64Array(n)
    let held = 0
    let f = 0
    for (let at = 0; at < n; at++) {
      while (held < this.size && keptAt[this.latestRow[held]!]! < 0) held++
      const next = fresh[f]
      const heldDiscovered = this.latestDiscovered[held]!
      const takeHeld = next === undefined ||
        (held < this.size && (heldDiscovered > next.discovered || (heldDiscovered === next.discovered && this.ids[this.latestRow[held]!]! < next.id)))
      if (takeHeld) {
        positions[at] = keptAt[this.latestRow[held]!]!
        discovered[positions[at]!] = heldDiscovered
        held++
      } else {
        positions[at] = next.at
        discovered[next.at] = next.discovered
        f++
      }
    }
    columns.fillLatest(positions, (row) => discovered[row]!)
    return columns.indexed()
  }

  /** The columns with both orders' bitmaps filled from their bytes, and the terms' from the id order. */
  private indexed(): this {
    for (const order of [this.byId, this.byLatest]) order.bitmaps = new Bitmaps(this.size, SLOTS, order.bytes)
    for (const rows of this.terms.values()) this.fillLatestTerm(rows)
    return this
  }

  /** A term's bits in the newest-first order, from those in the id order. */
  private fillLatestTerm(rows: TermRows) {
    rows.latest.fill(0)
    for (let at = 0; at < this.size; at++) if (bitOf(rows.id, this.latestRow[at]!) === 1) setBit(rows.latest, at, true)
  }

  /** The newest-first position of the row at id position `row`, discovered at `discoveredAt`; -1 if it is not there. */
  private latestAt(row: number, discoveredAt: number): number {
    const id = this.ids[row]!
    let low = 0
    let high = this.size
    while (low < high) {
      const mid = (low + high) >>> 1
      const discovered = this.latestDiscovered[mid]!
      if (discovered > discoveredAt || (discovered === discoveredAt && this.ids[this.latestRow[mid]!]! < id)) low = mid + 1
      else high = mid
    }
    // A row whose discovery moved is not found: its place is another, and the columns are copied (merged).
    return low < this.size && this.latestRow[low] === row && this.latestDiscovered[low] === discoveredAt ? low : -1
  }

  /** Codes `row` into id position `at` (the newest-first order is filled from it). */
  private write(at: number, row: ColumnRow) {
    const bytes = this.byId.bytes
    bytes.tld[at] = this.codes.tld.code(row.tld)
    bytes.category[at] = this.codes.category.code(row.category)
    bytes.source[at] = this.codes.source.code(row.source)
    bytes.spam[at] = this.codes.spam.code(row.spam)
    bytes.price[at] = Bands.PRICE_RANGES.indexOf(Bands.priceRangeOf(row.publishedCents))
    bytes.rd[at] = rdBand(row.referringDomains)
    bytes.score[at] = byte(row.directoryScore)
    bytes.age[at] = byte(row.ageYears)
    bytes.citability[at] = byte(row.citabilityScore)
    bytes.flags[at] = (row.openTier ? OPEN : 0) | (row.featured ? FEATURED : 0) | (row.linked ? LINKED : 0) | (row.active ? 0 : GONE)
    this.byId.checked[at] = row.checkedAt === null ? 0 : minute(row.checkedAt)
    this.discoveredMinute[at] = minute(row.discoveredAt)
    // A row read without its search text may hold any term.
    for (const [term, rows] of this.terms) setBit(rows.id, at, row.searchText?.includes(term) ?? true)
  }

  /**
   * Holds the rows whose search text holds `term`: `ids`, read from the database after this
   * columns' watermark (a row written since is read by the page statement whatever its bit), and
   * kept up to date by `apply`; `every` when too many to be worth testing. Keeps the `keep`
   * terms used last.
   */
  addTerm(term: string, ids: ReadonlyArray<string> | "every", keep: number) {
    const rows = termRows(this.size)
    if (ids === "every") rows.id.fill(0xffff_ffff)
    else {
      for (const id of ids) {
        const at = this.positionOf(idNumber(id))
        if (at >= 0) setBit(rows.id, at, true)
      }
    }
    this.fillLatestTerm(rows)
    this.terms.delete(term)
    this.terms.set(term, rows)
    for (const old of this.terms.keys()) {
      if (this.terms.size <= keep) break
      this.terms.delete(old)
    }
  }

  /** Which of `terms` have no rows held; those held become the terms used last. */
  missingTerms(terms: ReadonlyArray<string>): Array<string> {
    const missing: Array<string> = []
    for (const term of terms) {
      const rows = this.terms.get(term)
      if (rows === undefined) missing.push(term)
      else {
        this.terms.delete(term)
        this.terms.set(term, rows)
      }
    }
    return missing
  }

  /** The id position of `id`, or -1. */
  private positionOf(id: number): number {
    let low = 0
    let high = this.size
    while (low < high) {
      const mid = (low + high) >>> 1
      if (this.ids[mid]! < id) low = mid + 1
      else high = mid
    }
    return low < this.size && this.ids[low] === id ? low : -1
  }

  /**
   * The columns with `rows` (as the database now holds them) applied: rows already held are
   * written in place, rows that left are marked gone; new rows, a row whose discovery moved, or
   * many gone rows make a new copy (`merged`).
   */
  apply(rows: ReadonlyArray<ColumnRow>): FilterColumns {
    let rebuild = false
    const inPlace: Array<[number, number, ColumnRow]> = []
    for (const row of rows) {
      const at = this.positionOf(numberOf(row))
      const latest = at < 0 ? -1 : this.latestAt(at, row.discoveredAt)
      if (latest < 0) {
        if (row.active || at >= 0) rebuild = true
      } else inPlace.push([at, latest, row])
    }
    if (rebuild) return this.merged(rows)
    for (const [at, latest, row] of inPlace) {
      const wasGone = (this.byId.bytes.flags[at]! & GONE) !== 0
      this.byId.bitmaps!.mark(at, false)
      this.byLatest.bitmaps!.mark(latest, false)
      this.write(at, row)
      if (!row.active && !wasGone) this.gone++
      if (row.active && wasGone) this.gone--
      this.byLatest.checked[latest] = this.byId.checked[at]!
      for (const name of CODED) this.byLatest.bytes[name][latest] = this.byId.bytes[name][at]!
      for (const rows of this.terms.values()) setBit(rows.latest, latest, bitOf(rows.id, at) === 1)
      this.byId.bitmaps!.mark(at, true)
      this.byLatest.bitmaps!.mark(latest, true)
    }
    return this.gone > this.size / 8 ? this.merged([]) : this
  }

  /** `filters` as tables over the columns, for pages read at `now` with the access delay `visibleBefore`. */
  test(filters: ListQuery.ListFilters, now: number, visibleBefore: number): Test {
    const f = filters
    const scores = ListingFilter.directoryScoreBounds(f)
    let flagsMask = GONE
    let flagsWanted = 0
    if (f.featured !== undefined) {
      flagsMask |= FEATURED
      if (f.featured) flagsWanted |= FEATURED
    }
    if (f.openTierOnly === true) {
      flagsMask |= OPEN
      flagsWanted |= OPEN
    }
    if (f.recommended === true) {
      flagsMask |= LINKED
      flagsWanted |= LINKED
    }
    let category = this.codes.category.passing(f.categories)
    // recommended: categorised, whichever category.
    if (f.recommended === true && category === ALL) category = valuesPassing(() => true)
    const atLeast = (floor: number | undefined) => floor === undefined ? ALL : valuesPassing((value) => value >= floor)
    const price = f.priceRange === undefined ? -1 : Bands.PRICE_RANGES.indexOf(f.priceRange)
    const terms: Array<TermRows> = []
    for (const term of f.q === undefined ? [] : ListingFilter.searchTerms(f.q)) {
      const rows = this.terms.get(term)
      if (rows !== undefined) terms.push(rows)
    }
    return {
      tables: {
        tld: this.codes.tld.passing(f.tld === undefined ? undefined : [f.tld]),
        category,
        source: this.codes.source.passing(f.sources),
        spam: this.codes.spam.passing(f.spam === undefined ? undefined : [f.spam]),
        price: price < 0 ? ALL : valuesPassing((value) => value === price),
        rd: f.referringDomainBands === undefined
          ? ALL
          : valuesPassing((value) => f.referringDomainBands!.includes(Bands.REFERRING_DOMAIN_BANDS[value]!)),
        score: scores === undefined || scores === null ? ALL : valuesPassing((value) => value >= scores.low && value <= scores.high),
        age: atLeast(f.ageMin),
        citability: atLeast(f.citabilityMin)
      },
      flagsMask,
      flagsWanted,
      checkedFrom: f.checkedDays === undefined ? 0 : minute(now - f.checkedDays * 86_400_000),
      visibleBefore,
      none: scores === null,
      terms
    }
  }

  /** The first position after `after` in its order (0 without one). */
  private startOf(after: Cursor.CursorPosition | undefined): number {
    if (after === undefined) return 0
    const id = idNumber(after.id)
    let low = 0
    let high = this.size
    if (after.order === "id") {
      while (low < high) {
        const mid = (low + high) >>> 1
        if (this.ids[mid]! <= id) low = mid + 1
        else high = mid
      }
      return low
    }
    const at = after.discoveredAt
    while (low < high) {
      const mid = (low + high) >>> 1
      const discovered = this.latestDiscovered[mid]!
      if (discovered > at || (discovered === at && this.ids[this.latestRow[mid]!]! <= id)) low = mid + 1
      else high = mid
    }
    return low
  }

  /**
   * The word-level tests of `test` over an order's bitmaps: one a filtered column, one a search term.
   */
  private plan(order: Order, test: Test, latest: boolean): Array<Conjunct> {
    const plan: Array<Conjunct> = []
    for (const name of CODED) {
      const table = name === "flags" ? flagsTable(test) : test.tables[name]
      const conjunct = table === ALL ? undefined : order.bitmaps!.conjunct(name, table)
      if (conjunct !== undefined) plan.push(conjunct)
    }
    for (const rows of test.terms) plan.push({ any: [latest ? rows.latest : rows.id], negated: false })
    return plan
  }

  /**
   * The first `wanted` rows after `after` (a position in `order`) that may pass `test`: 32 rows
   * at a time through the bitmaps, then each row they pass on its bytes.
   */
  scan(order: ListQuery.ListOrder, after: Cursor.CursorPosition | undefined, wanted: number, test: Test): Scan {
    const ids: Array<string> = []
    if (test.none) return { ids, lastDiscoveredAt: undefined, examined: 0, exhausted: true }
    const latest = order === "latest"
    let start = this.startOf(after)
    if (latest) {
      // Newest first: the rows the access delay hides are a prefix.
      let low = start
      let high = this.size
      while (low < high) {
        const mid = (low + high) >>> 1
        if (this.latestDiscovered[mid]! > test.visibleBefore) low = mid + 1
        else high = mid
      }
      start = low
    }
    const columns = latest ? this.byLatest : this.byId
    const plan = this.plan(columns, test, latest)
    const { age, category, citability, flags, price, rd, score, source, spam, tld } = columns.bytes
    const checked = columns.checked
    const t = test.tables
    const { checkedFrom, flagsMask, flagsWanted } = test
    const visibleMinute = minute(test.visibleBefore)
    const discovered = this.discoveredMinute
    const n = this.size
    const words = wordsOf(n)
    let last = -1
    // The position after the last row examined.
    let end = start
    for (let word = start >>> 5; word < words && ids.length < wanted; word++) {
      let bits = word === start >>> 5 ? -1 << (start & 31) : -1
      // Indexed loops: for-of here allocated its iterators at every word, a scan's main garbage.
      for (let conjunct = 0; conjunct < plan.length && bits !== 0; conjunct++) {
        const { any, negated } = plan[conjunct]!
        let union = 0
        for (let map = 0; map < any.length; map++) union |= any[map]![word]!
        bits &= negated ? ~union : union
      }
      end = Math.min(n, (word + 1) << 5)
      while (bits !== 0) {
        const at = (word << 5) + 31 - Math.clz32(bits & -bits)
        bits &= bits - 1
        if (at >= n) break
        if (
          (t.tld[tld[at]!]! & t.category[category[at]!]! & t.source[source[at]!]! & t.spam[spam[at]!]! & t.price[price[at]!]! &
              t.rd[rd[at]!]! & t.score[score[at]!]! & t.age[age[at]!]! & t.citability[citability[at]!]!) === 1 &&
          (flags[at]! & flagsMask) === flagsWanted && checked[at]! >= checkedFrom &&
          (latest || discovered[at]! <= visibleMinute)
        ) {
          last = at
          ids.push(idText(this.ids[latest ? this.latestRow[at]! : at]!))
          if (ids.length === wanted) {
            end = at + 1
            break
          }
        }
      }
    }
    const lastDiscoveredAt = latest && last >= 0 ? this.latestDiscovered[last] : undefined
    return { ids, lastDiscoveredAt, examined: end - start, exhausted: end >= n }
  }
}

/** The flags a test passes as a byte's table (whether a row is gone is left to its bytes). */
const flagsTable = (test: Test) => {
  const table = new Uint8Array(256)
  for (let value = 0; value < 256; value++) table[value] = (value & test.flagsMask & ~GONE) === test.flagsWanted ? 1 : 0
  return table
}

const orderOf = (n: number): Order => ({ bytes: bytesOf(n), checked: new Uint32Array(n) })

/**
 * The coded bytes of `from` into `to`, a column at a time: position `at` takes row `source[at]`
 * and keeps its own bytes where that is -1. Looking each column up by name at every row cost
 * most of a load.
 */
const copyBytes = (to: Order, from: Order, source: Int32Array) => {
  for (const name of CODED) {
    const into = to.bytes[name]
    const bytes = from.bytes[name]
    for (let at = 0; at < source.length; at++) {
      const row = source[at]!
      if (row >= 0) into[at] = bytes[row]!
    }
  }
}
