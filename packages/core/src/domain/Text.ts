import { Result } from "effect"
import { InvalidRequest } from "./errors.ts"

/*
 * Text a caller sends that is stored or searched must have a UTF-8 form PostgreSQL accepts: no
 * NUL character (text columns refuse the byte) and no lone surrogate (it has no UTF-8 form).
 * Every decoder of a written or searched text asks this, so such input is a 400, never a 500.
 */

/** What makes `text` unstorable, or undefined when it is storable. */
export const unstorable = (text: string): string | undefined =>
  text.includes("\u0000") ? "a NUL character" : text.isWellFormed() ? undefined : "a lone surrogate"

/** `text` when storable; otherwise an InvalidRequest naming `parameter`. */
export const storable = (parameter: string, text: string): Result.Result<string, InvalidRequest> => {
  const flaw = unstorable(text)
  return flaw === undefined
    ? Result.succeed(text)
    : Result.fail(new InvalidRequest({ parameter, message: `${parameter} accepts text without NUL characters or lone surrogates; got ${flaw}` }))
}
