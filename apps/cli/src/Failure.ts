import { Cause, Option, Schema } from "effect"

/*
 * Every way a command can end badly, as one line for stderr and an exit code. The CLI's
 * counterpart of the server's error table: a domain error the operator can meet has its own
 * sentence here, and nothing ever prints a stack trace.
 */

/** Exit codes; documented in docs/decisions/0300-cli.md. */
export const ExitCode = {
  ok: 0,
  /** The directory refused the operation (unknown account, key or listing, key ceiling, a restore into a database that exists). */
  refused: 1,
  /** The invocation is wrong: unknown command or flag, bad value, unreadable input file. */
  usage: 2,
  /** The storage cannot be used: data directory held by another process, server unreachable, migration failed. */
  unavailable: 3,
  /** A bug: an unexpected defect. */
  internal: 70,
  /** Interrupted by SIGINT/SIGTERM before finishing (serve exits 0 instead: that is its normal end). */
  interrupted: 130
} as const

/** Set once a server is up: a signal then ends the process normally (exit 0), not as an interruption. */
export const stopsOnSignal = { gracefully: false }

/** A bad invocation detected by a command itself (a missing file, a value out of range). */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  message: Schema.String
}) {}

/** The operation cannot be done on this storage as it is (a restore into a non-empty database, a backup of a server). */
export class CommandRefused extends Schema.TaggedError<CommandRefused>()("CommandRefused", {
  message: Schema.String
}) {}

/** The configured storage cannot be opened or used (also raised as a defect where a use case has no error channel). */
export class StorageUnavailable extends Schema.TaggedError<StorageUnavailable>()("StorageUnavailable", {
  message: Schema.String
}) {}

export interface Report {
  readonly line: string
  readonly code: number
}

const flatten = (text: string): string => text.replace(/\s+/g, " ").trim()

const messageOf = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" && error.message !== "") {
    return error.message
  }
  return String(error)
}

const tagOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : undefined

const field = (error: unknown, name: string): unknown =>
  typeof error === "object" && error !== null ? (error as Record<string, unknown>)[name] : undefined

/** The failure of a command (a typed error, or a defect), as one line and an exit code. */
export const reportError = (error: unknown): Report => {
  switch (tagOf(error)) {
    case "AccountNotFound":
      return { code: ExitCode.refused, line: `no account with id "${String(field(error, "accountId"))}"` }
    case "EmailTaken":
      return { code: ExitCode.refused, line: `another account already has the email "${String(field(error, "email"))}"` }
    case "InvalidRequest":
      return { code: ExitCode.usage, line: messageOf(error) }
    case "KeyNotFound":
      return { code: ExitCode.refused, line: `no key with prefix "${String(field(error, "prefix"))}"` }
    case "KeyLimitReached":
      return {
        code: ExitCode.refused,
        line: `the account already has ${String(field(error, "limit"))} live keys, the most its plan allows; revoke one first`
      }
    case "ListingNotFound":
      return { code: ExitCode.refused, line: `no listing with id "${String(field(error, "listingId"))}"` }
    case "CommandRefused":
    case "RestoreRefused":
      return { code: ExitCode.refused, line: messageOf(error) }
    case "UsageError":
      return { code: ExitCode.usage, line: messageOf(error) }
    case "StorageUnavailable":
    case "StoreOpenError":
      return { code: ExitCode.unavailable, line: messageOf(error) }
    case "ConfigError":
    case "SourceError":
    case "SchemaError":
      return { code: ExitCode.usage, line: `invalid configuration: ${messageOf(error)}` }
    case "ShowHelp": {
      const errors = field(error, "errors")
      if (Array.isArray(errors) && errors.length > 0) {
        return { code: ExitCode.usage, line: `${errors.map(messageOf).join("; ")} (see --help)` }
      }
      return { code: ExitCode.usage, line: "a command is required (see --help)" }
    }
    case "UserError":
    case "UnrecognizedOption":
    case "DuplicateOption":
    case "MissingOption":
    case "MissingArgument":
    case "UnexpectedArgument":
    case "InvalidValue":
    case "UnknownSubcommand":
    case "ValidationError":
      return { code: ExitCode.usage, line: messageOf(error) }
    default:
      return { code: ExitCode.refused, line: messageOf(error) }
  }
}

/** A whole cause as one line: its first typed failure, else its first defect; `undefined` if only interrupted. */
export const reportCause = (cause: Cause.Cause<unknown>): Report | undefined => {
  if (Cause.hasInterruptsOnly(cause)) return undefined
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) {
    const report = reportError(failure.value)
    return { code: report.code, line: flatten(report.line) }
  }
  const defect = Cause.squash(cause)
  if (tagOf(defect) === "StorageUnavailable") return { code: ExitCode.unavailable, line: flatten(messageOf(defect)) }
  const storage = storageDefect(defect)
  if (storage !== undefined) return { code: ExitCode.unavailable, line: flatten(storage) }
  return { code: ExitCode.internal, line: `internal error: ${flatten(describeDefect(defect)).slice(0, 500)}` }
}

/** A defect's message with those of its causes (`SqlError` → reason → driver error), most general first. */
const describeDefect = (defect: unknown): string => {
  const messages: Array<string> = []
  let current: unknown = defect
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const message = messageOf(current)
    if (message !== "" && !messages.includes(message) && message !== "[object Object]") messages.push(message)
    current = field(current, "reason") ?? field(current, "cause")
  }
  return messages.join(": ")
}

/**
 * Infrastructure failures reach the CLI as defects (the adapters keep only domain errors typed).
 * Those that say the storage itself is unusable get the storage exit code and their own message.
 */
const storageDefect = (defect: unknown): string | undefined => {
  const text = describeDefect(defect)
  if (/relation "[^"]+" does not exist/i.test(text)) {
    return `the database has no dropshelf schema yet: run \`dropshelf migrate\` first (${text})`
  }
  if (/\block(ed)?\b|in use by|held by/i.test(text)) return text
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|password authentication failed|does not exist/i.test(text)) {
    return `cannot use the database: ${text}`
  }
  return undefined
}
