import { Effect, Option, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { emit } from "../Output.ts"
import { after, json, limit, operatorsTag, pageRequest, views, withStorage } from "./Shared.ts"

/* What accounts did, read back: holds, the reveal ledger, watches. */

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

export const holds = Command.make("holds").pipe(
  Command.withDescription("Read holds"),
  Command.withSubcommands([holdsList])
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

export const reveals = Command.make("reveals").pipe(
  Command.withDescription("Read the reveal ledger"),
  Command.withSubcommands([revealsList])
)

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

export const watchesCommand = Command.make("watches").pipe(
  Command.withDescription("Inspect accounts' watches"),
  Command.withSubcommands([watchesList])
)
