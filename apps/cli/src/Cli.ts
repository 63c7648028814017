import type { Ids, Listing, Operators, Plan } from "@dropshelf/core"
import { Effect, Option, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { DropshelfConfig } from "./Config.ts"
import { CommandRefused, UsageError } from "./Failure.ts"
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

const limit = Flag.Int("limit").pipe(
  Flag.withDescription("Rows per page, 1 to 1000"),
  Flag.withDefault(100)
)

const after = Flag.String("after").pipe(
  Flag.withDescription("Start after this id: the last one of the previous page, as printed under it"),
  Flag.optional
)

/** The page a list command asks for, or a usage error for a limit out of range. */
const pageRequest = (limit: number, after: Option.Option<string>) =>
  limit >= 1 && limit <= 1000
    ? Effect.succeed({ after: Option.getOrUndefined(after), limit })
    : Effect.fail(new UsageError({ message: "--limit must be between 1 and 1000" }))

const DURATION_UNITS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/** `90d`, `24h`, `30m`: a whole number of days, hours or minutes, in milliseconds. */
export const parseDuration = (flag: string, text: string): Effect.Effect<number, UsageError> => {
  const match = /^(\d{1,6})([mhd])$/.exec(text.trim())
  return match === null
    ? Effect.fail(new UsageError({ message: `${flag} takes a whole number of days, hours or minutes, like 90d, 24h or 30m; got "${text}"` }))
    : Effect.succeed(Number(match[1]) * DURATION_UNITS[match[2] as keyof typeof DURATION_UNITS])
}

const optionalDuration = (flag: string, value: Option.Option<string>) =>
  Option.isSome(value) ? Effect.map(parseDuration(flag, value.value), (ms): number | undefined => ms) : Effect.succeed(undefined)

/** Views.ts, with the core it needs, loaded by the commands that print records. */
const views = load(() => import("./Views.ts"))

const iso = (instant: number | null) => (instant === null ? "-" : new Date(instant).toISOString())

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
  })).pipe(
    Command.withDescription(SERVE_DESCRIPTION),
    Command.withShortDescription("Migrate, then serve the API until SIGINT/SIGTERM (serve --help: the settings it reads)")
  )

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
    // The good lines are loaded and the report is printed; a script still learns that some were not.
    if (report.rejected.length > 0) {
      return yield* new CommandRefused({
        message: `${report.rejected.length} line(s) rejected (the report on stdout names them); the other lines were loaded`
      })
    }
  }))).pipe(
    Command.withShortDescription("Upsert listings from NDJSON (a file, or - for stdin), streaming"),
    Command.withDescription([
      "Upsert listings from NDJSON (a file, or - for stdin), streaming.",
      "A bad line is reported with its number and reason, and the other lines still load.",
      "Exit code: 0 when every line loaded; 1 when any line was rejected, after the report (with",
      "--json, still the one document on stdout) and one line on stderr saying how many."
    ].join("\n  "))
  )

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

const accountsList = Command.make("list", { json, limit, after }, ({ after, json, limit }) =>
  Effect.gen(function*() {
    const page = yield* pageRequest(limit, after)
    return yield* withStorage(Effect.gen(function*() {
      const operators = yield* operatorsTag
      const View = yield* views
      const document = View.pageView(yield* operators.listAccounts(page), View.accountView)
      yield* emit(json, document, () =>
        View.table(
          ["ID", "NAME", "PLAN", "CREATED"],
          document.data.map((account) => [account.id, account.name, account.plan, account.created_at]),
          document.next
        ))
    }))
  })).pipe(Command.withDescription("List accounts, oldest first"))

const accountsShow = Command.make("show", { json, accountId: Argument.String("account-id") }, ({ accountId, json }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const View = yield* views
    const document = View.accountOverviewView(yield* operators.showAccount(accountId), Date.now())
    yield* emit(json, document, () =>
      [
        `Account ${document.id} (${document.name}), plan ${document.plan}${document.plan === document.reads_as ? "" : ` (reads as ${document.reads_as})`}, created ${document.created_at}`,
        `Reveals in ${document.reveals_this_month.month}: ${document.reveals_this_month.used}${document.reveals_this_month.limit === null ? "" : ` of ${document.reveals_this_month.limit}`}`,
        "",
        "Keys:",
        View.table(
          ["PREFIX", "NAME", "STATE", "CREATED", "LAST USED", "EXPIRES"],
          document.keys.map((key) => [key.prefix, key.name, key.state, key.created_at, key.last_used_at, key.expires_at])
        ),
        "",
        "Running holds:",
        View.table(
          ["ID", "LISTING", "HELD", "EXPIRES"],
          document.running_holds.map((hold) => [hold.id, hold.listing_id, hold.held_at, hold.expires_at])
        )
      ].join("\n"))
  }))).pipe(Command.withDescription("Show an account: plan, keys, reveals this month, running holds"))

const accounts = Command.make("accounts").pipe(
  Command.withDescription("Manage accounts"),
  Command.withSubcommands([accountsCreate, accountsSetPlan, accountsList, accountsShow])
)

const expiresIn = Flag.String("expires-in").pipe(
  Flag.withDescription("The key expires this long after now, then reads as revoked: 90d, 24h, 30m (default: never)"),
  Flag.optional
)

const keysCreate = Command.make("create", {
  json,
  accountId: Argument.String("account-id"),
  name: Flag.String("name").pipe(Flag.withDescription("Key label")),
  expiresIn
}, ({ accountId, expiresIn, json, name }) =>
  Effect.gen(function*() {
    const lifetimeMs = yield* optionalDuration("--expires-in", expiresIn)
    return yield* withStorage(Effect.gen(function*() {
      const operators = yield* operatorsTag
      const { key, secret } = yield* operators.createKey(accountId, name, lifetimeMs)
      const expiry = key.expiresAt === null ? {} : { expires_at: iso(key.expiresAt) }
      yield* emit(json, { key: secret, prefix: key.prefix, name: key.name, ...expiry }, () =>
        [
          `${secret}`,
          `Key ${key.prefix}… (${key.name}) for account ${key.accountId}${key.expiresAt === null ? "" : `, expiring ${iso(key.expiresAt)}`}. The secret above is shown once: store it now.`
        ].join("\n"))
    }))
  })).pipe(Command.withDescription("Create an API key; the secret is printed once; --expires-in 90d makes it expire"))

const keysRotate = Command.make("rotate", {
  json,
  prefix: Argument.String("prefix"),
  grace: Flag.String("grace").pipe(
    Flag.withDescription("How long the old key keeps working beside its successor: 24h, 7d, 0m (default 24h)"),
    Flag.withDefault("24h")
  ),
  expiresIn
}, ({ expiresIn, grace, json, prefix }) =>
  Effect.gen(function*() {
    const graceMs = yield* parseDuration("--grace", grace)
    const lifetimeMs = yield* optionalDuration("--expires-in", expiresIn)
    return yield* withStorage(Effect.gen(function*() {
      const operators = yield* operatorsTag
      const { key, retired, secret } = yield* operators.rotateKey(prefix, graceMs, lifetimeMs)
      const expiry = key.expiresAt === null ? {} : { expires_at: iso(key.expiresAt) }
      yield* emit(json, { key: secret, prefix: key.prefix, name: key.name, ...expiry, retired: retired.prefix, retires_at: iso(retired.expiresAt) }, () =>
        [
          `${secret}`,
          `Key ${key.prefix}… (${key.name}) replaces ${retired.prefix}…, which keeps working until ${iso(retired.expiresAt)} and then reads as revoked. The secret above is shown once: store it now.`
        ].join("\n"))
    }))
  })).pipe(Command.withDescription("Create a successor for a live key; the old key stops working after a grace period (--grace, default 24h)"))

const keysList = Command.make("list", {
  json,
  accountId: Argument.String("account-id"),
  limit,
  after
}, ({ accountId, after, json, limit }) =>
  Effect.gen(function*() {
    const page = yield* pageRequest(limit, after)
    return yield* withStorage(Effect.gen(function*() {
      const operators = yield* operatorsTag
      const View = yield* views
      const listed = yield* operators.listKeys(accountId, page)
      const now = Date.now()
      const document = View.pageView(listed, (key) => View.keyView(key, now))
      yield* emit(json, document, () =>
        View.table(
          ["ID", "PREFIX", "NAME", "STATE", "CREATED", "LAST USED", "EXPIRES", "REVOKED"],
          document.data.map((key) => [key.id, key.prefix, key.name, key.state, key.created_at, key.last_used_at, key.expires_at, key.revoked_at]),
          document.next
        ))
    }))
  })).pipe(Command.withDescription("List an account's keys (prefix, name, state, created, last used, expiry, revoked); never a secret"))

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
  Command.withSubcommands([keysCreate, keysRevoke, keysRotate, keysList])
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

const holdsList = Command.make("list", {
  json,
  account: Flag.String("account").pipe(Flag.withDescription("Only this account's holds"), Flag.optional),
  state: Flag.Literals("state", ["running", "any"] as const).pipe(
    Flag.withDescription("running: only holds running now; any: every hold, ended ones included (default: any)"),
    Flag.withDefault("any")
  ),
  limit,
  after
}, ({ account, after, json, limit, state }) =>
  Effect.gen(function*() {
    const page = yield* pageRequest(limit, after)
    return yield* withStorage(Effect.gen(function*() {
      const operators = yield* operatorsTag
      const View = yield* views
      const listed = yield* operators.listHolds({ accountId: Option.getOrUndefined(account), running: state === "running" }, page)
      const now = Date.now()
      const document = View.pageView(listed, (hold) => View.holdView(hold, now))
      yield* emit(json, document, () =>
        View.table(
          ["ID", "ACCOUNT", "LISTING", "STATE", "HELD", "EXPIRES", "ENDED"],
          document.data.map((hold) => [hold.id, hold.account_id, hold.listing_id, hold.state, hold.held_at, hold.expires_at, hold.ended_at]),
          document.next
        ))
    }))
  })).pipe(Command.withDescription("List holds, oldest first: every account's, or one's (--account), running or any (--state)"))

const holds = Command.make("holds").pipe(
  Command.withDescription("Read holds"),
  Command.withSubcommands([holdsList])
)

const listingsShow = Command.make("show", {
  json,
  id: Argument.String("id").pipe(Argument.withSchema(ListingIdArgument), Argument.withDescription("Listing id"))
}, ({ id, json }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const View = yield* views
    const document = View.listingOverviewView(yield* operators.showListing(id))
    yield* emit(json, document, () => {
      const stored = Object.entries(document.stored).map(([field, value]) => [field, JSON.stringify(value)] as const)
      const published = document.published === null
        ? ["(not published: the listing is not active)"]
        : Object.entries(document.published).map(([field, value]) => `  ${field}: ${JSON.stringify(value)}`)
      return [
        "Stored (exact, as imported):",
        ...stored.map(([field, value]) => `  ${field}: ${value}`),
        "",
        "Published to every plan (bands and ranges; the name only once revealed):",
        ...published,
        "",
        "By plan:",
        View.table(
          ["PLAN", "LISTED NOW", "VISIBLE FROM", "CAN REVEAL", "REVEAL SPENDS ALLOWANCE"],
          (["free", "pro", "business"] as const).map((name) => {
            const plan = document.plans[name]
            return [name, plan.listed, plan.visible_from, plan.can_reveal, plan.reveal_charged]
          })
        )
      ].join("\n")
    })
  }))).pipe(Command.withDescription("Show a listing: the exact figures imported beside what each plan reads"))

const listings = Command.make("listings").pipe(
  Command.withDescription("Read listings"),
  Command.withSubcommands([listingsShow])
)

const revealsList = Command.make("list", {
  json,
  accountId: Argument.String("account-id"),
  month: Flag.String("month").pipe(
    Flag.withSchema(Schema.String.check(Schema.isPattern(/^\d{4}-(0[1-9]|1[0-2])$/, { message: "--month is YYYY-MM" }))),
    Flag.withDescription("Only reveals of this calendar month (UTC), YYYY-MM"),
    Flag.optional
  ),
  limit,
  after
}, ({ accountId, after, json, limit, month }) =>
  Effect.gen(function*() {
    const page = yield* pageRequest(limit, after)
    return yield* withStorage(Effect.gen(function*() {
      const operators = yield* operatorsTag
      const View = yield* views
      const document = View.pageView(yield* operators.listReveals(accountId, Option.getOrUndefined(month), page), View.revealView)
      yield* emit(json, document, () =>
        View.table(
          ["LISTING", "REVEALED", "SPENT ALLOWANCE"],
          document.data.map((entry) => [entry.listing_id, entry.revealed_at, entry.charged]),
          document.next
        ))
    }))
  })).pipe(Command.withDescription("List an account's reveals, oldest first, of one month (--month) or all"))

const reveals = Command.make("reveals").pipe(
  Command.withDescription("Read the reveal ledger"),
  Command.withSubcommands([revealsList])
)

const backup = Command.make("backup", {
  json,
  file: Argument.String("file").pipe(Argument.withDescription("Where to write the backup (a gzipped tar of the data directory)"))
}, ({ file, json }) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const Backup = yield* load(() => import("./Backup.ts"))
    const report = yield* Backup.backup(config, file)
    yield* emit(json, report, () => `Backed up ${config.dataDir} to ${report.file} (${report.bytes} bytes).`)
  })).pipe(Command.withDescription("Back up the embedded database, consistently, while it serves (PostgreSQL: use pg_dump)"))

const restore = Command.make("restore", {
  json,
  file: Argument.String("file").pipe(Argument.withDescription("A file written by dropshelf backup"))
}, ({ file, json }) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const Backup = yield* load(() => import("./Backup.ts"))
    const report = yield* Backup.restore(config, file)
    yield* emit(json, report, () => `Restored ${report.restored} into ${report.dataDir}.`)
  })).pipe(Command.withDescription("Restore a backup into an empty data directory; refuses one that holds a database (PostgreSQL: use pg_restore)"))
const watchesList = Command.make("list", {
  json,
  accountId: Argument.String("account-id")
}, ({ accountId, json }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const watches = yield* operators.listWatches(accountId)
    // The document REST answers for GET /api/v1/watches.
    yield* emit(json, { data: watches }, () =>
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
  })).pipe(Command.withShortDescription("Run the watch worker without serving HTTP, until SIGINT/SIGTERM"), Command.withDescription(
    "Run the watch worker (matching and webhook delivery) without serving HTTP, until SIGINT/SIGTERM. Reads DROPSHELF_WEBHOOKS_ALLOW_PRIVATE (true: http and private or loopback receivers allowed), DROPSHELF_WATCH_POLL_MS, DROPSHELF_WATCH_BATCH, DROPSHELF_WATCH_LEASE_MS, DROPSHELF_WATCH_CONCURRENCY, DROPSHELF_WATCH_RETENTION_DAYS"
  ))

const demo = Command.make("demo", { json }, ({ json }) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const [Serve, Demo] = yield* load(() => Promise.all([import("./Serve.ts"), import("./Demo.ts")]))
    yield* Serve.serve(config, Demo.prepare(config, json))
  })).pipe(Command.withDescription("What `npm start` runs: a demo directory with one key per plan, then serve"))

export const root = Command.make("dropshelf").pipe(
  Command.withDescription("Operate a dropshelf expired-domain directory"),
  Command.withSubcommands([
    migrate,
    serve,
    worker,
    importCommand,
    delist,
    accounts,
    keys,
    holds,
    listings,
    reveals,
    masks,
    watchesCommand,
    seed,
    backup,
    restore,
    demo
  ])
)

export const run = Command.run(root, { version: "0.1.0" })
