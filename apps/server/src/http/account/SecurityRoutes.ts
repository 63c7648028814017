import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { SecurityLog } from "@dropshelf/core"
import { page, make as signedInGuards } from "./SignedIn.ts"
import * as SecurityPages from "./SecurityPages.ts"

/* The security log's page, over the core's `SecurityLog` for the signed-in account. */

export const SECURITY_PATHS: Readonly<Record<string, ReadonlyArray<string>>> = {
  "/account/security": ["GET"]
}

export const SecurityRoutes = Layer.unwrap(Effect.gen(function*() {
  const log = yield* SecurityLog.SecurityLog
  const { signedInPage } = yield* signedInGuards
  return HttpRouter.add("GET", "/account/security", signedInPage((caller, request) =>
    Effect.gen(function*() {
      const after = new URL(request.url, "http://localhost").searchParams.get("after") ?? undefined
      const events = yield* log.events(caller.account.id, after)
      return page(SecurityPages.security(events, caller.signedIn, after === undefined))
    })))
}))
