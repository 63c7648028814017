import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { DropshelfConfig, signInUrl } from "../Config.ts"
import { emit } from "../Output.ts"
import { after, json, limit, operatorsTag, pageRequest, PLAN_NAMES, STORED_PLANS, views, withStorage } from "./Shared.ts"

/* `dropshelf accounts`: create an account, change its plan or owner email, list and show accounts. */

const accountsCreate = Command.make("create", {
  json,
  name: Flag.String("name").pipe(Flag.withDescription("Account label")),
  plan: Flag.Literals("plan", PLAN_NAMES).pipe(Flag.withDescription("Plan")),
  email: Flag.String("email").pipe(
    Flag.withDescription("The owner's email address, unique among accounts (case aside)"),
    Flag.optional
  )
}, ({ email, json, name, plan }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const account = yield* operators.createAccount(name, plan, Option.getOrUndefined(email))
    yield* emit(
      json,
      { id: account.id, plan: account.plan, ...(account.email === null ? {} : { email: account.email }) },
      () => `Created account ${account.id} (${account.name}) on plan ${account.plan}${account.email === null ? "" : `, owner ${account.email}`}.`
    )
  }))).pipe(Command.withDescription("Create an account"))

const accountsSetEmail = Command.make("set-email", {
  json,
  accountId: Argument.String("account-id"),
  email: Argument.String("address")
}, ({ accountId, email, json }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const account = yield* operators.setEmail(accountId, email)
    yield* emit(json, { id: account.id, email: account.email }, () => `Account ${account.id}'s owner email is now ${account.email}.`)
  }))).pipe(Command.withDescription("Set an account owner's email address, unique among accounts (case aside)"))

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

const accountsSignInLink = Command.make("sign-in-link", {
  json,
  accountId: Argument.String("account-id")
}, ({ accountId, json }) =>
  Effect.gen(function*() {
    const config = yield* DropshelfConfig
    return yield* withStorage(Effect.gen(function*() {
      const operators = yield* operatorsTag
      const link = yield* operators.issueSignInLink(accountId)
      const url = signInUrl(config, link.token)
      const expiresAt = new Date(link.expiresAt).toISOString()
      yield* emit(json, { url, expires_at: expiresAt }, () =>
        `Sign-in link for account ${accountId}, usable once until ${expiresAt}:\n${url}`)
    }))
  })).pipe(Command.withDescription(
    "Print a one-time link that signs a person in to the account's area (usable once, for 15 minutes); " +
      "its origin is DROPSHELF_PUBLIC_URL, or http://HOST:PORT"
  ))

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

export const accounts = Command.make("accounts").pipe(
  Command.withDescription("Manage accounts"),
  Command.withSubcommands([accountsCreate, accountsSetPlan, accountsSetEmail, accountsSignInLink, accountsList, accountsShow])
)
