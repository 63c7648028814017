import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { Keyset } from "@dropshelf/core"

describe("Keyset paging", () => {
  it("walking every page, whatever the limit, yields each row once and in order, and stops", () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 60 }),
      fc.integer({ min: 1, max: 12 }),
      (ids, limit) => {
        const sorted = [...ids].sort()
        const seen: Array<string> = []
        let after: string | undefined
        for (let pages = 0; pages <= sorted.length + 1; pages++) {
          const rows = Keyset.window(sorted, { after, limit: limit + 1 }, (id) => id)
          const page = Keyset.pageOf(rows, limit, (id) => id)
          expect(page.data.length).toBeLessThanOrEqual(limit)
          seen.push(...page.data)
          if (page.next === null) break
          expect(page.data.length).toBe(limit)
          after = page.next
        }
        expect(seen).toEqual(sorted)
      }
    ))
  })

  it("an anchor that names no row is an empty page, never the first", () => {
    expect(Keyset.window(["a", "b"], { after: "zz", limit: 5 }, (id) => id)).toEqual([])
    expect(Keyset.pageOf([], 5, (id: string) => id)).toEqual({ data: [], next: null })
  })
})
