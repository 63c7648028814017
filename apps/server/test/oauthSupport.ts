import { createHash, randomBytes } from "node:crypto"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { expect } from "vitest"
import { accountWithLink, csrfOf, SESSION_COOKIE, signIn } from "./accountSupport.ts"
import type { Running } from "./harness.ts"

/*
 * An OAuth client as an assistant is one, by hand (fetch, a cookie jar, PKCE): registration,
 * the browser's trip through authorization and consent, and the token endpoint. The SDK's own
 * client and a real browser are oauth-browser.test.ts's.
 */

export const REDIRECT_URI = "http://127.0.0.1:9/callback"

/** A browser's cookies, by name, for one origin: enough for a flow that never leaves it. */
export class CookieJar {
  readonly cookies = new Map<string, string>()
  take(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";")
      const at = pair!.indexOf("=")
      const name = pair!.slice(0, at)
      const value = pair!.slice(at + 1)
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === "") this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }
  header() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ")
  }
}

export const pkce = () => {
  const verifier = randomBytes(32).toString("base64url")
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") }
}

/** A GET or form POST as the browser sends it, redirects not followed. */
export const browse = async (
  jar: CookieJar,
  url: string,
  form?: Record<string, string | ReadonlyArray<string>>,
  headers: Record<string, string> = {}
) => {
  const body = new URLSearchParams()
  for (const [name, value] of Object.entries(form ?? {})) for (const one of typeof value === "string" ? [value] : value) body.append(name, one)
  const response = await fetch(url, {
    method: form === undefined ? "GET" : "POST",
    redirect: "manual",
    headers: {
      cookie: jar.header(),
      ...(form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }),
      ...headers
    },
    ...(form === undefined ? {} : { body: body.toString() })
  })
  jar.take(response)
  return { status: response.status, location: response.headers.get("location"), headers: response.headers, text: await response.text() }
}

export const register = async (server: Running, metadata: Record<string, unknown> = {}) => {
  const response = await fetch(`${server.base}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "Test Assistant",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...metadata
    })
  })
  const body = await response.json() as any
  expect(response.status, JSON.stringify(body)).toBe(201)
  return body.client_id as string
}

/** A person signed in to the account area: an account on `plan`, and a jar holding its session. */
export const signedInPerson = async (server: Running, plan: "free" | "pro" | "business" = "pro", name = "oauth-person") => {
  const { account, token } = await accountWithLink(server, plan, name)
  const jar = new CookieJar()
  jar.cookies.set(SESSION_COOKIE, await signIn(server, token))
  return { accountId: account.id as string, jar }
}

export const authorizeUrl = (server: Running, clientId: string, challenge: string, extra: Record<string, string> = {}) => {
  const url = new URL(`${server.base}/oauth/authorize`)
  const params: Record<string, string> = {
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope: "read reveal hold watch",
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "st4te",
    resource: `${server.base}/mcp`,
    ...extra
  }
  for (const [name, value] of Object.entries(params)) if (value !== "") url.searchParams.set(name, value)
  return url.toString()
}

/** The browser's trip from the authorization request to the consent page: its path and HTML. */
export const toConsent = async (server: Running, jar: CookieJar, url: string) => {
  const started = await browse(jar, url)
  expect(started.status, started.text.slice(0, 300)).toBe(303)
  expect(started.location).toMatch(/^\/oauth\/consent\/[A-Za-z0-9_-]+$/)
  const consent = await browse(jar, `${server.base}${started.location}`)
  return { path: started.location!, ...consent }
}

/** Consents on the page (`scopes`: the boxes left ticked) and follows the browser back to the client: the redirect's URL. */
export const consentAndReturn = async (
  server: Running,
  jar: CookieJar,
  consent: { readonly path: string; readonly text: string },
  scopes: ReadonlyArray<string> = ["reveal", "hold", "watch"],
  decision = "allow"
) => {
  const decided = await browse(jar, `${server.base}${consent.path}`, { csrf: csrfOf(consent.text), decision, scope: scopes })
  expect(decided.status, decided.text.slice(0, 300)).toBe(303)
  const resumed = await browse(jar, new URL(decided.location!, server.base).toString())
  expect(resumed.status, resumed.text.slice(0, 300)).toBe(303)
  return new URL(resumed.location!)
}

export const tokenRequest = async (server: Running, form: Record<string, string>) => {
  const response = await fetch(`${server.base}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString()
  })
  return { status: response.status, body: await response.json() as any }
}

export const exchangeCode = (server: Running, clientId: string, code: string, verifier: string) =>
  tokenRequest(server, {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    code_verifier: verifier,
    resource: `${server.base}/mcp`
  })

/** The whole flow for a signed-in person: a registered client's tokens, and what it took. */
export const connectApplication = async (
  server: Running,
  person: { readonly jar: CookieJar },
  scopes: ReadonlyArray<string> = ["reveal", "hold", "watch"]
) => {
  const clientId = await register(server)
  const { challenge, verifier } = pkce()
  const consent = await toConsent(server, person.jar, authorizeUrl(server, clientId, challenge))
  expect(consent.status, consent.text.slice(0, 300)).toBe(200)
  const back = await consentAndReturn(server, person.jar, consent, scopes)
  const code = back.searchParams.get("code")!
  const tokens = await exchangeCode(server, clientId, code, verifier)
  expect(tokens.status, JSON.stringify(tokens.body)).toBe(200)
  return { clientId, code, verifier, tokens: tokens.body as { access_token: string; refresh_token: string; scope: string; expires_in: number } }
}

/** An MCP client on `/mcp` sending `token` as its bearer. */
export const mcpWith = async (server: Running, token: string) => {
  const client = new Client({ name: "oauth-test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } }
  }))
  await client.listTools()
  return {
    call: async (name: string, args: Record<string, unknown> = {}) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: any },
    close: () => client.close()
  }
}

/** A raw `tools/call` POST, for the answers the SDK turns into exceptions (a 401). */
export const rawToolCall = (server: Running, token: string, name: string, args: Record<string, unknown> = {}) =>
  fetch(`${server.base}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25"
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } })
  })
