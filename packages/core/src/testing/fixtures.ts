import type { ListingId } from "../domain/Ids.ts"
import { maskHint, wordCount } from "../domain/Masking.ts"
import { DAY } from "../domain/Time.ts"
import type { ListingInput } from "../ports/ListingStore.ts"

/** A complete, valid listing input; tests override what they look at. */
export const listingInput = (id: string, overrides: Partial<ListingInput> = {}): ListingInput => {
  const domain = overrides.domain ?? `${id.toLowerCase()}shop.com`
  return {
    id: id as ListingId,
    domain,
    tier: "regular",
    status: "active",
    discoveredAt: Date.UTC(2026, 0, 1),
    estimatedValueCents: 12_000,
    category: "tech",
    ageYears: 5,
    backlinks: 120,
    referringDomains: 30,
    domainAuthority: 35,
    snapshots: 60,
    directoryScore: 55,
    spam: "low",
    linkedBy: ["wikipedia.org"],
    tags: ["coffee"],
    blurb: "A name with history",
    source: "dropcatch",
    agentCitability: { score: 12, sources: [] },
    featuredRank: null,
    availabilityCheckedAt: Date.UTC(2026, 0, 2),
    maskHint: maskHint(domain),
    wordCount: wordCount(domain),
    ...overrides
  }
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `L${String(i).padStart(7, "0")}`)

/**
 * A directory of listings that differ in every filtered field, so filter results are
 * non-trivial. Deterministic: the same list every call.
 */
export const variedListings = (count = 48, now = Date.UTC(2026, 5, 1)): ReadonlyArray<ListingInput> =>
  ids(count).map((id, i) =>
    listingInput(id, {
      domain: [`green-energy${i}.co.uk`, `bestcoffee${i}.com`, `cloudhost${i}.io`, `z${i}q.net`][i % 4]!,
      tier: (["featured", "regular", "open"] as const)[i % 3]!,
      discoveredAt: now - (i % 12) * DAY - (i % 5) * 1000,
      estimatedValueCents: i % 7 === 0 ? null : [5_000, 10_000, 24_999, 25_000, 99_999, 100_000, 250_000][i % 7]!,
      category: i % 6 === 0 ? null : ["tech", "food", "travel"][i % 3]!,
      ageYears: i % 5 === 0 ? null : i % 20,
      backlinks: i % 9 === 0 ? null : i * 37,
      referringDomains: i % 8 === 0 ? null : [0, 4, 5, 24, 99, 100, 1200][i % 7]!,
      domainAuthority: i % 10 === 0 ? null : (i * 7) % 101,
      snapshots: i % 11 === 0 ? null : i * 13,
      directoryScore: i % 13 === 0 ? null : (i * 11) % 101,
      spam: i % 4 === 0 ? null : i % 2 === 0 ? "moderate" : "low",
      linkedBy: i % 3 === 0 ? [] : ["bbc.co.uk"],
      tags: i % 2 === 0 ? ["coffee", "beans"] : ["hosting"],
      blurb: i % 3 === 0 ? null : `Blurb number ${i} about Espresso`,
      source: ["dropcatch", "auction", null][i % 3]!,
      agentCitability: i % 4 === 1 ? null : { score: (i * 3) % 50, sources: [] },
      featuredRank: i % 5 === 2 ? i : null,
      availabilityCheckedAt: i % 6 === 5 ? null : now - (i % 9) * DAY
    })
  )
