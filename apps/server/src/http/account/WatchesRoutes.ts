import { Effect, Layer } from "effect"
import { HttpRouter, type UrlParams } from "effect/http"
import { Directory, type Errors, Watches } from "@dropshelf/core"
import { field, page, seeOther, type SignedInCaller, make as signedInGuards } from "./SignedIn.ts"
import * as WatchesPages from "./WatchesPages.ts"

/*
 * The watches pages, over the core's `Watches` use cases with the signed-in account as the
 * caller: a form's fields become the body the API takes, so `Watch.decodeCreate` and the
 * webhook checks decide, with the API's messages.
 */

export const WATCHES_PATHS: Readonly<Record<string, ReadonlyArray<string>>> = {
  "/account/watches": ["GET", "POST"],
  "/account/watches/:id": ["GET"],
  "/account/watches/:id/pause": ["POST"],
  "/account/watches/:id/webhook": ["POST"],
  "/account/watches/:id/rotate": ["POST"],
  "/account/watches/:id/delete": ["POST"],
  "/account/watches/:id/deliveries/:event/resend": ["POST"]
}

type Refusal = Errors.InvalidRequest | Errors.WatchLimitReached | Errors.WatchNotFound | Errors.DeliveryNotFound

const refusalOf = (error: Refusal): { readonly message: string; readonly status: number } => {
  switch (error._tag) {
    case "InvalidRequest":
      return { message: `${error.message}.`.replace(/\.\.$/, "."), status: 400 }
    case "WatchLimitReached":
      return { message: `Your plan allows ${error.limit} watches, and you have them all. Delete one to create another.`, status: 409 }
    case "WatchNotFound":
      return { message: "No such watch on your account.", status: 404 }
    case "DeliveryNotFound":
      return { message: "No such delivery of this watch.", status: 404 }
  }
}

/** The form's `GET /domains` query string as the object of filters a watch's body carries. */
const queryOf = (text: string): Record<string, string> =>
  Object.fromEntries(new URLSearchParams(text.trim().replace(/^\?/, "")))

export const WatchesRoutes = Layer.unwrap(Effect.gen(function*() {
  const watches = yield* Watches.Watches
  const { signedInForm, signedInPage } = yield* signedInGuards

  const as = (caller: SignedInCaller) => Directory.callerOf(caller.account)

  const listPage = (
    caller: SignedInCaller,
    options: { readonly notice?: string; readonly refusal?: string; readonly status?: number; readonly form?: WatchesPages.WatchForm } = {}
  ) =>
    Effect.map(watches.list(as(caller)), (list) =>
      page(WatchesPages.watches(list.data, as(caller).plan.watches, caller.signedIn, options), options.status ?? 200))

  /** The watch's page; a watch that is not the account's is "No such watch" on the list, 404. */
  const watchPage = (caller: SignedInCaller, watchId: string, options: { readonly notice?: string; readonly refusal?: string; readonly status?: number } = {}) =>
    Effect.gen(function*() {
      const view = yield* Effect.result(watches.get(as(caller), watchId))
      if (view._tag === "Failure") return yield* refused(caller, view.failure)
      const attempts = yield* watches.deliveries(as(caller), watchId).pipe(Effect.orElseSucceed(() => ({ data: [] })))
      return page(WatchesPages.watch(view.success, attempts.data, caller.signedIn, options), options.status ?? 200)
    })

  /** A refusal: on the watch's page when the watch is there, else on the list. */
  const refused = (caller: SignedInCaller, error: Refusal, watchId?: string): Effect.Effect<ReturnType<typeof page>> => {
    const { message, status } = refusalOf(error)
    return watchId === undefined || error._tag === "WatchNotFound"
      ? listPage(caller, { refusal: message, status })
      : watchPage(caller, watchId, { refusal: message, status })
  }

  const watchIdOf = Effect.map(HttpRouter.params, (params) => params.id ?? "")

  /** Runs a change of watch `id` from a form, then shows the watch with `notice`, or the refusal. */
  const change = <A>(
    run: (caller: SignedInCaller, watchId: string, form: UrlParams.UrlParams, params: Readonly<Record<string, string | undefined>>) => Effect.Effect<A, Refusal>,
    notice: (result: A, caller: SignedInCaller, watchId: string) => Effect.Effect<ReturnType<typeof page>>
  ) =>
    signedInForm((caller, form) =>
      Effect.gen(function*() {
        const params = yield* HttpRouter.params
        const watchId = params.id ?? ""
        const result = yield* Effect.result(run(caller, watchId, form, params))
        return result._tag === "Failure" ? yield* refused(caller, result.failure, watchId) : yield* notice(result.success, caller, watchId)
      }))

  return Layer.mergeAll(
    // `?query=`: the directory page's "Watch this search" fills the form with its filters.
    HttpRouter.add("GET", "/account/watches", signedInPage((caller, request) => {
      const query = new URL(request.url, "http://localhost").searchParams.get("query")
      return listPage(caller, query === null ? {} : { form: { name: "", query, webhookUrl: "" } })
    })),
    HttpRouter.add("POST", "/account/watches", signedInForm((caller, form) =>
      Effect.gen(function*() {
        const sent: WatchesPages.WatchForm = {
          name: field(form, "name") ?? "",
          query: field(form, "query") ?? "",
          webhookUrl: (field(form, "webhook_url") ?? "").trim()
        }
        const body = { name: sent.name, query: queryOf(sent.query), ...(sent.webhookUrl === "" ? {} : { webhook_url: sent.webhookUrl }) }
        const created = yield* Effect.result(watches.create(as(caller), body))
        if (created._tag === "Failure") {
          const { message, status } = refusalOf(created.failure)
          return yield* listPage(caller, { refusal: message, status, form: sent })
        }
        const { webhook_secret: secret, ...view } = created.success
        return secret === undefined
          ? seeOther(`/account/watches/${view.id}`)
          : page(WatchesPages.secret(view, secret, caller.signedIn, "Watch created"))
      }))),
    HttpRouter.add("GET", "/account/watches/:id", signedInPage((caller) => Effect.flatMap(watchIdOf, (watchId) => watchPage(caller, watchId)))),
    HttpRouter.add("POST", "/account/watches/:id/pause", change(
      (caller, watchId, form) => watches.update(as(caller), watchId, { paused: field(form, "paused") !== "false" }),
      (view, caller, watchId) => watchPage(caller, watchId, { notice: view.paused ? "The watch is paused." : "The watch is running again." })
    )),
    HttpRouter.add("POST", "/account/watches/:id/webhook", change(
      (caller, watchId, form) => watches.update(as(caller), watchId, { webhook_url: (field(form, "webhook_url") ?? "").trim() }),
      (changed, caller, watchId) => {
        const { webhook_secret: secret, ...view } = changed
        return secret === undefined
          ? watchPage(caller, watchId, { notice: "The webhook URL is changed; its signing secret is the same." })
          : Effect.succeed(page(WatchesPages.secret(view, secret, caller.signedIn, "Webhook added")))
      }
    )),
    HttpRouter.add("POST", "/account/watches/:id/rotate", change(
      (caller, watchId) => Effect.zip(watches.rotateSecret(as(caller), watchId), watches.get(as(caller), watchId)),
      ([rotated, view], caller) => Effect.succeed(page(WatchesPages.secret(view, rotated.webhook_secret, caller.signedIn, "Signing secret rotated")))
    )),
    HttpRouter.add("POST", "/account/watches/:id/delete", signedInForm((caller) =>
      Effect.gen(function*() {
        const watchId = yield* watchIdOf
        const view = yield* Effect.result(watches.get(as(caller), watchId))
        const removed = yield* Effect.result(watches.remove(as(caller), watchId))
        if (removed._tag === "Failure") return yield* refused(caller, removed.failure)
        return yield* listPage(caller, { notice: `The watch ${view._tag === "Success" ? view.success.name : watchId} is deleted.` })
      }))),
    HttpRouter.add("POST", "/account/watches/:id/deliveries/:event/resend", change(
      (caller, watchId, _form, params) => watches.resend(as(caller), watchId, params.event ?? ""),
      (resent, caller, watchId) => watchPage(caller, watchId, { notice: `Delivery ${resent.event_id} will be sent again shortly.` })
    ))
  )
}))
