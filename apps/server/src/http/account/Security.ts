import { createHash, timingSafeEqual } from "node:crypto"
import type { HttpServerRequest } from "effect/http"
import { Session } from "@dropshelf/core"

/*
 * The account area's session cookie, CSRF tokens, same-origin check and response headers
 * (docs/decisions/0800-sessions-and-csrf.md). Only the account area's routes call these: the
 * API under /api/v1 neither reads nor sets a cookie.
 */

/** `__Host-`: the browser keeps it only if Secure, for this host alone, with Path=/. */
export const SESSION_COOKIE = "__Host-dropshelf_session"

const COOKIE_ATTRIBUTES = "Path=/; Secure; HttpOnly; SameSite=Lax"

/** Kept by the browser as long as the session can live; the server ends it sooner when idle. */
export const sessionCookie = (token: string): string =>
  `${SESSION_COOKIE}=${token}; ${COOKIE_ATTRIBUTES}; Max-Age=${Math.floor(Session.ABSOLUTE_MS / 1000)}`

export const clearedSessionCookie = `${SESSION_COOKIE}=; ${COOKIE_ATTRIBUTES}; Max-Age=0`

/**
 * Where to go once signed in, when a page sent the person to sign in first: only an
 * application's consent page, so the cookie can never send anyone off the site.
 */
export const RETURN_COOKIE = "__Host-dropshelf_return"
const RETURN_PATH = /^\/oauth\/consent\/[A-Za-z0-9_-]{1,64}$/

export const returnCookie = (path: string): string => `${RETURN_COOKIE}=${path}; ${COOKIE_ATTRIBUTES}; Max-Age=1800`

export const returnPathOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const value = request.cookies[RETURN_COOKIE]
  return value !== undefined && RETURN_PATH.test(value) ? value : undefined
}

/** The session token the browser sent, if it has the shape of one. */
export const sessionTokenOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const value = request.cookies[SESSION_COOKIE]
  return value !== undefined && Session.isSessionToken(value) ? value : undefined
}

/**
 * The CSRF token of a session: derived from its secret token, so it needs no storage, changes
 * with every session, and cannot be computed by a page that cannot read the HttpOnly cookie.
 */
export const csrfTokenOf = (sessionToken: string): string =>
  createHash("sha256").update(`dropshelf-csrf:${sessionToken}`).digest("base64url")

/** Whether a form's token is the session's, compared in constant time. */
export const isCsrfToken = (sessionToken: string, candidate: string | undefined): boolean => {
  if (candidate === undefined) return false
  const expected = Buffer.from(csrfTokenOf(sessionToken))
  const given = Buffer.from(candidate)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/**
 * Whether a state-changing request comes from this site's own pages. A current browser says so
 * in `Sec-Fetch-Site`, which a page cannot forge. Without it, `Origin` must be `publicUrl` or
 * name the `Host` the request was sent to; `Origin: null` (what a browser sends from an opaque
 * origin, and for any form under `Referrer-Policy: no-referrer`) is then refused. A request with
 * neither header (not a browser's) is judged by its CSRF token alone.
 */
export const isSameOrigin = (request: HttpServerRequest.HttpServerRequest, publicUrl: string | undefined): boolean => {
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined) return site === "same-origin"
  const origin = request.headers.origin
  if (origin === undefined) return true
  if (origin === publicUrl) return true
  try {
    return origin !== "null" && new URL(origin).host === request.headers.host
  } catch {
    return false
  }
}

const contentSecurityPolicy = (formAction: string) =>
  `default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`

const CONTENT_SECURITY_POLICY = contentSecurityPolicy("'self'")

/**
 * The headers of a page whose form ends in a redirect to `destination` (an application's
 * redirect URI): browsers hold the redirects a form starts to its `form-action` too.
 */
export const pageHeadersRedirectingTo = (destination: URL): Readonly<Record<string, string>> => ({
  ...PAGE_HEADERS,
  "content-security-policy": contentSecurityPolicy(
    `'self' ${destination.protocol === "http:" || destination.protocol === "https:" ? destination.origin : destination.protocol}`
  )
})

/** Every account page's headers: no inline script, no framing, no referrer, no sniffing, never cached. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "cache-control": "no-store"
}
