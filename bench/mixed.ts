/**
 * The mixed list workload of `npm run bench` (also `node bench/cost.ts mixed`): many filter sets,
 * each paged through its first three pages by `next_cursor`, between single reads of listings
 * from the whole directory. What a population of clients asks, which no page cache serves.
 */
import type { Walk } from "./load.ts"
import { psql } from "./postgres.ts"

/**
 * The mixed workload's filter sets: every filter a client sends, alone and combined, both orders
 * and the page sizes from 10 to 250 (category codes are the seed's, apps/cli/src/Seed.ts). Each
 * matches enough of a 20 000-listing directory for its three pages, so the mix can be tried small.
 */
export const MIXED_FILTERS = [
  "tld=com",
  "tld=co.uk&limit=100",
  "category=tech,finance",
  "category=food,travel,health&limit=10",
  "spam=moderate",
  "priceRange=250-999&limit=100",
  "priceRange=2500-plus&sort=latest",
  "tier=open&limit=250",
  "rsMin=80",
  "featured=true",
  "featured=false&limit=250",
  "sort=latest&limit=100",
  "q=coffee",
  "rd=50-99,100-249",
  "limit=10",
  "tld=io&category=gaming,media&sort=latest",
  "tier=open&spam=low&priceRange=100-249",
  "q=garden&sort=latest&limit=10",
  "category=education&rsMin=40&featured=false&limit=10",
  "tld=net&spam=low&rd=10-24,25-49,50-99&sort=latest",
  "sort=latest&limit=250",
  "priceRange=under-100&tier=open&rsMin=20"
] as const
/** Listings read one by one in the mixed workload, three after each filter set's pages. */
export const MIXED_IDS = 3000

/**
 * Ids of active listings spread over the whole directory: ordered by a hash, so the same ones
 * every run. With `accessDelayMs`, only listings a plan with that delay can read already.
 */
export const idsAcross = (database: string, count: number, accessDelayMs = 0) =>
  psql(
    `SELECT id FROM listings WHERE status = 'active' AND discovered_at <= now() - interval '${Math.ceil(accessDelayMs / 1000)} seconds'
      ORDER BY md5(id) LIMIT ${count}`,
    database
  ).split("\n")

/**
 * One cycle of the mixed workload: a filter set (a query string; empty, the default page) through
 * three pages, then three single reads, until every id is read.
 */
export const mixedWalks = (ids: ReadonlyArray<string>, filters: ReadonlyArray<string> = MIXED_FILTERS): Array<Walk> => {
  const walks: Array<Walk> = []
  for (let i = 0; i * 3 < ids.length; i++) {
    const filter = filters[i % filters.length]!
    walks.push({ path: filter === "" ? "/api/v1/domains" : `/api/v1/domains?${filter}`, pages: 3 })
    for (const id of ids.slice(i * 3, i * 3 + 3)) walks.push({ path: `/api/v1/domains/${id}`, pages: 1 })
  }
  return walks
}
