import { Console, Effect } from "effect"

/**
 * A command's result: with `--json`, exactly one JSON document on stdout; otherwise the human
 * text. Nothing else of a command ever writes to stdout (logs and progress go to stderr).
 */
export const emit = (json: boolean, document: unknown, human: () => string): Effect.Effect<void> =>
  json ? Console.log(JSON.stringify(document)) : Console.log(human())

/** Human-only notes, on stderr so that stdout stays the result. */
export const note = (text: string): Effect.Effect<void> => Console.error(text)
