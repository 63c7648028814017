import type { Listing } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import * as ListingCache from "../src/ListingCache.ts"

/*
 * The row cache's promise (ListingCache): `get` gives back only a record interned at exactly
 * that id and version, the same object each time; it holds at most its capacity; a record read
 * again outlives records read once.
 */

const record = (id: string, updatedAt: number): Listing.ListingRecord => ({ ...Fixtures.listingInput(id), updatedAt })

describe("ListingCache", () => {
  it("gets only what was interned at that version, the last interned among it, and holds at most its capacity", () => {
    const capacity = 8
    const op = fc.record({ id: fc.integer({ min: 0, max: 20 }), version: fc.integer({ min: 0, max: 3 }), intern: fc.boolean() })
    fc.assert(fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
      const cache = ListingCache.make(capacity)
      const interned = new Map<string, Listing.ListingRecord>()
      for (const { id: n, intern, version } of ops) {
        const id = `ID${String(n).padStart(6, "0")}`
        const key = `${id}@${version}`
        if (intern) {
          const given = record(id, version)
          const kept = cache.intern(given)
          const known = interned.get(key)
          // Either the object interned before at this version, or the one given.
          assert.isTrue(kept === given || kept === known)
          interned.set(key, kept)
        } else {
          const found = cache.get(id, version)
          if (found !== undefined) {
            assert.strictEqual(found.id, id)
            assert.strictEqual(found.updatedAt, version)
            assert.strictEqual(found, interned.get(key))
          }
        }
      }
      // The record of the last use is found again if it was interned at the version asked.
      const lastOp = ops.at(-1)
      if (lastOp?.intern === true) {
        const id = `ID${String(lastOp.id).padStart(6, "0")}`
        assert.strictEqual(cache.get(id, lastOp.version), interned.get(`${id}@${lastOp.version}`))
      }
      const held = Array.from({ length: 21 }, (_, n) => `ID${String(n).padStart(6, "0")}`).filter(cache.has)
      assert.isAtMost(held.length, capacity)
    }))
  })

  it("holds the last `capacity` records interned when none is read again", () => {
    const cache = ListingCache.make(10)
    const records = Array.from({ length: 100 }, (_, i) => cache.intern(record(`ID${String(i).padStart(6, "0")}`, 1)))
    assert.deepStrictEqual(records.filter((r) => cache.has(r.id)), records.slice(-10))
  })

  it("keeps a record read again over records read once since", () => {
    const cache = ListingCache.make(4)
    const [again, ...once] = ["A", "B", "C", "D"].map((id) => cache.intern(record(`ID00000${id}`, 1)))
    assert.strictEqual(cache.get(again!.id, 1), again)
    // A walk of three more: recency alone would drop the oldest, the one read again.
    for (const id of ["E", "F", "G"]) cache.intern(record(`ID00000${id}`, 1))
    assert.strictEqual(cache.get(again!.id, 1), again)
    for (const r of once) assert.isFalse(cache.has(r.id))
  })

  it("keeps none with capacity 0", () => {
    const cache = ListingCache.make(0)
    const r = record("ID000001", 1)
    assert.strictEqual(cache.intern(r), r)
    assert.isUndefined(cache.get("ID000001", 1))
    assert.isFalse(cache.has("ID000001"))
  })

  it("has an id at any version held, and asking does not keep it longer", () => {
    const cache = ListingCache.make(4)
    const first = cache.intern(record("ID000001", 1))
    cache.intern(record("ID000002", 1))
    assert.isTrue(cache.has(first.id))
    assert.isFalse(cache.has("ID000009"))
    // Four more records: the first is dropped, as it would be had nobody asked.
    for (let i = 3; i <= 6; i++) {
      cache.intern(record(`ID00000${i}`, 1))
      cache.has(first.id)
    }
    assert.isFalse(cache.has(first.id))
    assert.isTrue(cache.has("ID000006"))
  })
})
