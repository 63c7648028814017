import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { html } from "@remix-run/html-template"
import { AccountReveals, Directory } from "@dropshelf/core"
import { page, seeOther, make as signedInGuards } from "./SignedIn.ts"
import { layout } from "./Pages.ts"
import * as RevealsPages from "./RevealsPages.ts"
import { clearedSessionCookie } from "./Security.ts"

/* The reveal ledger's page, over the core's `AccountReveals` with the signed-in account as the caller. */

export const REVEALS_PATHS: Readonly<Record<string, ReadonlyArray<string>>> = {
  "/account/reveals": ["GET"]
}

export const RevealsRoutes = Layer.unwrap(Effect.gen(function*() {
  const ledger = yield* AccountReveals.AccountReveals
  const { signedInPage } = yield* signedInGuards

  return HttpRouter.add("GET", "/account/reveals", signedInPage((caller, request) =>
    Effect.gen(function*() {
      const query = new URL(request.url, "http://localhost").searchParams
      const read = yield* Effect.result(
        ledger.ledger(Directory.callerOf(caller.account), query.get("month") ?? undefined, query.get("after") ?? undefined)
      )
      if (read._tag === "Success") return page(RevealsPages.reveals(read.success, caller.signedIn))
      if (read.failure._tag === "AccountNotFound") return seeOther("/signin", { "set-cookie": clearedSessionCookie })
      return page(
        layout("Reveals", html`<p class="notice bad" role="alert">Choose a month as YYYY-MM, not after this one.</p>
<p><a href="/account/reveals">This month's reveals</a></p>`, { signedIn: caller.signedIn }),
        400
      )
    })))
}))
