import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { UsageError } from "../Failure.ts"
import { emit } from "../Output.ts"
import { after, json, limit, operatorsTag, pageRequest, views, withStorage } from "./Shared.ts"

/* `dropshelf keys`: create, revoke, rotate and list API keys, with their lifetimes as durations. */

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

const iso = (instant: number | null) => (instant === null ? "-" : new Date(instant).toISOString())

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
          ["ID", "PREFIX", "NAME", "STATE", "CREATED", "LAST USED", "EXPIRES", "REVOKED", "APPLICATION"],
          document.data.map((key) => [
            key.id,
            key.prefix,
            key.name,
            key.state,
            key.created_at,
            key.last_used_at,
            key.expires_at,
            key.revoked_at,
            key.application === null ? null : `${key.application.client_id} (${key.application.scopes.join(" ")})`
          ]),
          document.next
        ))
    }))
  })).pipe(Command.withDescription(
    "List an account's keys (prefix, name, state, created, last used, expiry, revoked) and connected applications (client, scopes); never a secret"
  ))

const keysRevoke = Command.make("revoke", {
  json,
  prefix: Argument.String("prefix")
}, ({ json, prefix }) =>
  withStorage(Effect.gen(function*() {
    const operators = yield* operatorsTag
    const key = yield* operators.revokeKey(prefix)
    yield* emit(json, { revoked: key.prefix }, () => `Revoked key ${key.prefix}.`)
  }))).pipe(Command.withDescription("Revoke an API key"))

export const keys = Command.make("keys").pipe(
  Command.withDescription("Manage API keys"),
  Command.withSubcommands([keysCreate, keysRevoke, keysRotate, keysList])
)
