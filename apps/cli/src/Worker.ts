import { Watches } from "@dropshelf/core"
import { Effect, Layer } from "effect"
import { stopsOnSignal } from "./Failure.ts"
import { note } from "./Output.ts"
import * as Runtime from "./Runtime.ts"
import { watchesLayer } from "./Serve.ts"
import { Server, WebhookDelivery } from "@dropshelf/server"

/**
 * `dropshelf worker`: the watch worker alone, for operators who run it apart from the API
 * servers (with DROPSHELF_WATCH_WORKER=false on those). On the embedded database the data
 * directory admits one process: there `serve` runs the worker itself.
 */
export const work = (config: Runtime.DropshelfConfig) =>
  Effect.gen(function*() {
    const sinceHorizonDays = yield* Server.sinceHorizonDaysFromEnv
    const settings = yield* WebhookDelivery.settingsFromEnv
    // Every read the worker makes wants the latest state: no read replicas (DATABASE_READ_URL is serve's).
    const primaryOnly = { ...config, replicas: { ...config.replicas, readUrls: [] } }
    return yield* Effect.gen(function*() {
      yield* Layer.build(Watches.Watches.layerWorker)
      stopsOnSignal.gracefully = true
      yield* note(`dropshelf: watch worker running on ${Runtime.describeStorage(config)} (Ctrl-C to stop)`)
      return yield* Effect.never
    }).pipe(Effect.scoped, Effect.provide(watchesLayer(primaryOnly, sinceHorizonDays, settings)))
  })
