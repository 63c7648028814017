import { Bands, Errors, ListQuery } from "@dropshelf/core"
import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import fc from "fast-check"

/*
 * GET /domains query parameters (spec, general conventions 7-8 and the parameter table):
 * a documented parameter the API cannot honour is refused naming the parameter and what it
 * accepts, never answered with a wider page; undocumented parameters are ignored.
 */

const decoded = (raw: ListQuery.RawQuery): ListQuery.ListQuery => {
  const result = ListQuery.decodeListQuery(raw)
  if (Result.isFailure(result)) assert.fail(`expected ${JSON.stringify(raw)} to decode, got ${result.failure.message}`)
  return result.success
}

const refusal = (raw: ListQuery.RawQuery): Errors.InvalidRequest => {
  const result = ListQuery.decodeListQuery(raw)
  if (Result.isSuccess(result)) assert.fail(`expected ${JSON.stringify(raw)} to be refused`)
  assert.instanceOf(result.failure, Errors.InvalidRequest)
  return result.failure
}

const defaults: ListQuery.ListQuery = { limit: 50, order: "id", cursor: undefined, since: undefined, filters: {} }

describe("decodeListQuery defaults", () => {
  it("reads an empty query as the first 50 listings by ascending id, unfiltered", () => {
    assert.deepStrictEqual(decoded({}), defaults)
  })

  it("ignores undocumented parameters whatever their values", () => {
    const undocumented = fc
      .string({ minLength: 1, maxLength: 12 })
      .filter((key) => !(ListQuery.LIST_PARAMETERS as ReadonlyArray<string>).includes(key))
    const value = fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 }))
    fc.assert(fc.property(fc.dictionary(undocumented, value), (raw) => {
      assert.deepStrictEqual(decoded(raw), defaults)
    }))
  })

  it("ignores a parameter whose name differs from a documented one only in case", () => {
    assert.deepStrictEqual(decoded({ Limit: "abc", SPAM: "high", Sort: "oldest" }), defaults)
  })
})

describe("limit", () => {
  it.each([
    ["1", 1],
    ["50", 50],
    ["250", 250],
    ["0", 1],
    ["-5", 1],
    ["251", 250],
    ["99999999999999999999", 250]
  ])("reads limit=%s as %i (out of range is clamped to 1..250)", (text, expected) => {
    assert.strictEqual(decoded({ limit: text }).limit, expected)
  })

  it("clamps every integer into 1..250 and keeps those already inside", () => {
    fc.assert(fc.property(fc.integer({ min: -1_000_000, max: 1_000_000 }), (n) => {
      assert.strictEqual(decoded({ limit: String(n) }).limit, Math.min(250, Math.max(1, n)))
    }))
  })

  it.each(["", "abc", "1.5", "1e3", " 5", "0x10", "ten"])("refuses limit=%j naming limit", (text) => {
    const error = refusal({ limit: text })
    assert.strictEqual(error.parameter, "limit")
    assert.include(error.message, "limit")
    assert.include(error.message, "integer")
  })
})

describe("enumerated parameters", () => {
  const enumerated: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["sort", ["latest"]],
    ["priceRange", Bands.PRICE_RANGES],
    ["spam", ["low", "moderate"]],
    ["tier", ["open"]],
    ["featured", ["true", "false"]],
    ["recommended", ["true", "false"]]
  ]

  for (const [parameter, accepted] of enumerated) {
    it(`${parameter} accepts ${accepted.join(", ")}`, () => {
      for (const value of accepted) assert.isTrue(Result.isSuccess(ListQuery.decodeListQuery({ [parameter]: value })))
    })

    it(`${parameter} refuses anything else, naming ${parameter} and listing what it accepts`, () => {
      fc.assert(fc.property(fc.string().filter((value) => !accepted.includes(value)), (value) => {
        const error = refusal({ [parameter]: value })
        assert.strictEqual(error.parameter, parameter)
        assert.include(error.message, parameter)
        assert.include(error.message, accepted.join(", "))
      }))
    })
  }

  it("refuses spam=high with a message naming spam and listing low, moderate", () => {
    const error = refusal({ spam: "high" })
    assert.strictEqual(error.parameter, "spam")
    assert.include(error.message, "spam")
    assert.include(error.message, "low, moderate")
  })

  it("passes the decoded values to the filters", () => {
    const query = decoded({ priceRange: "100-249", spam: "moderate", tier: "open", featured: "false", recommended: "true" })
    assert.deepStrictEqual(query.filters, {
      priceRange: "100-249",
      spam: "moderate",
      openTierOnly: true,
      featured: false,
      recommended: true
    })
  })

  it("reads sort=latest as newest first", () => {
    assert.strictEqual(decoded({ sort: "latest" }).order, "latest")
  })

  it.each(["Open", "regular", "featured", "OPEN"])("refuses tier=%s: only open can be asked for", (value) => {
    assert.strictEqual(refusal({ tier: value }).parameter, "tier")
  })

  it.each(["TRUE", "1", "yes", ""])("refuses featured=%j: booleans are only true or false", (value) => {
    assert.strictEqual(refusal({ featured: value }).parameter, "featured")
  })
})

describe("since", () => {
  it.each([
    ["2026-11-01T00:00:00.000Z", Date.UTC(2026, 10, 1)],
    ["2026-11-01T02:00:00+02:00", Date.UTC(2026, 10, 1)],
    ["2026-11-01T00:00Z", Date.UTC(2026, 10, 1)]
  ])("reads since=%s as that instant", (text, instant) => {
    assert.strictEqual(decoded({ since: text }).since, instant)
  })

  it.each(["", "yesterday", "2026-11-01", "2026-11-01T00:00:00", "1730419200000", "2026-13-01T00:00:00Z"])(
    "refuses since=%j naming since",
    (text) => {
      const error = refusal({ since: text })
      assert.strictEqual(error.parameter, "since")
      assert.include(error.message, "since")
    }
  )

  it("refuses sort=latest with since, naming both", () => {
    const error = refusal({ sort: "latest", since: "2026-11-01T00:00:00.000Z" })
    assert.include(error.parameter, "sort")
    assert.include(error.parameter, "since")
    assert.include(error.message, "sort")
    assert.include(error.message, "since")
  })
})

describe("rd", () => {
  it("accepts every published referring-domains band, alone and comma-separated", () => {
    for (const band of Bands.REFERRING_DOMAIN_BANDS) {
      assert.deepStrictEqual(decoded({ rd: band }).filters.referringDomainBands, [band])
    }
    assert.deepStrictEqual(decoded({ rd: "0-4,50-99" }).filters.referringDomainBands, ["0-4", "50-99"])
  })

  it.each(["0-5", "1000", "huge", "0-4,bogus", ""])("refuses rd=%j naming rd and the bands it accepts", (text) => {
    const error = refusal({ rd: text })
    assert.strictEqual(error.parameter, "rd")
    assert.include(error.message, Bands.REFERRING_DOMAIN_BANDS.join(", "))
  })
})

describe("tld", () => {
  it.each([
    ["com", "com"],
    ["COM", "com"],
    ["co.uk", "co.uk"],
    ["Co.UK", "co.uk"]
  ])("reads tld=%s as %s", (text, expected) => {
    assert.strictEqual(decoded({ tld: text }).filters.tld, expected)
  })

  it.each([".com", ".co.uk", "", "co..uk", "com.", "-com", "c m"])("refuses tld=%j naming tld", (text) => {
    const error = refusal({ tld: text })
    assert.strictEqual(error.parameter, "tld")
    assert.include(error.message, "tld")
  })
})

describe("q", () => {
  it("accepts 1 to 200 characters of search text", () => {
    assert.strictEqual(decoded({ q: "a" }).filters.q, "a")
    assert.strictEqual(decoded({ q: "x".repeat(200) }).filters.q, "x".repeat(200))
  })

  it.each(["", "   ", "x".repeat(201)])("refuses q of %j characters naming q", (text) => {
    const error = refusal({ q: text })
    assert.strictEqual(error.parameter, "q")
    assert.include(error.message, "200")
  })

  it("refuses search text holding the NUL character, which no listing holds, naming q", () => {
    fc.assert(fc.property(fc.string(), fc.string(), (before, after) => {
      fc.pre(`${before}\u0000${after}`.trim().length <= 200)
      const error = refusal({ q: `${before}\u0000${after}` })
      assert.strictEqual(error.parameter, "q")
      assert.include(error.message, "NUL")
    }))
  })
})

describe("text that cannot be stored", () => {
  it("is refused naming the parameter, whichever text parameter carries it, NUL or lone surrogate", () => {
    const parameters = ["cursor", "limit", "since", "q", "tld", "category", "source", "rd", "ageMin", "checkedDays", "citabilityMin", "rsMin", "rsMax"]
    fc.assert(fc.property(
      fc.constantFrom(...parameters),
      fc.string(),
      fc.constantFrom(["\u0000", "NUL"], ["\ud800", "lone surrogate"], ["\udfff", "lone surrogate"]),
      (parameter, text, [flaw, named]) => {
        const error = refusal({ [parameter]: `${text}${flaw}` })
        assert.strictEqual(error.parameter, parameter)
        assert.include(error.message, named)
      }
    ))
  })
})

describe("category and source", () => {
  it("read comma-separated codes", () => {
    assert.deepStrictEqual(decoded({ category: "tech,food" }).filters.categories, ["tech", "food"])
    assert.deepStrictEqual(decoded({ source: "auction" }).filters.sources, ["auction"])
    assert.deepStrictEqual(decoded({ source: "auction,drop-list" }).filters.sources, ["auction", "drop-list"])
  })

  it.each([
    ["category", ""],
    ["category", "tech,,food"],
    ["category", "tech food"],
    ["source", "a/b"],
    ["source", ","]
  ])("refuses %s=%j naming the parameter", (parameter, text) => {
    assert.strictEqual(refusal({ [parameter]: text }).parameter, parameter)
  })
})

describe("integer filters", () => {
  it.each([
    ["ageMin", "3", 3],
    ["checkedDays", "30", 30],
    ["citabilityMin", "10", 10],
    ["rsMin", "40", 40],
    ["rsMax", "90", 90]
  ] as const)("reads %s=%s", (parameter, text, expected) => {
    assert.strictEqual(decoded({ [parameter]: text }).filters[parameter], expected)
  })

  it.each([
    ["ageMin", "-1"],
    ["ageMin", "old"],
    ["checkedDays", "0"],
    ["citabilityMin", "101"],
    ["rsMin", "1.5"],
    ["rsMax", ""]
  ])("refuses %s=%j naming it", (parameter, text) => {
    const error = refusal({ [parameter]: text })
    assert.strictEqual(error.parameter, parameter)
    assert.include(error.message, parameter)
  })
})

describe("repeated and empty values", () => {
  it("refuses any documented parameter given more than once", () => {
    for (const parameter of ListQuery.LIST_PARAMETERS) {
      const error = refusal({ [parameter]: ["1", "2"] })
      assert.strictEqual(error.parameter, parameter)
      assert.include(error.message, parameter)
    }
  })

  it("reads a documented parameter given once in array form like the plain value", () => {
    assert.strictEqual(decoded({ limit: ["20"] }).limit, 20)
  })

  it("refuses an empty cursor naming cursor", () => {
    assert.strictEqual(refusal({ cursor: "" }).parameter, "cursor")
  })

  it("passes a non-empty cursor on for the codec to verify", () => {
    assert.strictEqual(decoded({ cursor: "abc.def" }).cursor, "abc.def")
  })
})

describe("ListQuerySchema", () => {
  const valid = fc.record({
    limit: fc.integer({ min: 1, max: 250 }).map(String),
    sort: fc.constant("latest"),
    cursor: fc.string({ minLength: 1, maxLength: 12 }),
    ageMin: fc.integer({ min: 0, max: 1000 }).map(String),
    category: fc.constantFrom("tech", "food,tech"),
    featured: fc.constantFrom("true", "false"),
    priceRange: fc.constantFrom(...Bands.PRICE_RANGES),
    q: fc.constantFrom("coffee", "best shop"),
    rd: fc.constantFrom(...Bands.REFERRING_DOMAIN_BANDS),
    recommended: fc.constant("true"),
    rsMin: fc.integer({ min: 0, max: 100 }).map(String),
    source: fc.constantFrom("auction", "drop-list"),
    spam: fc.constantFrom("low", "moderate"),
    tier: fc.constant("open"),
    tld: fc.constantFrom("com", "co.uk")
  }, { requiredKeys: [] })

  it("encodes a decoded query back to parameters that decode to the same query (a typed client's request)", () => {
    fc.assert(fc.property(valid, (raw) => {
      const query = decoded(raw)
      const encoded = Schema.encodeSync(ListQuery.ListQuerySchema)(query)
      assert.deepStrictEqual(decoded(encoded as ListQuery.RawQuery), query)
    }))
  })
})
