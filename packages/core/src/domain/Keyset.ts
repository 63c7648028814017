/*
 * Keyset paging for the operator's lists: rows after a named row, in an order that never
 * changes for a row (creation time, then id), so a page boundary does not move as rows are added.
 */

export interface KeysetRequest {
  /** The id of the last row of the previous page; `undefined` for the first page. */
  readonly after: string | undefined
  readonly limit: number
}

export interface KeysetPage<A> {
  readonly data: ReadonlyArray<A>
  /** What to pass as `after` for the next page; `null` on the last page. */
  readonly next: string | null
}

/** The most rows an operator's page holds. */
export const MAX_LIMIT = 1000

/** A page from rows read with one more than `limit`: the extra row only says there is more. */
export const pageOf = <A>(rows: ReadonlyArray<A>, limit: number, idOf: (row: A) => string): KeysetPage<A> => {
  const data = rows.slice(0, limit)
  return { data, next: rows.length > limit && data.length > 0 ? idOf(data[data.length - 1]!) : null }
}

/** A store's window over rows already sorted in keyset order: those after the row `after` names. */
export const window = <A>(sorted: ReadonlyArray<A>, request: KeysetRequest, idOf: (row: A) => string): ReadonlyArray<A> => {
  if (request.after === undefined) return sorted.slice(0, request.limit)
  const at = sorted.findIndex((row) => idOf(row) === request.after)
  return at < 0 ? [] : sorted.slice(at + 1, at + 1 + request.limit)
}
