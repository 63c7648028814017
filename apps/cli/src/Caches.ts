import type * as StoreCaches from "@dropshelf/store-sql/StoreCaches"
import { Config, ConfigProvider, Effect } from "effect"

/**
 * Every cache and batcher a served request meets, by the name `DROPSHELF_CACHES_OFF` switches
 * it off with (comma-separated; for measuring what each buys, which `npm run bench` reports).
 * Each is a layer of the adapter or server that owns it; none is in the core. One line each:
 * what it keeps, for how long, and how it is invalidated. Not a cache: the address gate's
 * memory of addresses over their ceiling of refused keys, which is the refusal itself
 * (server/http/AddressGate.ts).
 */
export const CACHES = {
  "key-lookups":
    "store-sql KeyLookups: each key digest's answer (key and plan, or none), 10 s; dropped on any key or plan write, here or announced by dropshelf_auth",
  "listing-records":
    "store-sql ListingCache: decoded listings by (id, updated_at), 60 000, evicted by SIEVE (rows read once go first); a write moves updated_at, so a changed row is decoded again",
  "shared-reads":
    "store-sql SharedReads: concurrent identical reads wait for one statement; keeps nothing once it has answered",
  "synced-at": "store-sql SinceFeed: the since watermark, reused for 1 s; a valid watermark stays valid",
  "since-read-ahead":
    "store-sql SinceFeed: the next page of a since run that follows a cursor, 5 s; dropped when asked or out of date",
  "filter-columns":
    "store-sql ColumnPages: the active listings' filtered columns and their bitmaps in both orders, and the rows of the 64 search terms last asked; loaded when a page first could use them, rows written since are read every second, and each page's statement reads them too",
  "listing-json":
    "server ListingRendering: each record's reader-independent JSON, 60 000 records, evicted by SIEVE; records are immutable, a changed row is a new record",
  "cursors": "server RememberedCursors: the 512 cursors last signed and checked; the signing secret never changes",
  "watch-filters":
    "server RememberedWatchFilters: each watch query's decoded filters, by its stored text, up to 50 000; a stored text never changes meaning",
  "redis-batches":
    "ratelimit-redis: the counting steps that arrive while a script runs go together in the next; keeps nothing once it has answered"
} as const

export type CacheName = keyof typeof CACHES

const NAMES = Object.keys(CACHES) as ReadonlyArray<CacheName>

/** `DROPSHELF_CACHES_OFF`: the caches to switch off, each a name of `CACHES`; default none. */
export const cachesOff: Config.Config<ReadonlySet<CacheName>> = Config.String("DROPSHELF_CACHES_OFF").pipe(
  Config.withDefault(""),
  Config.mapEffect((text) => {
    const names = text.split(",").map((name) => name.trim()).filter((name) => name.length > 0)
    const unknown = names.filter((name) => !(NAMES as ReadonlyArray<string>).includes(name))
    return unknown.length === 0
      ? Effect.succeed(new Set(names as ReadonlyArray<CacheName>))
      : Effect.fail(
        new Config.ConfigError(
          new ConfigProvider.SourceError({
            message: `DROPSHELF_CACHES_OFF names no cache ${unknown.join(", ")}; the caches are ${NAMES.join(", ")}`
          })
        )
      )
  })
)

/** The SQL adapter's switches for the caches `off` leaves on. */
export const storeSwitches = (off: ReadonlySet<CacheName>): StoreCaches.Switches => ({
  keyLookups: !off.has("key-lookups"),
  listingRecords: !off.has("listing-records"),
  sharedReads: !off.has("shared-reads"),
  syncedAt: !off.has("synced-at"),
  sinceReadAhead: !off.has("since-read-ahead"),
  filterColumns: !off.has("filter-columns")
})
