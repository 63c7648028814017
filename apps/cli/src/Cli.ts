import type { Ids, Listing, Operators, Plan } from "@dropshelf/core"
import { Effect, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { DropshelfConfig } from "./Config.ts"
import { UsageError } from "./Failure.ts"
import { emit } from "./Output.ts"
import * as Progress from "./Progress.ts"

/*
 * The `dropshelf` command tree, exactly as product.md's Operator interface table: names, flags,
 * `--json` documents. Handlers are thin: decode, call the core's Operators, print. Everything
 * past the tree (storage, the server, import, seed) is loaded by the handler that needs it, so
 * `--help` or a refused invocation loads none of it.
 */

const load = <A>(module: () => Promise<A>): Effect.Effect<A> => Effect.promise(module)

/** Exactly the members of `Union`, or a compile error naming what is missing or extra. */
type Exactly<Union, Values extends ReadonlyArray<unknown>> = [Exclude<Union, Values[number]>, Exclude<Values[number], Union>] extends
  [never, never] ? Values : { readonly missing: Exclude<Union, Values[number]>; readonly extra: Exclude<Values[number], Union> }

/*
 * The values flags accept, spelled here so that `--help` and a refused invocation need not load
 * the core; the compiler holds them equal to the core's.
 */
const PLAN_NAMES = ["free", "pro", "business"] as const satisfies Exactly<Plan.PlanName, ["free", "pro", "business"]>
const STORED_PLANS = ["free", "pro", "business", "lapsed"] as const satisfies Exactly<Plan.StoredPlan, ["free", "pro", "business", "lapsed"]>
const DELIST_REASONS = ["sold", "blocked", "delisted"] as const satisfies Exactly<Listing.DelistReason, ["sold", "blocked", "delisted"]>

/** The core's operator use cases, loaded with it. */
const operatorsTag = load(() => import("@dropshelf/core")).pipe(Effect.flatMap(({ Operators }) => Effect.service(Operators.Operators)))

const json = Flag.Boolean("json").pipe(
  Flag.withDescription("Print exactly one JSON document on stdout instead of human text"),
  Flag.withDefault(false)
)

/**
 * Runs `body` against the configured storage: opened here and closed when it ends, or that of
 * the process serving the data directory (Storage.ts).
 */
const withStorage = <A, E>(body: Effect.Effect<A, E, Operators.Operators>) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const Storage = yield* load(() => import("./Storage.ts"))
    return yield* body.pipe(Effect.provide(Storage.operators(config)))
  })

const migrate = Command.make("migrate", { json }, ({ json }) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const Storage = yield* load(() => import("./Storage.ts"))
    const applied = yield* Storage.migrate(config)
    yield* emit(json, { applied }, () =>
      applied.length === 0 ? "No pending migrations." : `Applied ${applied.length} migration(s): ${applied.join(", ")}`)
  })).pipe(Command.withDescription("Apply pending migrations"))

const serve = Command.make("serve", {
  json,
  port: Flag.Int("port").pipe(Flag.withDescription("HTTP port (default: PORT, else 8080)"), Flag.optional),
  host: Flag.String("host").pipe(Flag.withDescription("Bind address (default: HOST, else 127.0.0.1)"), Flag.optional)
}, ({ host, port }) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const Serve = yield* load(() => import("./Serve.ts"))
    yield* Serve.serve({
      ...config,
      port: port._tag === "Some" ? port.value : config.port,
      host: host._tag === "Some" ? host.value : config.host
    })
  })).pipe(Command.withDescription(
    "Migrate, then serve the API until SIGINT/SIGTERM. Besides the storage settings, serve reads (docs/operations.md, Configuration): DROPSHELF_REQUEST_TIMEOUT_MS, DROPSHELF_AUTH_FAILURES_PER_MINUTE, DROPSHELF_TRUSTED_PROXIES, DROPSHELF_RDAP_URL, DROPSHELF_RDAP_TIMEOUT_MS, DROPSHELF_RATE_LIMIT, DROPSHELF_SINCE_HORIZON_DAYS (how many days back the since feed reaches, default 30), DROPSHELF_SHUTDOWN_TIMEOUT_MS and DROPSHELF_DRAIN_DELAY_MS (the drain on SIGTERM), DROPSHELF_METRICS_PORT (Prometheus /metrics on an operator port), DROPSHELF_LOG_LEVEL, DROPSHELF_WATCH_WORKER (whether serve runs the watch worker, default true) with the worker's DROPSHELF_WATCH_POLL_MS, DROPSHELF_WATCH_BATCH, DROPSHELF_WATCH_LEASE_MS and DROPSHELF_WATCH_CONCURRENCY, DROPSHELF_WEBHOOKS_ALLOW_PRIVATE (true: http and private or loopback webhook receivers allowed), and OTEL_EXPORTER_OTLP_ENDPOINT with the other OTEL_* variables (traces and metrics over OTLP/HTTP)"
  ))

const importCommand = Command.make("import", {
  json,
  source: Argument.String("file").pipe(Argument.withDescription("NDJSON file, or - for standard input"))
}, ({ json, source }) =>
  withStorage(Effect.gen(function*() {
    const Import = yield* load(() => import("./Import.ts"))
    const progress = yield* Progress.make("import")
    const report = yield* Import.importNdjson(source, progress)
    yield* emit(json, report, () =>
      [
        `Imported ${report.inserted} new and ${report.updated} updated listing(s); ${report.rejected.length} line(s) rejected.`,
        ...report.rejected.slice(0, 20).map((rejection) => `  line ${rejection.line}: ${rejection.error}`),
        ...(report.rejected.length > 20 ? [`  … and ${report.rejected.length - 20} more (use --json for all)`] : [])
      ].join("\n"))
  }))).pipe(Command.withDescription("Upsert listings from NDJSON (a file, or - for stdin), streaming"))

const ListingIdArgument = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9]{8}$/, { message: "a listing id is 8 characters of [A-Za-z0-9]" }))

const delist = Command.make("delist", {
  json,
  ids: Argument.String("id").pipe(
    Argument.withSchema(ListingIdArgument),
    Argument.variadic({ min: 1 }),
    Argument.withDescription("Listing ids")
  ),
  reason: Flag.Literals("reason", DELIST_REASONS).pipe(
    Flag.withDescription("Why the listings leave the directory"),
    Flag.withDefault("delisted")
  )
}, ({ ids, json, reason }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const delisted = yield* operators.delist(ids as ReadonlyArray<Ids.ListingId>, reason)
    yield* emit(json, { delisted }, () =>
      delisted.length === 0
        ? "No listing changed (unknown ids, or already out of the directory)."
        : `Delisted (${reason}): ${delisted.join(" ")}`)
  }))).pipe(Command.withDescription("Take listings out of the directory (they become tombstones)"))

const accountsCreate = Command.make("create", {
  json,
  name: Flag.String("name").pipe(Flag.withDescription("Account label")),
  plan: Flag.Literals("plan", PLAN_NAMES).pipe(Flag.withDescription("Plan"))
}, ({ json, name, plan }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const account = yield* operators.createAccount(name, plan)
    yield* emit(json, { id: account.id, plan: account.plan }, () => `Created account ${account.id} (${account.name}) on plan ${account.plan}.`)
  }))).pipe(Command.withDescription("Create an account"))

const accountsSetPlan = Command.make("set-plan", {
  json,
  accountId: Argument.String("account-id"),
  plan: Argument.Literals("plan", STORED_PLANS)
}, ({ accountId, json, plan }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const account = yield* operators.setPlan(accountId, plan)
    yield* emit(json, { id: account.id, plan: account.plan }, () =>
      `Account ${account.id} is now on plan ${account.plan}${account.plan === "lapsed" ? " (reads as free)" : ""}.`)
  }))).pipe(Command.withDescription("Change an account's plan; lapsed reads as free"))

const accounts = Command.make("accounts").pipe(
  Command.withDescription("Manage accounts"),
  Command.withSubcommands([accountsCreate, accountsSetPlan])
)

const keysCreate = Command.make("create", {
  json,
  accountId: Argument.String("account-id"),
  name: Flag.String("name").pipe(Flag.withDescription("Key label"))
}, ({ accountId, json, name }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const { key, secret } = yield* operators.createKey(accountId, name)
    yield* emit(json, { key: secret, prefix: key.prefix, name: key.name }, () =>
      [`${secret}`, `Key ${key.prefix}… (${key.name}) for account ${key.accountId}. The secret above is shown once: store it now.`].join("\n"))
  }))).pipe(Command.withDescription("Create an API key; the secret is printed once"))

const keysRevoke = Command.make("revoke", {
  json,
  prefix: Argument.String("prefix")
}, ({ json, prefix }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const key = yield* operators.revokeKey(prefix)
    yield* emit(json, { revoked: key.prefix }, () => `Revoked key ${key.prefix}.`)
  }))).pipe(Command.withDescription("Revoke an API key"))

const keys = Command.make("keys").pipe(
  Command.withDescription("Manage API keys"),
  Command.withSubcommands([keysCreate, keysRevoke])
)

const masksBackfill = Command.make("backfill", { json }, ({ json }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const updated = yield* operators.backfillMasks
    yield* emit(json, { updated }, () => `Computed mask_hint on ${updated} listing(s).`)
  }))).pipe(Command.withDescription("Compute mask_hint where it is null"))

const masks = Command.make("masks").pipe(
  Command.withDescription("Maintain listing masks"),
  Command.withSubcommands([masksBackfill])
)

const seed = Command.make("seed", {
  json,
  listings: Flag.Int("listings").pipe(Flag.withDescription("How many listings to add")),
  seed: Flag.Int("seed").pipe(Flag.withDescription("PRNG seed: the same seed gives the same directory"), Flag.withDefault(1))
}, ({ json, listings, seed }) =>
  Effect.gen(function*() {
    if (listings < 0) return yield* new UsageError({ message: "--listings must be 0 or more" })
    return yield* withStorage(Effect.gen(function*() {
      const Seed = yield* load(() => import("./Seed.ts"))
      const progress = yield* Progress.make("seed")
      const report = yield* Seed.seed(listings, seed, progress)
      yield* emit(json, { inserted: report.inserted }, () =>
        `Seeded ${listings} listing(s) with seed ${seed}: ${report.inserted} new, ${report.updated} already there (updated).`)
    }))
  })).pipe(Command.withDescription("Add a synthetic, realistic directory (deterministic per seed)"))

const watchesList = Command.make("list", {
  json,
  accountId: Argument.String("account-id")
}, ({ accountId, json }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const watches = yield* operators.listWatches(accountId)
    yield* emit(json, { watches }, () =>
      watches.length === 0
        ? `Account ${accountId} has no watches.`
        : watches.map((watch) =>
          `${watch.id}  ${JSON.stringify(watch.name)}  query ${JSON.stringify(watch.query)}${watch.paused ? "  paused" : ""}  webhook ${
            watch.webhook === null ? "none" : `${watch.webhook.url} (${watch.webhook.state}${watch.webhook.state_reason === null ? "" : `: ${watch.webhook.state_reason}`})`
          }`
        ).join("\n"))
  }))).pipe(Command.withDescription("List an account's watches (never their secrets)"))

const watchesCommand = Command.make("watches").pipe(
  Command.withDescription("Inspect accounts' watches"),
  Command.withSubcommands([watchesList])
)

const worker = Command.make("worker", { json }, () =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const Worker = yield* load(() => import("./Worker.ts"))
    yield* Worker.work(config)
  })).pipe(Command.withDescription(
    "Run the watch worker (matching and webhook delivery) without serving HTTP, until SIGINT/SIGTERM. Reads DROPSHELF_WEBHOOKS_ALLOW_PRIVATE (true: http and private or loopback receivers allowed), DROPSHELF_WATCH_POLL_MS, DROPSHELF_WATCH_BATCH, DROPSHELF_WATCH_LEASE_MS, DROPSHELF_WATCH_CONCURRENCY"
  ))

const demo = Command.make("demo", { json }, ({ json }) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const [Serve, Demo] = yield* load(() => Promise.all([import("./Serve.ts"), import("./Demo.ts")]))
    yield* Serve.serve(config, Demo.prepare(config, json))
  })).pipe(Command.withDescription("What `npm start` runs: a demo directory with one key per plan, then serve"))

export const root = Command.make("dropshelf").pipe(
  Command.withDescription("Operate a dropshelf expired-domain directory"),
  Command.withSubcommands([migrate, serve, worker, importCommand, delist, accounts, keys, masks, watchesCommand, seed, demo])
)

export const run = Command.run(root, { version: "0.1.0" })
