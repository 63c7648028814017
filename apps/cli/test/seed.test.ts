import { Bands, ImportLine } from "@dropshelf/core"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { prng, seedLines } from "../src/Seed.ts"

/** The synthetic directory: same seed, same directory; every line valid; every kind of row present. */

const NOW = Date.parse("2026-11-22T12:00:00Z")
const DAY = 86_400_000
const take = (count: number, seed: number, now = NOW) => [...seedLines(count, seed, now)]

describe("seed", () => {
  it("the same seed gives the same ids, names and figures, whatever the day", () => {
    const a = take(500, 42)
    const b = take(500, 42, NOW + 3 * DAY)
    expect(b.map((line) => line.id)).toEqual(a.map((line) => line.id))
    expect(b.map((line) => line.domain)).toEqual(a.map((line) => line.domain))
    expect(b.map((line) => line.estimated_value_cents)).toEqual(a.map((line) => line.estimated_value_cents))
  })

  it("another seed gives another directory", () => {
    const a = new Set(take(200, 1).map((line) => line.id))
    const b = take(200, 2).map((line) => line.id)
    expect(b.filter((id) => a.has(id)).length).toBeLessThan(5)
  })

  it("a prefix of a longer run is the shorter run", () => {
    expect(take(50, 9).map((line) => line.id)).toEqual(take(120, 9).slice(0, 50).map((line) => line.id))
  })

  it("the prng is stable across platforms and versions", () => {
    const random = prng(1)
    expect([random(), random(), random()].map((x) => x.toFixed(6))).toEqual(
      (() => {
        const again = prng(1)
        return [again(), again(), again()].map((x) => x.toFixed(6))
      })()
    )
  })

  it("every line is a valid import line, ids and names unique", () => {
    const lines = take(3000, 5)
    expect(new Set(lines.map((line) => line.id)).size).toBe(lines.length)
    expect(new Set(lines.map((line) => line.domain)).size).toBe(lines.length)
    for (const line of lines) {
      const decoded = ImportLine.importLineToInput(line, NOW, () => {
        throw new Error("seed lines carry ids")
      })
      if (Result.isFailure(decoded)) throw new Error(`${JSON.stringify(line)}: ${decoded.failure}`)
    }
  })

  it("covers every tier, TLD, price band, spam level, missing metrics and the access-delay windows", () => {
    const lines = take(5000, 1)
    const seen = (pick: (line: (typeof lines)[number]) => unknown) => new Set(lines.map(pick))
    expect(seen((line) => line.tier)).toEqual(new Set(["featured", "regular", "open"]))
    expect(seen((line) => line.domain.slice(line.domain.indexOf(".") + 1))).toEqual(new Set(["com", "net", "org", "io", "co", "co.uk"]))
    expect(seen((line) => line.spam)).toEqual(new Set(["low", "moderate", undefined]))
    const bands = seen((line) => line.estimated_value_cents === undefined ? "reference" : Bands.priceRangeOf(line.estimated_value_cents))
    for (const band of ["under-100", "100-249", "250-999", "1000-2499", "2500-plus", "reference"]) expect(bands).toContain(band)
    expect(seen((line) => line.category).size).toBeGreaterThanOrEqual(13)
    expect(lines.some((line) => line.backlinks === null)).toBe(true)
    expect(lines.some((line) => line.domain_authority === null)).toBe(true)
    expect(lines.some((line) => line.age_years === null)).toBe(true)
    expect(lines.some((line) => line.agent_citability === null)).toBe(true)
    expect(lines.some((line) => line.agent_citability !== null && line.agent_citability !== undefined)).toBe(true)
    expect(lines.some((line) => typeof line.featured_rank === "number")).toBe(true)
    expect(lines.some((line) => (line.linked_by ?? []).length > 0)).toBe(true)
    expect(lines.some((line) => line.domain.includes("-"))).toBe(true)
    expect(lines.some((line) => /\d/.test(line.domain))).toBe(true)
    const ages = lines.map((line) => NOW - Date.parse(line.discovered_at!))
    expect(ages.every((age) => age >= 0 && age <= 120 * DAY)).toBe(true)
    expect(ages.some((age) => age < DAY)).toBe(true)
    expect(ages.some((age) => age > DAY && age < 7 * DAY)).toBe(true)
    expect(ages.some((age) => age > 30 * DAY)).toBe(true)
    const checked = lines.filter((line) => line.availability_checked_at !== undefined)
    expect(checked.length / lines.length).toBeGreaterThan(0.9)
  })
})
