/**
 * The random-combination workload of `npm run bench` (part `combos`): BENCH_COMBOS (200) filter
 * combinations of `GET /domains` drawn by a seeded generator (BENCH_COMBO_SEED, 1) over every
 * documented filter, both orders and page sizes 1-250, with the seed's categories, sources, TLDs
 * and words (apps/cli/src/Seed.ts), so that every one is a valid request. The load runs them as
 * the mixed workload runs its filter sets (bench/mixed.ts); `timeCombinations` then times every
 * page of every combination as a single request.
 */
import { Bands } from "@dropshelf/core"
import { CATEGORIES, CATEGORY_TAGS, SOURCES, TLDS, WORDS } from "../apps/cli/src/Seed.ts"
import { getJson } from "./since.ts"

/** The single-request time every page of every combination should keep under, in ms. */
export const PAGE_TARGET_MS = 25

/**
 * mulberry32: the combinations' own generator, so that they stay the same whatever the seed's
 * generator (which shapes the data) becomes, and figures of two commits compare.
 */
const mulberry32 = (seed: number): (() => number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Random = () => number
const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1))
const pick = <A>(random: Random, items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!
const some = <A>(random: Random, items: ReadonlyArray<A>, min: number, max: number): Array<A> => {
  const count = Math.min(items.length, int(random, min, max))
  const chosen = new Set<A>()
  while (chosen.size < count) chosen.add(pick(random, items))
  return [...chosen]
}

/** Words a client searches for: a tag, a category, or a word of a name (tags carry a name's first words). */
const searchWord = (random: Random) => {
  const roll = random()
  if (roll < 0.4) return pick(random, Object.values(CATEGORY_TAGS).flat())
  if (roll < 0.55) return pick(random, CATEGORIES)
  return pick(random, WORDS)
}

/**
 * One combination's query string (empty for the default page). Each filter is present with its
 * own probability, about three a combination, its value drawn from what the API accepts and
 * the seeded directory carries: ages 0-26 years, checks within 30 days. `rsMax` is drawn at or
 * above `rsMin`, so the pair keeps a range that can hold rows.
 */
const combination = (random: Random): string => {
  const query = new URLSearchParams()
  const maybe = (p: number, set: () => void) => {
    if (random() < p) set()
  }
  maybe(0.3, () => query.set("tld", pick(random, TLDS.map(([tld]) => tld))))
  maybe(0.35, () => query.set("category", some(random, CATEGORIES, 1, 4).join(",")))
  maybe(0.2, () => query.set("source", some(random, SOURCES, 1, 3).join(",")))
  maybe(0.2, () => query.set("priceRange", pick(random, Bands.PRICE_RANGES)))
  maybe(0.2, () => query.set("spam", pick(random, ["low", "moderate"])))
  maybe(0.15, () => query.set("tier", "open"))
  maybe(0.15, () => query.set("featured", pick(random, ["true", "false"])))
  maybe(0.15, () => query.set("recommended", pick(random, ["true", "false"])))
  maybe(0.2, () => query.set("rd", some(random, Bands.REFERRING_DOMAIN_BANDS, 1, 3).join(",")))
  let rsMin = 0
  maybe(0.2, () => {
    rsMin = int(random, 0, 90)
    query.set("rsMin", String(rsMin))
  })
  maybe(0.2, () => query.set("rsMax", String(int(random, rsMin, 100))))
  maybe(0.2, () => query.set("ageMin", String(int(random, 0, 26))))
  maybe(0.2, () => query.set("citabilityMin", String(int(random, 0, 100))))
  maybe(0.2, () => query.set("checkedDays", String(int(random, 1, 30))))
  maybe(0.2, () => query.set("q", Array.from({ length: random() < 0.8 ? 1 : 2 }, () => searchWord(random)).join(" ")))
  maybe(0.5, () => query.set("sort", "latest"))
  maybe(0.7, () => query.set("limit", String(int(random, 1, 250))))
  return query.toString()
}

/** `count` combinations from `seed`: the same ones for the same seed, on every machine. */
export const combinations = (count: number, seed: number): Array<string> => {
  const random = mulberry32(seed)
  return Array.from({ length: count }, () => combination(random))
}

export const pathOf = (query: string) => query === "" ? "/api/v1/domains" : `/api/v1/domains?${query}`

export interface TimedCombination {
  readonly query: string
  /**
   * Each page's single-request time in ms, the median of its timed passes, in page order: fewer
   * than `pages` when the last came first.
   */
  readonly pageMs: ReadonlyArray<number>
  /** Each page's slowest timed pass, in ms: what a pause of the whole process (a collection) adds. */
  readonly worstMs: ReadonlyArray<number>
  /** Rows on each page. */
  readonly pageRows: ReadonlyArray<number>
}

/**
 * Every combination through its first `pages` pages by `next_cursor`, one request at a time:
 * once to warm the server's plans and caches (as the load before did for some), then `passes`
 * times, timed. A page's time is the median of its passes: what the page costs, where one pass
 * alone also catches whatever else the process was doing then (a collection, a refresh in the
 * background), which any page could meet. Any answer but 200 throws: the generator must never
 * draw an invalid request.
 */
export const timeCombinations = async (
  port: number,
  key: string,
  queries: ReadonlyArray<string>,
  pages: number,
  passes: number
): Promise<Array<TimedCombination>> => {
  type Walk = { readonly pageMs: ReadonlyArray<number>; readonly pageRows: ReadonlyArray<number> }
  const walk = async (query: string): Promise<Walk> => {
    const pageMs: Array<number> = []
    const pageRows: Array<number> = []
    let cursor: string | null = null
    for (let page = 1; page <= pages; page++) {
      const path = cursor === null
        ? pathOf(query)
        : `${pathOf(query)}${query === "" ? "?" : "&"}cursor=${encodeURIComponent(cursor)}`
      const started = performance.now()
      const response = await getJson(port, key, path)
      pageMs.push(performance.now() - started)
      if (response.status !== 200) throw new Error(`combination ${path}: ${response.status} ${response.body.slice(0, 300)}`)
      const body = JSON.parse(response.body) as { data: Array<unknown>; next_cursor: string | null }
      pageRows.push(body.data.length)
      cursor = body.next_cursor
      if (cursor === null) break
    }
    return { pageMs, pageRows }
  }
  for (const query of queries) await walk(query)
  // Pass after pass over every combination, so that a pause lands on different pages each time.
  const runs: Array<Array<Walk>> = []
  for (let pass = 0; pass < passes; pass++) {
    const run: Array<Walk> = []
    for (const query of queries) run.push(await walk(query))
    runs.push(run)
  }
  return queries.map((query, index) => {
    const { pageRows } = runs[0]![index]!
    const times = pageRows.map((_, page) => runs.map((run) => run[index]!.pageMs[page]!).sort((a, b) => a - b))
    return { query, pageMs: times.map((sorted) => sorted[sorted.length >> 1]!), worstMs: times.map((sorted) => sorted.at(-1)!), pageRows }
  })
}
