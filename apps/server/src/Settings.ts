import { Config, Schema } from "effect"

/*
 * How a numeric setting is read from the environment, in a module of its own so that the CLI's
 * configuration can read its own settings the same way without loading the server.
 */

/** A whole number in `[minimum, maximum]` from `name`, `fallback` when unset; anything else stops the start, naming `name`. */
export const wholeNumberBetween = (name: string, minimum: number, maximum: number, fallback: number): Config.Config<number> =>
  Config.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })), name).pipe(Config.withDefault(fallback))
