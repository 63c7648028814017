/** Ids in code-unit order, the order the SQL adapter's `COLLATE "C"` id columns give. */
export const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
