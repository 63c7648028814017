import { ListQuery, Time } from "@dropshelf/core"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"

/*
 * A `since` naming a day its month does not have is not an ISO 8601 instant. Convention 7:
 * the API answers 400 naming `since` rather than guessing. Date.parse rolls such a day
 * over into the next month (2026-02-30 becomes 2026-03-02), so a feed consumer who mistyped
 * the watermark would silently skip two days of changes.
 */
describe("impossible calendar dates", () => {
  it.each([
    "2026-02-29T00:00:00.000Z",
    "2026-02-30T00:00:00.000Z",
    "2026-02-31T00:00:00Z",
    "2026-04-31T12:00:00.000Z",
    "2026-06-31T00:00:00+02:00",
    "2026-11-00T00:00:00Z",
    "2026-00-10T00:00:00Z"
  ])("refuses since=%s naming since", (text) => {
    const result = ListQuery.decodeListQuery({ since: text })
    assert.isTrue(Result.isFailure(result), `${text} was read as ${Result.isSuccess(result) ? Time.toIso(result.success.since!) : ""}`)
    if (Result.isFailure(result)) assert.strictEqual(result.failure.parameter, "since")
  })

  it.each(["2028-02-29T00:00:00.000Z", "2026-01-31T23:59:59.999Z", "2026-12-31T00:00:00Z"])(
    "still reads the real date %s",
    (text) => {
      assert.strictEqual(Time.parseIsoInstant(text), Date.parse(text))
    }
  )
})
