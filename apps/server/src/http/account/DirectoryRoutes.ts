import { Effect, Layer, Result } from "effect"
import { HttpRouter, type HttpServerRequest } from "effect/http"
import { Directory, DirectoryArea, ListQuery, Plan } from "@dropshelf/core"
import * as DirectoryPages from "./DirectoryPages.ts"
import * as SignedIn from "./SignedIn.ts"
import { AccountSettings, page, seeOther } from "./SignedIn.ts"

/*
 * The directory for a signed-in person: the same use cases as a key of the account, called as
 * the account (`Directory.callerOf`), so a page shows what the account's keys read, and a reveal
 * or a hold from the page spends and refuses exactly what the API's does.
 */

const searchOf = (request: HttpServerRequest.HttpServerRequest) => new URL(request.url, "http://localhost").searchParams

export const DirectoryRoutes = Layer.unwrap(Effect.gen(function*() {
  const directory = yield* Directory.Directory
  const area = yield* DirectoryArea.DirectoryArea
  const settings = yield* AccountSettings
  const { signedInForm, signedInPage } = yield* SignedIn.make
  type Caller = SignedIn.SignedInCaller

  const planOf = (caller: Caller) => Plan.effectivePlan(caller.account.plan)

  /** One listing's page, with what a reveal or a hold just did or why it was refused. */
  const listingPage = (
    caller: Caller,
    id: string,
    options: { readonly done?: "reveal" | "hold" | undefined; readonly refused?: Parameters<typeof DirectoryPages.refusalOf>[0] } = {}
  ) =>
    Effect.gen(function*() {
      const read = yield* Effect.result(area.listing(Directory.callerOf(caller.account), id))
      if (Result.isFailure(read)) return page(DirectoryPages.listingNotFound(caller.signedIn, planOf(caller)), 404)
      const refusal = options.refused === undefined ? undefined : DirectoryPages.refusalOf(options.refused, settings.upgradeUrl)
      return page(
        DirectoryPages.listing({
          outlook: read.success,
          plan: planOf(caller),
          signedIn: caller.signedIn,
          upgradeUrl: settings.upgradeUrl,
          done: options.done,
          refusal: refusal?.message
        }),
        refusal?.status ?? 200
      )
    })

  const idParam = Effect.map(HttpRouter.params, ({ id }) => id ?? "")

  return Layer.mergeAll(
    HttpRouter.add("GET", "/account/directory", signedInPage((caller, request) =>
      Effect.gen(function*() {
        const raw = DirectoryPages.queryOf(searchOf(request))
        const shown = { raw, plan: planOf(caller), signedIn: caller.signedIn }
        const decoded = ListQuery.decodeListQuery(raw)
        if (Result.isFailure(decoded)) return page(DirectoryPages.directory({ ...shown, refusal: decoded.failure }), 400)
        const listed = yield* Effect.result(directory.list(Directory.callerOf(caller.account), decoded.success))
        if (Result.isSuccess(listed)) return page(DirectoryPages.directory({ ...shown, page: listed.success }))
        const error = listed.failure
        switch (error._tag) {
          case "InvalidRequest":
            return page(DirectoryPages.directory({ ...shown, refusal: error }), 400)
          case "UpgradeRequired":
            return page(DirectoryPages.directory({ ...shown, refusal: { parameter: error.feature, message: error.message } }), 402)
          case "SinceTooOld":
            // The form sends no `since`; the API's own answer says how to resynchronise.
            return page(DirectoryPages.directory({ ...shown, refusal: { parameter: "since", message: "since is older than the since feed reaches" } }), 400)
        }
      }))),
    HttpRouter.add("GET", "/account/directory/:id", signedInPage((caller, request) =>
      Effect.gen(function*() {
        const done = searchOf(request).get("done")
        return yield* listingPage(caller, yield* idParam, { done: done === "reveal" || done === "hold" ? done : undefined })
      }))),
    HttpRouter.add("GET", "/account/directory/:id/reveal", signedInPage((caller) =>
      Effect.gen(function*() {
        const id = yield* idParam
        const read = yield* Effect.result(area.listing(Directory.callerOf(caller.account), id))
        if (Result.isFailure(read)) return page(DirectoryPages.listingNotFound(caller.signedIn, planOf(caller)), 404)
        const outlook = read.success.reveal
        // Only a reveal that spends is confirmed; any other is shown, with its button or refusal, on the listing's page.
        if (outlook._tag !== "Charged" || outlook.remaining === 0) return seeOther(`/account/directory/${encodeURIComponent(id)}`)
        return page(DirectoryPages.confirmReveal({ outlook: read.success, charged: outlook, signedIn: caller.signedIn }))
      }))),
    HttpRouter.add("POST", "/account/directory/:id/reveal", signedInForm((caller) =>
      Effect.gen(function*() {
        const id = yield* idParam
        const revealed = yield* Effect.result(directory.reveal(Directory.callerOf(caller.account), id))
        if (Result.isFailure(revealed)) return yield* listingPage(caller, id, { refused: revealed.failure })
        return seeOther(`/account/directory/${encodeURIComponent(id)}?done=reveal`)
      }))),
    HttpRouter.add("POST", "/account/directory/:id/hold", signedInForm((caller) =>
      Effect.gen(function*() {
        const id = yield* idParam
        const held = yield* Effect.result(directory.hold(Directory.callerOf(caller.account), id))
        if (Result.isFailure(held)) return yield* listingPage(caller, id, { refused: held.failure })
        return seeOther(`/account/directory/${encodeURIComponent(id)}?done=hold`)
      })))
  )
}))
