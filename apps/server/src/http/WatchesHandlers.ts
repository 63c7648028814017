import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Watches } from "@dropshelf/core"
import { CurrentCaller, DropshelfApi } from "@dropshelf/api/Api"
import { refuseAs } from "./ErrorMapping.ts"

/** `/api/v1/watches`: the core's watch use cases, with their refusals mapped in the one table. */
export const WatchesHandlers = HttpApiBuilder.group(
  DropshelfApi,
  "watches",
  Effect.fn(function*(handlers) {
    const watches = yield* Watches.Watches
    return handlers.handleAll({
      create: ({ payload }) => CurrentCaller.use(({ caller }) => watches.create(caller, payload).pipe(refuseAs("read"))),
      list: () => CurrentCaller.use(({ caller }) => watches.list(caller)),
      get: ({ params }) => CurrentCaller.use(({ caller }) => watches.get(caller, params.id).pipe(refuseAs("read"))),
      update: ({ params, payload }) =>
        CurrentCaller.use(({ caller }) => watches.update(caller, params.id, payload).pipe(refuseAs("read"))),
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
