/** Nearest-rank percentile (`p` from 0 to 1) of `sorted` values, ascending; 0 when there are none. */
export const percentileOf = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!
