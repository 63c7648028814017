import type { Ids } from "@dropshelf/core"
import { Effect, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { CommandRefused, UsageError } from "../Failure.ts"
import { emit } from "../Output.ts"
import * as Progress from "../Progress.ts"
import { DELIST_REASONS, json, load, operatorsTag, views, withStorage } from "./Shared.ts"

/* The directory's listings: import, delist, show one, backfill masks, seed a synthetic directory. */

export const importCommand = Command.make("import", {
  json,
  source: Argument.String("file").pipe(Argument.withDescription("NDJSON file, or - for standard input"))
}, ({ json, source }) =>
  withStorage(Effect.gen(function*() {
    const Import = yield* load(() => import("../Import.ts"))
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

export const delist = Command.make("delist", {
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

export const listings = Command.make("listings").pipe(
  Command.withDescription("Read listings"),
  Command.withSubcommands([listingsShow])
)

const masksBackfill = Command.make("backfill", { json }, ({ json }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const updated = yield* operators.backfillMasks
    yield* emit(json, { updated }, () => `Computed mask_hint on ${updated} listing(s).`)
  }))).pipe(Command.withDescription("Compute mask_hint where it is null"))

export const masks = Command.make("masks").pipe(
  Command.withDescription("Maintain listing masks"),
  Command.withSubcommands([masksBackfill])
)

export const seed = Command.make("seed", {
  json,
  listings: Flag.Int("listings").pipe(Flag.withDescription("How many listings to add")),
  seed: Flag.Int("seed").pipe(Flag.withDescription("PRNG seed: the same seed gives the same directory"), Flag.withDefault(1))
}, ({ json, listings, seed }) =>
  Effect.gen(function*() {
    if (listings < 0) return yield* new UsageError({ message: "--listings must be 0 or more" })
    return yield* withStorage(Effect.gen(function*() {
      const Seed = yield* load(() => import("../Seed.ts"))
      const progress = yield* Progress.make("seed")
      const report = yield* Seed.seed(listings, seed, progress)
      yield* emit(json, { inserted: report.inserted }, () =>
        `Seeded ${listings} listing(s) with seed ${seed}: ${report.inserted} new, ${report.updated} already there (updated).`)
    }))
  })).pipe(Command.withDescription("Add a synthetic, realistic directory (deterministic per seed)"))
