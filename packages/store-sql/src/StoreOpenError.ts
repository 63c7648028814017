import { Schema } from "effect"

/** The database could not be opened; `message` is one line, fit for an operator's terminal. */
export class StoreOpenError extends Schema.TaggedError<StoreOpenError>()("StoreOpenError", {
  reason: Schema.Literals(["DataDirInUse", "OpenFailed", "ConnectionFailed"]),
  message: Schema.String
}) {}

/** A cause as one line, for a `StoreOpenError`'s message. */
export const oneLine = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause)).replace(/\s+/g, " ").trim()
