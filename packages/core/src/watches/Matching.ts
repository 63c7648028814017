import { Clock, Effect } from "effect"
import type { ListFilters } from "../domain/ListQuery.ts"
import { type Candidate, filtersOf, planRound, type QueryText } from "../domain/Watch.ts"
import type { CandidateRow } from "../ports/WatchStore.ts"
import { WatchStore } from "../ports/WatchStore.ts"
import type { WatchSettings } from "./WatchSettings.ts"

/*
 * The worker's matching round: the listing changes due, matched against every watch's filters
 * (`Watch.planRound`), recorded in one transaction by the store.
 */

export const make = (settings: WatchSettings) => Effect.gen(function*() {
  const store = yield* WatchStore

  // Decoded filters by their stored text: a round reads every watch, but decodes each query once.
  const decoded = new Map<string, ListFilters>()
  const filtersFor = (query: QueryText) => {
    const key = JSON.stringify(query)
    let filters = decoded.get(key)
    if (filters === undefined) {
      if (decoded.size > 50_000) decoded.clear()
      filters = filtersOf(query)
      decoded.set(key, filters)
    }
    return filters
  }
  const toCandidate = (row: CandidateRow): Candidate => ({
    watchId: row.watchId,
    accountId: row.accountId,
    plan: row.plan,
    filters: filtersFor(row.query),
    createdAt: row.createdAt
  })

  const matchRound = Effect.flatMap(Clock.currentTimeMillis, (now) =>
    store.matchRound({
      now,
      limit: settings.batch,
      plan: (due, candidates) => planRound(due, candidates.map(toCandidate), now)
    })).pipe(Effect.withSpan("Watches.matchRound"))

  return { matchRound }
})
