import { Context } from "effect"
import type { ListFilters } from "../domain/ListQuery.ts"
import { filtersOf, type QueryText } from "../domain/Watch.ts"

/**
 * How the worker's matching round turns a watch's stored query into filters: `Watch.filtersOf`,
 * afresh for every watch every round, unless an adapter provides one that keeps them (the
 * server's RememberedWatchFilters): a round reads every watch.
 */
export const WatchFilters = Context.Reference<(query: QueryText) => ListFilters>("@dropshelf/core/WatchFilters", {
  defaultValue: () => filtersOf
})
