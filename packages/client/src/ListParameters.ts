import type { Result, Schema } from "effect"
import { type Errors, ListQuery } from "@dropshelf/core"

/*
 * `GET /domains` parameters as a caller writes them: the query string's own names, with numbers,
 * booleans, lists and dates for values. They are read by the contract's own query schema, the
 * one the server applies, so a value it refuses is refused here with the server's message and
 * never sent.
 */

type Decoded = Schema.Struct<typeof ListQuery.ListQueryParameters>["Type"]

/** Every documented parameter of `GET /domains`, by its name in the query string. */
export type ListParameters = {
  readonly [Name in Exclude<keyof Decoded, "since">]?: Decoded[Name] | undefined
} & {
  /** Business plan only. An ISO 8601 instant, or a `Date`: the `synced_at` of the previous run's first page. */
  readonly since?: string | Date | undefined
}

const text = (value: unknown): string =>
  value instanceof Date ? value.toISOString() : Array.isArray(value) ? value.join(",") : String(value)

/** The query the contract's schema reads from the parameters, or the refusal naming the parameter. */
export const toListQuery = (parameters: ListParameters = {}): Result.Result<ListQuery.ListQuery, Errors.InvalidRequest> => {
  const raw: Record<string, string> = {}
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined) raw[name] = text(value)
  }
  return ListQuery.decodeListQuery(raw)
}
