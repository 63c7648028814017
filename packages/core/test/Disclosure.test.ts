import { Disclosure, Plan } from "@dropshelf/core"
import { assert, describe, it } from "@effect/vitest"

/*
 * The spec's rules for `domain`, written out case by case:
 *   1. another account's hold (`other`) hides the name, on every plan and tier;
 *   2. a plan with a monthly reveal ceiling (free, pro) hides an unrevealed, non-`open` name;
 *   3. a plan without a ceiling (business) is subject to rule 1 only;
 *   4. an `open` name is shown unless rule 1 applies.
 * Columns: free unrevealed, free revealed, pro unrevealed, pro revealed,
 * business unrevealed, business revealed. `T` = domain populated, `F` = null.
 */
const T = true
const F = false

type Row = readonly [
  holdState: "none" | "mine" | "other",
  tier: "featured" | "regular" | "open",
  expected: readonly [boolean, boolean, boolean, boolean, boolean, boolean]
]

const table: ReadonlyArray<Row> = [
  ["none", "featured", [F, T, F, T, T, T]],
  ["none", "regular", [F, T, F, T, T, T]],
  ["none", "open", [T, T, T, T, T, T]],
  ["mine", "featured", [F, T, F, T, T, T]],
  ["mine", "regular", [F, T, F, T, T, T]],
  ["mine", "open", [T, T, T, T, T, T]],
  ["other", "featured", [F, F, F, F, F, F]],
  ["other", "regular", [F, F, F, F, F, F]],
  ["other", "open", [F, F, F, F, F, F]]
]

const columns = [
  ["free", false],
  ["free", true],
  ["pro", false],
  ["pro", true],
  ["business", false],
  ["business", true]
] as const

const cases = table.flatMap(([holdState, tier, expected]) =>
  columns.map(([plan, revealed], column) => ({ plan, tier, holdState, revealed, disclosed: expected[column]! }))
)

describe("Disclosure.isNameDisclosed", () => {
  it("covers every plan × tier × hold state × revealed combination", () => {
    assert.strictEqual(cases.length, Object.keys(Plan.Plans).length * 3 * 3 * 2)
  })

  it.each(cases)(
    "$plan, $tier, hold $holdState, revealed $revealed → disclosed $disclosed",
    ({ disclosed, holdState, plan, revealed, tier }) => {
      assert.strictEqual(
        Disclosure.isNameDisclosed({ plan: Plan.Plans[plan], tier, holdState, revealed }),
        disclosed
      )
    }
  )
})
