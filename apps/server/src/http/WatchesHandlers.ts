import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Errors, Watches } from "@dropshelf/core"
import { CurrentCaller, DropshelfApi } from "@dropshelf/api/Api"
import { refuseAs } from "./ErrorMapping.ts"
import { isBodyTooLarge } from "./Refusals.ts"

/**
 * A watch write's body as JSON, undecoded: the core's `Watch.decodeCreate`/`decodePatch` read
 * it, as they read the MCP tool's arguments, so both refuse the same way. A body over the cap
 * stays the framework's error (the boundary's 413).
 */
const bodyOf = (request: HttpServerRequest.HttpServerRequest) =>
  request.json.pipe(
    Effect.catchIf(
      (error) => !isBodyTooLarge(error),
      () => Effect.fail(new Errors.InvalidRequest({ parameter: "body", message: "body accepts a JSON object; it is not valid JSON" }))
    ),
    Effect.catchTag("HttpServerError", Effect.die)
  )

/** `/api/v1/watches`: the core's watch use cases, with their refusals mapped in the one table. */
export const WatchesHandlers = HttpApiBuilder.group(
  DropshelfApi,
  "watches",
  Effect.fn(function*(handlers) {
    const watches = yield* Watches.Watches
    return handlers
      .handleRaw("create", ({ request }) =>
        CurrentCaller.use(({ caller }) => Effect.flatMap(bodyOf(request), (body) => watches.create(caller, body)).pipe(refuseAs("read"))))
      .handleRaw("update", ({ params, request }) =>
        CurrentCaller.use(({ caller }) =>
          Effect.flatMap(bodyOf(request), (body) => watches.update(caller, params.id, body)).pipe(refuseAs("read"))
        ))
      .handleAll({
        list: () => CurrentCaller.use(({ caller }) => watches.list(caller)),
        get: ({ params }) => CurrentCaller.use(({ caller }) => watches.get(caller, params.id).pipe(refuseAs("read"))),
        delete: ({ params }) => CurrentCaller.use(({ caller }) => watches.remove(caller, params.id).pipe(refuseAs("read"))),
        rotateSecret: ({ params }) => CurrentCaller.use(({ caller }) => watches.rotateSecret(caller, params.id).pipe(refuseAs("read"))),
        matches: ({ params, query }) =>
          CurrentCaller.use(({ caller }) =>
            watches.matches(caller, params.id, { cursor: query.cursor, limit: query.limit }).pipe(refuseAs("read"))
          ),
        deliveries: ({ params }) => CurrentCaller.use(({ caller }) => watches.deliveries(caller, params.id).pipe(refuseAs("read"))),
        retry: ({ params }) => CurrentCaller.use(({ caller }) => watches.resend(caller, params.id, params.event).pipe(refuseAs("read")))
      })
  })
)
