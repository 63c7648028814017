import type { ListingStore } from "@dropshelf/core"
import { Context, type Effect, type Scope } from "effect"

/*
 * An import into an empty directory, at bulk speed (docs/decisions/0513-first-load.md): the rows
 * go into a fresh table with only its primary key, the other indexes are built once at the end,
 * and the table takes the place of the empty listings in the same transaction, so readers see
 * no listing, then every one. This module holds no driver code: the CLI imports it to ask.
 */

export interface Session {
  /** Writes a batch as `ListingStore.upsert` does; batches run one after another, in call order. */
  readonly upsert: (batch: ReadonlyArray<ListingStore.ListingInput>) => Effect.Effect<ListingStore.UpsertResult>
  /**
   * Builds the remaining indexes (`onIndex` after each, with how many of how many are built),
   * then commits: the listings appear at once. Closing the scope without it rolls everything back.
   */
  readonly finish: (onIndex: (built: number, total: number) => void) => Effect.Effect<void>
}

export class FirstLoad extends Context.Service<FirstLoad, {
  /**
   * A session when the directory has no listings, `undefined` when it has some (the import then
   * upserts batch by batch). While a session is open other writers of listings wait, readers do not.
   */
  readonly begin: Effect.Effect<Session | undefined, never, Scope.Scope>
}>()("@dropshelf/store-sql/FirstLoad") {}
