import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { DropshelfConfig } from "../Config.ts"
import { emit } from "../Output.ts"
import { json, load } from "./Shared.ts"

/* The commands that prepare or run a directory: migrate, serve, worker, demo. */

export const migrate = Command.make("migrate", { json }, ({ json }) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const Storage = yield* load(() => import("../Storage.ts"))
    const applied = yield* Storage.migrate(config)
    yield* emit(json, { applied }, () =>
      applied.length === 0 ? "No pending migrations." : `Applied ${applied.length} migration(s): ${applied.join(", ")}`)
  })).pipe(Command.withDescription("Apply pending migrations"))

/**
 * What `serve --help` says it reads, a setting or a group of them a line (docs/operations.md,
 * Configuration). The help prints the first line indented and the others as they are.
 */
const SERVE_DESCRIPTION = [
  "Migrate, then serve the API until SIGINT/SIGTERM.",
  "",
  "Storage: DATABASE_URL (PostgreSQL) with DROPSHELF_DB_POOL_SIZE and DROPSHELF_DB_PIPELINE",
  "  (its pool, the statements pipelined on a connection), or DROPSHELF_DATA_DIR (embedded);",
  "  REDIS_URL for rate limits shared by several instances.",
  "  DATABASE_READ_URL: streaming replicas of DATABASE_URL (comma-separated) that take reads",
  "  no further behind than DROPSHELF_READ_MAX_LAG_MS (1000).",
  "Besides, serve reads (docs/operations.md, Configuration):",
  "  DROPSHELF_REQUEST_TIMEOUT_MS",
  "  DROPSHELF_SNAPSHOT_IDLE_TIMEOUT_MS   how long a snapshot's client may leave bytes unread (60 s)",
  "  DROPSHELF_SNAPSHOT_MAX_MS            how long a bulk snapshot may last (30 minutes)",
  "  DROPSHELF_AUTH_FAILURES_PER_MINUTE, DROPSHELF_TRUSTED_PROXIES",
  "  DROPSHELF_RDAP_URL, DROPSHELF_RDAP_TIMEOUT_MS",
  "  DROPSHELF_RATE_LIMIT",
  "  DROPSHELF_SINCE_HORIZON_DAYS         how many days back the since feed reaches (30)",
  "  DROPSHELF_SHUTDOWN_TIMEOUT_MS, DROPSHELF_DRAIN_DELAY_MS   the drain on SIGTERM",
  "  DROPSHELF_METRICS_PORT               Prometheus /metrics on an operator port",
  "  DROPSHELF_LOG_LEVEL",
  "  DROPSHELF_WATCH_WORKER               whether serve runs the watch worker (true); the worker's",
  "    DROPSHELF_WATCH_POLL_MS, DROPSHELF_WATCH_BATCH, DROPSHELF_WATCH_LEASE_MS,",
  "    DROPSHELF_WATCH_CONCURRENCY, DROPSHELF_WATCH_RETENTION_DAYS (days matches are kept, 90)",
  "  DROPSHELF_WEBHOOKS_ALLOW_PRIVATE     true: http and private or loopback webhook receivers",
  "  OTEL_EXPORTER_OTLP_ENDPOINT and the other OTEL_* variables: traces and metrics over OTLP/HTTP"
].join("\n  ")

export const serve = Command.make("serve", {
  json,
  port: Flag.Int("port").pipe(Flag.withDescription("HTTP port (default: PORT, else 8080)"), Flag.optional),
  host: Flag.String("host").pipe(Flag.withDescription("Bind address (default: HOST, else 127.0.0.1)"), Flag.optional)
}, ({ host, port }) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const Serve = yield* load(() => import("../Serve.ts"))
    yield* Serve.serve({
      ...config,
      port: port._tag === "Some" ? port.value : config.port,
      host: host._tag === "Some" ? host.value : config.host
    })
  })).pipe(
    Command.withDescription(SERVE_DESCRIPTION),
    Command.withShortDescription("Migrate, then serve the API until SIGINT/SIGTERM (serve --help: the settings it reads)")
  )

export const worker = Command.make("worker", { json }, () =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const Worker = yield* load(() => import("../Worker.ts"))
    yield* Worker.work(config)
  })).pipe(Command.withShortDescription("Run the watch worker without serving HTTP, until SIGINT/SIGTERM"), Command.withDescription(
    "Run the watch worker (matching and webhook delivery) without serving HTTP, until SIGINT/SIGTERM. Reads DROPSHELF_WEBHOOKS_ALLOW_PRIVATE (true: http and private or loopback receivers allowed), DROPSHELF_WATCH_POLL_MS, DROPSHELF_WATCH_BATCH, DROPSHELF_WATCH_LEASE_MS, DROPSHELF_WATCH_CONCURRENCY, DROPSHELF_WATCH_RETENTION_DAYS"
  ))

export const demo = Command.make("demo", { json }, ({ json }) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const [Serve, Demo] = yield* load(() => Promise.all([import("../Serve.ts"), import("../Demo.ts")]))
    yield* Serve.serve(config, Demo.prepare(config, json))
  })).pipe(Command.withDescription("What `npm start` runs: a demo directory with one key per plan, then serve"))
