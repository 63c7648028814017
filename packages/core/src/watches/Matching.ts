import { Clock, Effect } from "effect"
import { type Candidate, planRound } from "../domain/Watch.ts"
import type { CandidateRow } from "../ports/WatchStore.ts"
import { WatchStore } from "../ports/WatchStore.ts"
import { WatchFilters } from "./WatchFilters.ts"
import type { WatchSettings } from "./WatchSettings.ts"

/*
 * The worker's matching round: the listing changes due, matched against every watch's filters
 * (`Watch.planRound`), recorded in one transaction by the store.
 */

export const make = (settings: WatchSettings) => Effect.gen(function*() {
  const store = yield* WatchStore

  const filtersFor = yield* WatchFilters
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
