/**
 * An assistant connecting by URL alone, with real parts: the official MCP SDK's client OAuth
 * flow (`auth` with an `OAuthClientProvider`) discovers, registers and sends the person to the
 * browser; headless Chromium signs in and consents on the account area's pages (axe-checked);
 * the SDK exchanges the code, calls a tool that spends a reveal, refreshes; the MCP Inspector's
 * CLI connects with the token; the person disconnects the assistant in the account area and the
 * next tool call is 401. Skipped, saying why, where Chromium is missing.
 */
import { execFile } from "node:child_process"
import { createServer, type Server as HttpServer } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accountWithLink } from "./accountSupport.ts"
import { expectAccessible, missingChromium as missing, suiteBrowser } from "./browser.ts"
import { addListings, listing, memoryAdapter, type Running, start } from "./harness.ts"
import { rawToolCall } from "./oauthSupport.ts"

const INSPECTOR_CLI = fileURLToPath(
  new URL("../../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js", import.meta.url)
)

/** What an assistant keeps between its steps, in memory: the SDK asks for and hands over each part. */
class AssistantStorage implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ""
  authorizationUrl: URL | undefined
  readonly redirectUrl: string
  constructor(redirectUrl: string) {
    this.redirectUrl = redirectUrl
  }
  get clientMetadata() {
    return {
      client_name: "SDK Assistant",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none"
    }
  }
  clientInformation() {
    return this.client
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.client = information
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

/** The assistant's loopback redirect: the code the browser brings back. */
const callbackServer = async () => {
  let resolve: (code: string) => void = () => {}
  const code = new Promise<string>((done) => {
    resolve = done
  })
  const server: HttpServer = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1")
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    response.end("<!doctype html><html lang=\"en\"><title>Connected</title><main><h1>You can close this window</h1></main></html>")
    const found = url.searchParams.get("code")
    if (found !== null) resolve(found)
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  const port = (server.address() as AddressInfo).port
  return { url: `http://127.0.0.1:${port}/callback`, code, close: () => new Promise((done) => server.close(done)) }
}

describe.skipIf(missing !== undefined)(`an assistant connects by signing in${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: Running
  const chromium = suiteBrowser({ noErrorsAfterEach: true })
  const coffee = listing({ domain: "sdkcoffee.com" })

  beforeAll(async () => {
    server = await start(memoryAdapter)
    await addListings(server, [coffee])
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("discovery, registration, sign-in and consent in the browser, a reveal, a refresh, the Inspector, and a disconnect", async () => {
    const { url: signInLink } = await accountWithLink(server, "pro", "SDK Person")
    const callback = await callbackServer()
    try {
      const storage = new AssistantStorage(callback.url)
      const serverUrl = `${server.base}/mcp`
      expect(await auth(storage, { serverUrl })).toBe("REDIRECT")
      expect(storage.client?.client_id).toBeTypeOf("string")
      const authorizationUrl = storage.authorizationUrl!
      expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256")
      expect(authorizationUrl.searchParams.get("resource")).toBe(serverUrl)

      // The person's browser: not signed in, so sent to sign in first, then back to the consent page.
      const page = await chromium.open()
      await page.goto(authorizationUrl.toString())
      await page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor()
      await page.goto(signInLink)
      await page.getByRole("button", { name: "Continue" }).click()
      await page.getByRole("heading", { level: 1, name: "Connect SDK Assistant?" }).waitFor()
      await expectAccessible(page)
      expect(await page.getByText("SDK Person").count()).toBeGreaterThan(0)
      expect(await page.getByLabel(/^reveal:/).isChecked()).toBe(true)
      expect(await page.getByLabel(/^hold:/).isChecked()).toBe(true)
      await page.getByRole("button", { name: "Allow" }).click()
      const code = await callback.code
      await page.getByRole("heading", { name: "You can close this window" }).waitFor()

      expect(await auth(storage, { serverUrl, authorizationCode: code })).toBe("AUTHORIZED")
      const first = storage.saved!
      expect(first.refresh_token).toBeTypeOf("string")

      const client = new Client({ name: "sdk-assistant", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: storage }))
      const revealed = await client.callTool({ name: "reveal_listing", arguments: { id: coffee.id } }) as { structuredContent: any; isError?: boolean }
      expect(revealed.isError).toBeFalsy()
      expect(revealed.structuredContent.domain).toBe("sdkcoffee.com")
      const me = await client.callTool({ name: "me", arguments: {} }) as { structuredContent: any }
      expect(me.structuredContent.reveals.used).toBe(1)
      await client.close()

      // With tokens held, `auth` refreshes: a new access and refresh token.
      expect(await auth(storage, { serverUrl })).toBe("AUTHORIZED")
      expect(storage.saved!.refresh_token).not.toBe(first.refresh_token)
      expect(storage.saved!.access_token).not.toBe(first.access_token)
      const token = storage.saved!.access_token

      // The MCP Inspector's CLI, with the token obtained this way.
      const inspected = await promisify(execFile)(process.execPath, [
        INSPECTOR_CLI,
        "--cli",
        serverUrl,
        "--transport",
        "http",
        "--method",
        "tools/call",
        "--tool-name",
        "me",
        "--header",
        `Authorization: Bearer ${token}`
      ], { timeout: 60_000 })
      expect(inspected.stdout).toContain("\"plan\"")
      expect(inspected.stdout).toContain("pro")

      // The person disconnects the assistant in the account area.
      await page.goto(`${server.base}/account/keys`)
      await page.getByRole("heading", { name: "Connected applications" }).waitFor()
      await expectAccessible(page)
      await page.getByRole("button", { name: /^Disconnect SDK Assistant/ }).click()
      await page.getByText(/is revoked/).waitFor()
      const refused = await rawToolCall(server, token, "me")
      expect(refused.status).toBe(401)
    } finally {
      await callback.close()
    }
  }, 120_000)
})
