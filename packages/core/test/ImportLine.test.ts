import { describe, expect, it } from "@effect/vitest"
import { ImportLine } from "@dropshelf/core"
import { Result } from "effect"

const NOW = Date.UTC(2026, 10, 1)
const bytes = () => new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7])
const decode = (value: unknown) => ImportLine.importLineToInput(value, NOW, bytes)
const reason = (value: unknown) => {
  const result = decode(value)
  return Result.isFailure(result) ? result.failure : undefined
}

describe("ImportLine", () => {
  it("turns a minimal line into a listing: active, discovered now, masked, with a generated id", () => {
    const result = decode({ domain: "bestcoffeeshop.com", tier: "regular" })
    expect(Result.isSuccess(result)).toBe(true)
    if (!Result.isSuccess(result)) return
    expect(result.success).toMatchObject({
      id: "ABCDEFGH",
      status: "active",
      discoveredAt: NOW,
      maskHint: "b*********shop.com",
      wordCount: 3,
      estimatedValueCents: null,
      linkedBy: [],
      agentCitability: null
    })
  })

  it("keeps exact figures and the given id and dates", () => {
    const result = decode({
      id: "Ab12Cd34",
      domain: "green-energy-hub.co.uk",
      tier: "open",
      discovered_at: "2026-01-02T03:04:05.006Z",
      backlinks: 1234,
      directory_score: 57,
      agent_citability: { score: 3, sources: [{ url: "https://example.org" }] }
    })
    expect(Result.isSuccess(result) && result.success).toMatchObject({
      id: "Ab12Cd34",
      discoveredAt: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
      backlinks: 1234,
      directoryScore: 57,
      maskHint: "g****-******-hub.co.uk"
    })
  })

  it.each([
    [{ tier: "open" }, "domain"],
    [{ domain: "Example.com", tier: "open" }, "lower case"],
    [{ domain: "www.example.com", tier: "open" }, "registrable"],
    [{ domain: "co.uk", tier: "open" }, "registrable"],
    [{ domain: "example.com", tier: "gold" }, "tier"],
    [{ domain: "example.com", tier: "open", status: "delisted" }, "status"],
    [{ domain: "example.com", tier: "open", id: "short" }, "8 characters"],
    [{ domain: "example.com", tier: "open", backlinks: -1 }, "backlinks"],
    [{ domain: "example.com", tier: "open", backlinks: 1.5 }, "backlinks"],
    [{ domain: "example.com", tier: "open", domain_authority: 101 }, "domain_authority"],
    [{ domain: "example.com", tier: "open", age_years: 2 ** 31 }, "age_years"],
    [{ domain: "example.com", tier: "open", featured_rank: 2 ** 31 }, "featured_rank"],
    [{ domain: "example.com", tier: "open", featured_rank: -(2 ** 31) - 1 }, "featured_rank"],
    [{ domain: "example.com", tier: "open", agent_citability: { score: 2 ** 31, sources: [] } }, "score"],
    [{ domain: "example.com", tier: "open", backlinks: 2 ** 53 }, "backlinks"],
    [{ domain: "example.com", tier: "open", estimated_value_cents: 1e300 }, "estimated_value_cents"],
    [{ domain: "example.com", tier: "open", discovered_at: "2026-02-30T00:00:00Z" }, "discovered_at"],
    [{ domain: "example.com", tier: "open", colour: "red" }, "colour"],
    [{ domain: "example.com", tier: "open", blurb: "a\u0000b" }, "NUL"],
    [{ domain: "example.com", tier: "open", agent_citability: { score: 1, sources: ["\u0000"] } }, "NUL"],
    [{ domain: "example.com", tier: "open", blurb: "a\ud800b" }, "lone surrogate"],
    [{ domain: "example.com", tier: "open", tags: ["ok", "\udfff"] }, "lone surrogate"],
    ["not an object", ""]
  ])("refuses %j with a reason mentioning %s", (value, mention) => {
    const text = reason(value)
    expect(text).toBeDefined()
    expect(text).not.toContain("\n")
    expect(text!.toLowerCase()).toContain(mention.toLowerCase())
  })
})
