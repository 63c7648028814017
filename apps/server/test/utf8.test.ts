import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { utf8Of } from "../src/http/Handlers.ts"

describe("utf8Of", () => {
  it("is the UTF-8 of the pieces joined, whatever their characters and sizes", () => {
    // Whole code points: the JSON pieces are JSON.stringify output, which never ends in half a pair.
    const piece = fc.oneof(
      fc.string({ unit: "binary", maxLength: 400 }),
      fc.string({ unit: fc.constantFrom("a", "é", "€", "😀", "\u0000"), maxLength: 2000 })
    )
    fc.assert(fc.property(fc.array(piece, { maxLength: 20 }), (pieces) => {
      assert.deepStrictEqual(utf8Of(pieces), new TextEncoder().encode(pieces.join("")))
    }), { numRuns: 500 })
  })
})
