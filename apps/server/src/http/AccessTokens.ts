import { Context, type Effect } from "effect"
import type { Directory, Errors } from "@dropshelf/core"

/**
 * Bearer credentials that are not API keys: the OAuth access tokens `/mcp` accepts. The address
 * gate asks here for any bearer that has no key's shape, so a refused token counts against the
 * address as a refused key does.
 */
export class AccessTokens extends Context.Service<AccessTokens, {
  /** The caller `token` speaks for at `pathname`; `undefined` where the path takes no tokens. */
  readonly callerAt: (pathname: string, token: string) => Effect.Effect<Directory.KeyCaller, Errors.Unauthorized> | undefined
}>()("@dropshelf/server/AccessTokens") {}
