import { type ListQuery, type Watch, Watches } from "@dropshelf/core"
import { Layer } from "effect"

/*
 * Each watch query's decoded filters, by its stored text: a matching round reads every watch,
 * and decoding them all would cost a round with one event more than the matching. A stored
 * query's text never changes meaning, so nothing needs invalidating; past MAX_KEPT distinct
 * texts the map starts over.
 */

const MAX_KEPT = 50_000

/** `Watches.WatchFilters` keeping what it decodes; `enabled` false (`DROPSHELF_CACHES_OFF=watch-filters`) keeps nothing. */
export const layer = (enabled: boolean): Layer.Layer<never> =>
  !enabled ? Layer.empty : Layer.sync(Watches.WatchFilters, () => {
    const decoded = new Map<string, ListQuery.ListFilters>()
    return (query: Watch.QueryText) => {
      const key = JSON.stringify(query)
      let filters = decoded.get(key)
      if (filters === undefined) {
        if (decoded.size >= MAX_KEPT) decoded.clear()
        filters = Watches.WatchFilters.defaultValue()(query)
        decoded.set(key, filters)
      }
      return filters
    }
  })
