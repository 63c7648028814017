import { Effect } from "effect"
import { UsageError } from "./Failure.ts"
import type { DropshelfConfig } from "./Runtime.ts"

/**
 * `dropshelf serve`: migrate, then serve the API until SIGINT/SIGTERM.
 *
 * SERVER WIRING PENDING: `@dropshelf/server` does not export its program yet.
 */
export const serve = (config: DropshelfConfig): Effect.Effect<void, UsageError> =>
  Effect.fail(new UsageError({ message: `serving is not wired yet (would listen on ${config.host}:${config.port})` }))
