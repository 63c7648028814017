import type { ListQuery } from "@dropshelf/core"

/**
 * Every query parameter of a request target as sent, repeated ones as arrays: the core's
 * `ListQuery` is the one reader of `GET /domains` parameters, so its messages are the ones
 * callers see. Read exactly as the framework's own decoding reads it: a `#` (which a request
 * line may not carry, but Node passes through) is part of the value it is in, which is then
 * refused by name like any other value the API does not accept.
 */
export const rawQueryOf = (url: string): ListQuery.RawQuery => {
  const query: Record<string, string | Array<string>> = {}
  const search = url.indexOf("?")
  if (search === -1) return query
  for (const [name, value] of new URLSearchParams(url.slice(search + 1))) {
    const existing = query[name]
    query[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value]
  }
  return query
}
