import { Result } from "effect"
import { InvalidRequest } from "./errors.ts"
import { storable } from "./Text.ts"

/*
 * An account owner's email address. Checked for shape only (one `@`, a dotted domain, no
 * spaces or control characters): whether it receives mail is for a sign-in link to find out.
 * Stored as written, trimmed; two addresses that differ only in case are the same owner, so
 * stores compare `key(email)`.
 */

/** RFC 5321's ceiling on a path, and so on an address that can receive mail. */
export const MAX_LENGTH = 254

const SHAPE = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}.]+(\.[^\s@\p{Cc}.]+)+$/u

/** The address a caller wrote, trimmed, or an InvalidRequest naming `parameter`. */
export const decode = (parameter: string, text: string): Result.Result<string, InvalidRequest> =>
  Result.flatMap(storable(parameter, text.trim()), (email) => {
    const flaw = email.length > MAX_LENGTH
      ? `more than ${MAX_LENGTH} characters`
      : SHAPE.test(email)
      ? undefined
      : "no address of the form name@example.com"
    return flaw === undefined
      ? Result.succeed(email)
      : Result.fail(new InvalidRequest({ parameter, message: `${parameter} must be an email address; got ${flaw}` }))
  })

/** What makes two addresses one owner's: the same text, case aside. */
export const key = (email: string): string => email.toLowerCase()
