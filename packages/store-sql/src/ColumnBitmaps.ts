/*
 * Bitmaps over one order of the filter columns (FilterColumns.ts): each byte column's values
 * fall into slots, and each slot has a bit a row. A scan then tests 32 rows a word, ORing the
 * slots a filter passes and ANDing the filtered columns, and tests on their bytes only the rows
 * every bitmap passes. Slots may be coarser than the bytes (values in steps, the rarest values
 * together): the bytes decide. docs/decisions/0516-filter-columns.md.
 */

/** A column's slot for each of its 256 byte values. */
export type SlotTable = Uint8Array

/** One bitmap a slot, allocated when a row first falls into it. */
type Column = Array<Uint32Array | undefined>

/** Rows a word of bits: a bitmap of n rows has `wordsOf(n)` words. */
export const wordsOf = (n: number) => (n + 31) >>> 5

export const bitOf = (words: Uint32Array, at: number) => (words[at >>> 5]! >>> (at & 31)) & 1

export const setBit = (words: Uint32Array, at: number, on: boolean) => {
  if (on) words[at >>> 5]! |= 1 << (at & 31)
  else words[at >>> 5]! &= ~(1 << (at & 31))
}

/** Rows one column's filter passes: in one of `any` (or, negated, in none of them). */
export interface Conjunct {
  readonly any: ReadonlyArray<Uint32Array>
  readonly negated: boolean
}

export class Bitmaps<Name extends string> {
  private readonly words: number
  private readonly slots: ReadonlyMap<Name, SlotTable>
  private readonly bytes: { readonly [name in Name]: Uint8Array }
  private readonly columns = new Map<Name, Column>()

  /** The first `size` rows of `bytes` indexed by the columns of `slots`. */
  constructor(size: number, slots: ReadonlyMap<Name, SlotTable>, bytes: { readonly [name in Name]: Uint8Array }) {
    this.words = wordsOf(size)
    this.slots = slots
    this.bytes = bytes
    for (const [name, table] of slots) {
      const column: Column = []
      const values = bytes[name]
      for (let at = 0; at < size; at++) {
        const slot = table[values[at]!]!
        const words = column[slot] ??= new Uint32Array(this.words)
        words[at >>> 5]! |= 1 << (at & 31)
      }
      this.columns.set(name, column)
    }
  }

  /** Sets (or clears) the row at `at` in the slots of its bytes as they are now. */
  mark(at: number, on: boolean) {
    for (const [name, table] of this.slots) {
      const column = this.columns.get(name)!
      const slot = table[this.bytes[name][at]!]!
      setBit(column[slot] ??= new Uint32Array(this.words), at, on)
    }
  }

  /**
   * The column's bitmaps a row passing `table` (a byte's pass, as a scan tests it) is in; none
   * when every row may pass. Given as the slots passed, or as those not passed when fewer.
   */
  conjunct(name: Name, table: Uint8Array): Conjunct | undefined {
    const slots = this.slots.get(name)!
    const column = this.columns.get(name)!
    const passed = new Set<number>()
    for (let value = 0; value < 256; value++) if (table[value] === 1) passed.add(slots[value]!)
    const inside: Array<Uint32Array> = []
    const outside: Array<Uint32Array> = []
    column.forEach((words, slot) => (passed.has(slot) ? inside : outside).push(words!))
    if (outside.length === 0) return undefined
    return inside.length <= outside.length ? { any: inside, negated: false } : { any: outside, negated: true }
  }
}

/** Slots of a column tested for equality: each of its first `distinct` values alone, the rest together. */
export const equalitySlots = (distinct: number): SlotTable => {
  const table = new Uint8Array(256)
  for (let value = 0; value < 256; value++) table[value] = Math.min(value, distinct)
  return table
}

/** Slots of a column tested by range: values `step` at a time up to `largest`, then each byte above alone. */
export const rangeSlots = (step: number, largest: number): SlotTable => {
  const table = new Uint8Array(256)
  const steps = Math.floor(largest / step) + 1
  for (let value = 0; value < 256; value++) table[value] = value <= largest ? Math.floor(value / step) : steps + value - largest - 1
  return table
}

/** Slots of a byte of flags: the combination of the bits of `mask`. */
export const flagSlots = (mask: number): SlotTable => {
  const table = new Uint8Array(256)
  for (let value = 0; value < 256; value++) table[value] = value & mask
  return table
}
