import fresh from "fresh"
import { hash } from "node:crypto"
import { HttpServerResponse } from "effect/http"
import type { HttpApiEndpoint } from "effect/http-api"
import { ListingJson } from "@dropshelf/core"
import { CONDITIONAL_READS, DropshelfApi } from "@dropshelf/api/Api"

/*
 * Conditional reads (RFC 9110 section 13.1.2), as GitHub answers them: the reads that carry an
 * `ETag` answer `If-None-Match` with a matching tag by 304, which the key middleware does not
 * count (docs/decisions/0210-conditional-reads-and-standard-headers.md). A tag is a hash of the
 * body this caller would receive, so it moves with anything that changes that body and never
 * tells one caller anything about another's.
 */

/** How a conditional read is tagged. */
export interface ConditionalRead {
  /** A list page: tagged weakly, without the `synced_at` that moves on every read. */
  readonly weak: boolean
  /** `/me`: its body tells the window, so it is made again once the request is counted. */
  readonly tellsCount: boolean
}

const { account, domains } = DropshelfApi.groups

/** The endpoints the contract names in `CONDITIONAL_READS`, each with how it is tagged. */
const READS: ReadonlyMap<HttpApiEndpoint.Top, ConditionalRead> = new Map<HttpApiEndpoint.Top, ConditionalRead>(
  Object.values(DropshelfApi.groups).flatMap((group) =>
    Object.values(group.endpoints)
      .filter((endpoint) => (CONDITIONAL_READS as ReadonlyArray<string>).includes(`${group.identifier}.${endpoint.identifier}`))
      .map((endpoint) => [endpoint, { weak: endpoint === domains.endpoints.list, tellsCount: endpoint === account.endpoints.me }] as const)
  )
)

/** The endpoint as a conditional read, when it is one. */
export const conditionalReadOf = (endpoint: HttpApiEndpoint.Top): ConditionalRead | undefined => READS.get(endpoint)

const digestOf = (bytes: Uint8Array) => hash("sha256", bytes, "base64url")

/**
 * The entity tag of a body. Strong, over the exact bytes, except a list page's: weak, over its
 * bytes without `synced_at`, which trails the clock and so moves on every read while the rows
 * stay the same. A copy whose watermark is older is the same page for its reader (an older
 * `since` only overlaps more), which is what a weak tag says.
 */
export const entityTag = (read: ConditionalRead, bytes: Uint8Array): string =>
  read.weak ? `W/"${digestOf(ListingJson.withoutWatermark(bytes))}"` : `"${digestOf(bytes)}"`

/** The tag of a successful read's response, set on it; other responses are left as they are. */
export const tagged = (
  read: ConditionalRead,
  response: HttpServerResponse.HttpServerResponse
): { readonly response: HttpServerResponse.HttpServerResponse; readonly tag: string | undefined } => {
  if (response.status !== 200 || response.body._tag !== "Uint8Array") return { response, tag: undefined }
  const tag = entityTag(read, response.body.body)
  return { response: HttpServerResponse.setHeader(response, "etag", tag), tag }
}

/**
 * Whether `If-None-Match` matches `tag` by weak comparison (RFC 9110 section 13.1.2): `*`, or
 * one tag of the list, `W/` or not. `fresh` (Express's) reads the list; it takes spaces as the
 * only whitespace between members, so tabs, which HTTP allows there too, are read as spaces.
 * Only the field itself is passed: `fresh` would also read `Cache-Control: no-cache` as a reload,
 * a rule for caches that an origin server does not follow.
 */
export const matches = (ifNoneMatch: string, tag: string): boolean =>
  fresh({ "if-none-match": ifNoneMatch.replaceAll("\t", " ") }, { etag: tag })

/** The answer to a conditional read whose tag matched: no body, the tag, and the headers given. */
export const notModified = (tag: string, headers: Record<string, string>) =>
  HttpServerResponse.empty({ status: 304, headers: { ...headers, etag: tag } })
