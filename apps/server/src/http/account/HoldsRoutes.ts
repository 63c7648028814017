import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { Directory, type Errors } from "@dropshelf/core"
import { field, page, type SignedInCaller, make as signedInGuards } from "./SignedIn.ts"
import * as HoldsPages from "./HoldsPages.ts"

/*
 * The holds page, over the directory's `holds`, `extend` and `end` with the signed-in account
 * as the caller: the same rules and refusals as the API's, told as sentences.
 */

export const HOLDS_PATHS: Readonly<Record<string, ReadonlyArray<string>>> = {
  "/account/holds": ["GET"],
  "/account/holds/:id/extend": ["POST"],
  "/account/holds/:id/end": ["POST"]
}

/** A refusal of `extend` or `end`, as the page says it, with the API's status. */
const refusalOf = (error: Errors.ExtendError | Errors.EndError): { readonly message: string; readonly status: number } => {
  switch (error._tag) {
    case "HoldNotFound":
      return { message: "No such hold on your account.", status: 404 }
    case "HoldsRequirePro":
      return { message: "Holds need the pro or business plan.", status: 402 }
    case "AlreadyExtended":
      return { message: "The hold has already used its one extension.", status: 400 }
    case "HoldOver":
      return { message: `The hold has already ended (${error.state}).`, status: 400 }
  }
}

export const HoldsRoutes = Layer.unwrap(Effect.gen(function*() {
  const directory = yield* Directory.Directory
  const { signedInForm, signedInPage } = yield* signedInGuards

  const holdsPage = (
    caller: SignedInCaller,
    options: { readonly notice?: string; readonly refusal?: string; readonly status?: number } = {}
  ) => {
    const as = Directory.callerOf(caller.account)
    return Effect.map(directory.holds(as), (list) => page(HoldsPages.holds(list.data, as.plan, caller.signedIn, options), options.status ?? 200))
  }

  const refused = (caller: SignedInCaller, error: Errors.ExtendError | Errors.EndError) => {
    const { message, status } = refusalOf(error)
    return holdsPage(caller, { refusal: message, status })
  }

  return Layer.mergeAll(
    HttpRouter.add("GET", "/account/holds", signedInPage((caller) => holdsPage(caller))),
    HttpRouter.add("POST", "/account/holds/:id/extend", signedInForm((caller) =>
      Effect.gen(function*() {
        const { id } = yield* HttpRouter.params
        const extended = yield* Effect.result(directory.extend(Directory.callerOf(caller.account), id ?? ""))
        if (extended._tag === "Failure") return yield* refused(caller, extended.failure)
        const hold = extended.success.hold
        return yield* holdsPage(caller, { notice: `The hold on ${hold.listing_id} now ends ${hold.expires_at.slice(0, 16).replace("T", " ")} UTC.` })
      }))),
    HttpRouter.add("POST", "/account/holds/:id/end", signedInForm((caller, form) =>
      Effect.gen(function*() {
        const { id } = yield* HttpRouter.params
        const outcome = field(form, "outcome")
        if (outcome !== "released" && outcome !== "registered") {
          return yield* holdsPage(caller, { refusal: "Choose how the hold ended: registered or released.", status: 400 })
        }
        const ended = yield* Effect.result(directory.end(Directory.callerOf(caller.account), id ?? "", outcome))
        if (ended._tag === "Failure") return yield* refused(caller, ended.failure)
        return yield* holdsPage(caller, { notice: `The hold on ${ended.success.hold.listing_id} is ended: ${outcome}.` })
      })))
  )
}))
