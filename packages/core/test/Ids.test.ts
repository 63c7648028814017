import { describe, expect, it } from "@effect/vitest"
import { Ids } from "@dropshelf/core"
import fc from "fast-check"

describe("randomListingId", () => {
  it("discards bytes that would bias the alphabet and asks for more", () => {
    const chunks = [new Uint8Array([255, 248, 0, 1]), new Uint8Array([250, 2, 3, 4, 5, 6, 7, 8])]
    let calls = 0
    const id = Ids.randomListingId(() => chunks[calls++]!)
    expect(id).toBe("ABCDEFGH")
    expect(calls).toBe(2)
  })

  it("always gives 8 characters of A-Z, a-z, 0-9, with every byte below 248 mapping to one character", () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 8, maxLength: 8, max: 247 }), (bytes) => {
      const id = Ids.randomListingId(() => bytes)
      expect(Ids.isListingId(id)).toBe(true)
      expect([...id].map((char) => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".indexOf(char)))
        .toEqual([...bytes].map((byte) => byte % 62))
    }))
  })
})
