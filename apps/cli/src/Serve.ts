import { Watches } from "@dropshelf/core"
import { Health, RdapAvailability, Server, SmtpMail, Telemetry, WebhookDelivery } from "@dropshelf/server"
import { PoolMetrics, ReadReplicas, StoreSql } from "@dropshelf/store-sql"
import { Context, Effect, Layer, Option } from "effect"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { writeBackup } from "./BackupFile.ts"
import { stopsOnSignal, UsageError } from "./Failure.ts"
import * as OperatorSocket from "./OperatorSocket.ts"
import { note } from "./Output.ts"
import { publicOrigin } from "./Config.ts"
import * as Runtime from "./Runtime.ts"

/**
 * `dropshelf serve` (and the end of `npm start`): migrate, run `before` against the same open
 * storage (the embedded database admits one process, so the demo set-up shares it), then serve
 * the API until SIGINT/SIGTERM, when in-flight requests finish and the storage closes. On the
 * embedded database it also answers operator commands run beside it (OperatorSocket.ts), from
 * as soon as the storage is migrated until it closes.
 */
export const serve = <E = never>(
  config: Runtime.DropshelfConfig,
  before: Effect.Effect<void, E, Runtime.ServerServices | Watches.Watches> = Effect.void
) =>
  Effect.gen(function*() {
    // Read by the commands that serve only, and before the storage opens: a bad value stops the
    // start at once, and does not stop other commands.
    const settings = yield* Server.settingsFromEnv
    const sinceHorizonDays = yield* Server.sinceHorizonDaysFromEnv
    const watchSettings = yield* WebhookDelivery.settingsFromEnv
    const watchWorker = yield* WebhookDelivery.workerFromEnv
    const accountMail = yield* SmtpMail.settingsFromEnv
    // Mailed links name the port listened on, which `--port 0` learns only once listening.
    let listeningPort = config.port
    const mailOrigin = () => publicOrigin({ ...config, port: listeningPort })
    if (accountMail.signUp === "open" && accountMail.mail === undefined) {
      yield* Effect.logWarning("dropshelf: DROPSHELF_SIGNUP=open needs mail: until DROPSHELF_SMTP_URL is set, /signup says sign-up needs mail")
    }
    const metricsCollected = settings.metricsPort !== undefined || (yield* Telemetry.otlpMetricsFromEnv)
    // Built first, released last: spans still open when the server stops are exported before the process ends.
    const telemetry = yield* Layer.build(Telemetry.layerOtlpFromEnv)
    return yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // Measured only while something collects it: a server pool is sampled with a statement every few seconds.
      if (metricsCollected) yield* Layer.build(PoolMetrics.layerExport)
      if (config.databaseUrl === undefined) {
        const migrate = StoreSql.migrate.pipe(Effect.provideService(SqlClient.SqlClient, sql))
        // The embedded storage layer provides its dump beside the ports.
        const embedded = yield* Effect.serviceOption(StoreSql.EmbeddedDump)
        const backup = (file: string) =>
          Option.isSome(embedded)
            ? Effect.flatMap(embedded.value.dump, (bytes) => writeBackup(file, bytes))
            : Effect.fail(new UsageError({ message: "this server keeps no embedded database to back up" }))
        yield* Layer.build(OperatorSocket.layerServer(config.dataDir, migrate, backup))
      }
      yield* before
      const redis = yield* Runtime.RedisCheck
      const replicaStates = yield* ReadReplicas.ReadReplicas
      const dependencies: Array<Health.Dependency> = [{ name: "database", check: sql.unsafe("SELECT 1") }]
      if (redis !== undefined) dependencies.push({ name: "redis", check: redis })
      const server = yield* Layer.build(
        Server.layer({ port: config.port, host: config.host, ...settings, rememberListingJson: !config.cachesOff.has("listing-json") }).pipe(
          Layer.provide(Health.layerDependencies(dependencies)),
          Layer.provide(replicaStates.replicas.length === 0 ? Layer.empty : Layer.succeed(Health.ReplicaStates, () =>
            Object.fromEntries(replicaStates.statuses().map((status) => [status.name, status.state])))),
          Layer.provide(Layer.succeedContext(telemetry))
        )
      )
      if (watchWorker) {
        // The embedded database admits this process alone: a lease left there is a killed predecessor's.
        if (config.databaseUrl === undefined) yield* Watches.Watches.use((watches) => watches.releaseLeases)
        yield* Layer.build(Watches.Watches.layerWorker)
      }
      stopsOnSignal.gracefully = true
      const address = Context.get(server, HttpServer.HttpServer).address
      if (address._tag !== "UnixPathAddress") listeningPort = address.port
      const counters = config.redisUrl !== undefined ? "rate limits in REDIS_URL" : "rate limits in this process"
      yield* note(`dropshelf: serving ${Runtime.describeStorage(config)} on ${HttpServer.formatAddress(address)}, ${counters} (Ctrl-C to stop)`)
      return yield* Effect.never
      // The server's scope closes first (the drain, then the listener), then the storage.
    }).pipe(
      Effect.scoped,
      Effect.provide(watchesLayer(config, sinceHorizonDays, watchSettings, SmtpMail.layerFrom(accountMail, mailOrigin)))
    )
  }).pipe(Effect.scoped)

/**
 * `Watches` over the server's storage, its settings from the environment, with every service
 * `serve` runs against.
 */
export const watchesLayer = <M = never>(
  config: Runtime.DropshelfConfig,
  sinceHorizonDays: number,
  settings: Watches.WatchSettings,
  accountMail?: Layer.Layer<M> | undefined
) =>
  WebhookDelivery.layerWith(settings, !config.cachesOff.has("watch-filters")).pipe(
    Layer.provide(Runtime.layerCrypto),
    Layer.provideMerge(Runtime.serverLayer(config, RdapAvailability.layerFromEnv, sinceHorizonDays, accountMail))
  )
