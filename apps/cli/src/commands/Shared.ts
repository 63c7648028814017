import type { Listing, Operators, Plan } from "@dropshelf/core"
import { Effect, Option } from "effect"
import { Flag } from "effect/cli"
import { DropshelfConfig } from "../Config.ts"
import { UsageError } from "../Failure.ts"

/*
 * What the command modules share: the common flags, the lazy loading of what a handler uses, and
 * the storage a handler runs against. Like Cli.ts, it loads nothing past the command tree: the
 * handlers load the core, storage and server when they run.
 */

export const load = <A>(module: () => Promise<A>): Effect.Effect<A> => Effect.promise(module)

/** Exactly the members of `Union`, or a compile error naming what is missing or extra. */
type Exactly<Union, Values extends ReadonlyArray<unknown>> = [Exclude<Union, Values[number]>, Exclude<Values[number], Union>] extends
  [never, never] ? Values : { readonly missing: Exclude<Union, Values[number]>; readonly extra: Exclude<Values[number], Union> }

/*
 * The values flags accept, spelled here so that `--help` and a refused invocation need not load
 * the core; the compiler holds them equal to the core's.
 */
export const PLAN_NAMES = ["free", "pro", "business"] as const satisfies Exactly<Plan.PlanName, ["free", "pro", "business"]>
export const STORED_PLANS = ["free", "pro", "business", "lapsed"] as const satisfies Exactly<Plan.StoredPlan, ["free", "pro", "business", "lapsed"]>
export const DELIST_REASONS = ["sold", "blocked", "delisted"] as const satisfies Exactly<Listing.DelistReason, ["sold", "blocked", "delisted"]>

/** The core's operator use cases, loaded with it. */
export const operatorsTag = load(() => import("@dropshelf/core")).pipe(Effect.flatMap(({ Operators }) => Effect.service(Operators.Operators)))

export const json = Flag.Boolean("json").pipe(
  Flag.withDescription("Print exactly one JSON document on stdout instead of human text"),
  Flag.withDefault(false)
)

export const limit = Flag.Int("limit").pipe(
  Flag.withDescription("Rows per page, 1 to 1000"),
  Flag.withDefault(100)
)

export const after = Flag.String("after").pipe(
  Flag.withDescription("Start after this id: the last one of the previous page, as printed under it"),
  Flag.optional
)

/** The page a list command asks for, or a usage error for a limit out of range. */
export const pageRequest = (limit: number, after: Option.Option<string>) =>
  limit >= 1 && limit <= 1000
    ? Effect.succeed({ after: Option.getOrUndefined(after), limit })
    : Effect.fail(new UsageError({ message: "--limit must be between 1 and 1000" }))

/** Views.ts, with the core it needs, loaded by the commands that print records. */
export const views = load(() => import("../Views.ts"))

/**
 * Runs `body` against the configured storage: opened here and closed when it ends, or that of
 * the process serving the data directory (Storage.ts).
 */
export const withStorage = <A, E>(body: Effect.Effect<A, E, Operators.Operators>) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    const Storage = yield* load(() => import("../Storage.ts"))
    return yield* body.pipe(Effect.provide(Storage.operators(config)))
  })
