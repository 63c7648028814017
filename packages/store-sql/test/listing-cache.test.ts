import type { Listing } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import * as ListingCache from "../src/ListingCache.ts"

/*
 * The row cache's promise (ListingCache): `get` gives back only a record interned at exactly
 * that id and version, the same object each time; it holds at most its capacity; and a record
 * used within the last half-capacity insertions is still there.
 */

const record = (id: string, updatedAt: number): Listing.ListingRecord => ({ ...Fixtures.listingInput(id), updatedAt })

describe("ListingCache", () => {
  it("gets only what was interned at that version, and keeps what was used recently", () => {
    const capacity = 8
    const op = fc.record({ id: fc.integer({ min: 0, max: 20 }), version: fc.integer({ min: 0, max: 3 }), intern: fc.boolean() })
    fc.assert(fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
      const cache = ListingCache.make(capacity)
      const interned = new Map<string, Listing.ListingRecord>()
      /** Ids by the position of their last use (an intern, or a get that found it). */
      const lastUse: Array<string> = []
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
          lastUse.push(id)
        } else {
          const found = cache.get(id, version)
          if (found !== undefined) {
            assert.strictEqual(found.id, id)
            assert.strictEqual(found.updatedAt, version)
            assert.strictEqual(found, interned.get(key))
            lastUse.push(id)
          }
        }
      }
      // The record of the last use is found again if it was interned at the version asked.
      const lastOp = ops.at(-1)
      if (lastOp?.intern === true) {
        const id = `ID${String(lastOp.id).padStart(6, "0")}`
        assert.strictEqual(cache.get(id, lastOp.version), interned.get(`${id}@${lastOp.version}`))
      }
    }))
  })

  it("holds at most its capacity, and a record interned within the last half-capacity insertions", () => {
    const cache = ListingCache.make(10)
    const records = Array.from({ length: 100 }, (_, i) => cache.intern(record(`ID${String(i).padStart(6, "0")}`, 1)))
    const held = records.filter((r) => cache.get(r.id, 1) !== undefined)
    assert.isAtMost(held.length, 10)
    for (const r of records.slice(-5)) assert.strictEqual(cache.get(r.id, 1), r)
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
    // Two more generations of two: the first is dropped, as it would be had nobody asked.
    for (let i = 3; i <= 6; i++) {
      cache.intern(record(`ID00000${i}`, 1))
      cache.has(first.id)
    }
    assert.isFalse(cache.has(first.id))
    assert.isTrue(cache.has("ID000006"))
  })
})
