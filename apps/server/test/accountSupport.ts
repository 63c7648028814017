import { Clock, Effect } from "effect"
import { expect } from "vitest"
import { Operators, type Plan, Sessions } from "@dropshelf/core"
import type { Running } from "./harness.ts"

/* What the account area's tests share: accounts with sign-in links, and a browser-like client. */

export const SESSION_COOKIE = "__Host-dropshelf_session"

/** An account on `plan` and a one-time sign-in link for it, issued `ageMs` ago. */
export const accountWithLink = (server: Running, plan: Plan.StoredPlan, name: string, ageMs = 0) =>
  server.run(Effect.gen(function*() {
    const account = yield* (yield* Operators.Operators).createAccount(name, plan)
    const sessions = yield* Sessions.Sessions
    const issue = sessions.issueSignInLink(account.id)
    const link = ageMs === 0
      ? yield* issue
      : yield* Effect.flatMap(Clock.currentTimeMillis, (now) => issue.pipe(Effect.provideService(Clock.Clock, fixedClock(now - ageMs))))
    return { account, token: link.token, url: `${server.base}/signin?token=${link.token}` }
  }))

/** Another link for an account. */
export const linkFor = (server: Running, accountId: string) =>
  server.run(Sessions.Sessions.use((sessions) => sessions.issueSignInLink(accountId))).then((link) => link.token)

const fixedClock = (now: number): Clock.Clock => ({
  currentTimeMillisUnsafe: () => now,
  currentTimeMillis: Effect.succeed(now),
  currentTimeNanosUnsafe: () => BigInt(now) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(now) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => BigInt(now) * 1_000_000n,
  monotonicTimeNanos: Effect.succeed(BigInt(now) * 1_000_000n),
  sleep: () => Effect.void
})

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly setCookies: ReadonlyArray<string>
}

/** What every account page is sent with: HTML, the strict policy and headers, and no inline script or style. */
export const expectAccountPageHeaders = (answer: Answer, path: string) => {
  expect(answer.headers.get("content-type"), path).toBe("text/html; charset=utf-8")
  expect(answer.headers.get("content-security-policy")).toBe(
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
  )
  expect(answer.headers.get("referrer-policy")).toBe("no-referrer")
  expect(answer.headers.get("x-content-type-options")).toBe("nosniff")
  expect(answer.headers.get("cache-control")).toBe("no-store")
  expect(answer.text).not.toMatch(/<script>|<script [^>]*>[^<]|\son[a-z]+=|style=/)
}

/**
 * A request as a browser on the server's own pages sends it (`Sec-Fetch-Site: same-origin`,
 * the session cookie when given), redirects not followed. `headers` adds or overrides; a header
 * given as `undefined` is left out.
 */
export const send = async (
  server: Running,
  method: string,
  path: string,
  options: { readonly session?: string | undefined; readonly form?: Record<string, string>; readonly headers?: Record<string, string | undefined> } = {}
): Promise<Answer> => {
  const headers: Record<string, string> = {}
  const wanted: Record<string, string | undefined> = {
    ...(method === "GET" ? {} : { "sec-fetch-site": "same-origin", origin: server.base }),
    ...(options.session === undefined ? {} : { cookie: `${SESSION_COOKIE}=${options.session}` }),
    ...(options.form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" }),
    ...options.headers
  }
  for (const [name, value] of Object.entries(wanted)) if (value !== undefined) headers[name] = value
  const response = await fetch(`${server.base}${path}`, {
    method,
    headers,
    redirect: "manual",
    ...(options.form === undefined ? {} : { body: new URLSearchParams(options.form).toString() })
  })
  return { status: response.status, headers: response.headers, text: await response.text(), setCookies: response.headers.getSetCookie() }
}

/** The session token a response sets, if any. */
export const sessionSet = (answer: Answer): string | undefined => {
  const cookie = answer.setCookies.find((line) => line.startsWith(`${SESSION_COOKIE}=`))
  const value = cookie?.slice(SESSION_COOKIE.length + 1).split(";")[0]
  return value === undefined || value === "" ? undefined : value
}

/** Redeems a link as the Continue button does; the new session's token. */
export const signIn = async (server: Running, token: string, previous?: string): Promise<string> => {
  const answer = await send(server, "POST", "/signin", { form: { token }, session: previous })
  const session = sessionSet(answer)
  if (answer.status !== 303 || session === undefined) throw new Error(`sign-in failed: ${answer.status} ${answer.text.slice(0, 200)}`)
  return session
}

/** The CSRF token a signed-in page carries in its forms. */
export const csrfOf = (page: string): string => {
  const match = /name="csrf" value="([^"]+)"/.exec(page)
  if (match === null) throw new Error("no CSRF token on the page")
  return match[1]!
}
