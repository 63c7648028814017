/**
 * `/mcp` as an OAuth 2.1 protected resource and dropshelf as its authorization server, tested
 * as an assistant and an attacker meet them: discovery (RFC 9728, RFC 8414), registration (RFC
 * 7591), authorization with PKCE through the account area's sign-in and consent, tokens for the
 * `/mcp` resource only (RFC 8707), refresh rotation, and a grant that is a key: its own counter,
 * the live-key ceiling, revocation. The security cases follow RFC 9700 (OAuth 2.0 Security BCP).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { KeyStore, Operators } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { accountWithLink, csrfOf } from "./accountSupport.ts"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { type Adapter, addListings, call, listing, memoryAdapter, type Running, start } from "./harness.ts"
import {
  authorizeUrl,
  browse,
  connectApplication,
  consentAndReturn,
  CookieJar,
  exchangeCode,
  mcpWith,
  pkce,
  rawToolCall,
  REDIRECT_URI,
  register,
  signedInPerson,
  toConsent,
  tokenRequest
} from "./oauthSupport.ts"

let server: Running
const coffee = listing({ domain: "oauthcoffee.com" })
const tea = listing({ domain: "oauthtea.com" })

beforeAll(async () => {
  server = await start(memoryAdapter)
  await addListings(server, [coffee, tea])
})

afterAll(async () => {
  await server?.close()
  cleanupPgliteDirs()
})

// A store slow to revoke a key, as a busy database is: the refusal must still wait for it.
const slowToRevoke: Adapter = {
  name: "memory, slow to revoke",
  layer: () =>
    Layer.effectContext(Effect.gen(function*() {
      const context = yield* Layer.build(memoryAdapter.layer())
      const keys = Context.get(context, KeyStore.KeyStore)
      return Context.add(context, KeyStore.KeyStore, { ...keys, revoke: (prefix, at) => Effect.delay(keys.revoke(prefix, at), "200 millis") })
    }))
}

// The library awaits a grant's destruction before it answers: the key must end inside it, on every store.
for (const adapter of [...adapters, slowToRevoke]) {
  describe.skipIf(adapter.skip !== undefined)(`a grant the library revokes, on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let revoking: Running
    beforeAll(async () => {
      revoking = await start(adapter)
    })
    afterAll(async () => {
      await revoking?.close()
    })

    it("a code used twice is refused, and the tokens it gave are revoked", async () => {
      const person = await signedInPerson(revoking, "pro", "replay")
      const clientId = await register(revoking)
      const { challenge, verifier } = pkce()
      const consent = await toConsent(revoking, person.jar, authorizeUrl(revoking, clientId, challenge))
      const code = (await consentAndReturn(revoking, person.jar, consent)).searchParams.get("code")!
      const first = await exchangeCode(revoking, clientId, code, verifier)
      expect(first.status).toBe(200)
      expect((await rawToolCall(revoking, first.body.access_token, "me")).status).toBe(200)
      const second = await exchangeCode(revoking, clientId, code, verifier)
      expect(second.status).toBe(400)
      expect(second.body.error).toBe("invalid_grant")
      // The connection the code made is revoked with its grant before the refusal is sent, as the account area shows.
      const keys = await revoking.run(Operators.Operators.use((operators) => operators.listKeys(person.accountId, { after: undefined, limit: 10 })))
      expect(keys.data.filter((key) => key.application).map((key) => key.revokedAt === null)).toEqual([false])
      expect((await rawToolCall(revoking, first.body.access_token, "me")).status).toBe(401)
    })

    it("the client revoking its refresh token (RFC 7009) disconnects it", async () => {
      const person = await signedInPerson(revoking, "pro", "client-revokes")
      const { clientId, tokens } = await connectApplication(revoking, person)
      const revoked = await fetch(`${revoking.base}/oauth/revoke`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: tokens.refresh_token, client_id: clientId }).toString()
      })
      expect(revoked.status).toBe(200)
      const keys = await revoking.run(Operators.Operators.use((operators) => operators.listKeys(person.accountId, { after: undefined, limit: 10 })))
      expect(keys.data.filter((key) => key.application).map((key) => key.revokedAt === null)).toEqual([false])
      expect((await rawToolCall(revoking, tokens.access_token, "me")).status).toBe(401)
    })
  })
}

describe("discovery", () => {
  it("the protected resource metadata names /mcp, this server as its authorization server, and the scopes", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const answer = await call(server, "GET", path)
      expect(answer.status).toBe(200)
      expect(answer.body).toEqual({
        resource: `${server.base}/mcp`,
        authorization_servers: [server.base],
        scopes_supported: ["read", "reveal", "hold", "watch"],
        bearer_methods_supported: ["header"],
        resource_name: "dropshelf",
        resource_documentation: `${server.base}/docs`
      })
    }
  })

  it("a 401 from /mcp points at the metadata", async () => {
    const answer = await call(server, "POST", "/mcp", { body: "{}", headers: { accept: "application/json, text/event-stream" } })
    expect(answer.status).toBe(401)
    expect(answer.headers.get("www-authenticate")).toBe(
      `Bearer realm="dropshelf", resource_metadata="${server.base}/.well-known/oauth-protected-resource/mcp", scope="read reveal hold watch"`
    )
  })

  it("the authorization server metadata (RFC 8414): code flow with S256 only, registration, client id metadata documents", async () => {
    const answer = await call(server, "GET", "/.well-known/oauth-authorization-server")
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({
      issuer: server.base,
      authorization_endpoint: `${server.base}/oauth/authorize`,
      token_endpoint: `${server.base}/oauth/token`,
      registration_endpoint: `${server.base}/oauth/register`,
      revocation_endpoint: `${server.base}/oauth/revoke`,
      response_types_supported: ["code"],
      code_challenge_methods_supported: ["S256"],
      client_id_metadata_document_supported: true
    })
    expect(answer.body.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]))
    expect(answer.body.token_endpoint_auth_methods_supported).toContain("none")
    expect(answer.body.scopes_supported).toEqual(expect.arrayContaining(["read", "reveal", "hold", "watch"]))
    // Every endpoint it advertises is served.
    for (const [name, url] of Object.entries(answer.body).filter(([name]) => name.endsWith("_endpoint") || name === "jwks_uri")) {
      const path = new URL(url as string).pathname
      const probe = await fetch(`${server.base}${path}`, { method: name === "jwks_uri" || name === "authorization_endpoint" ? "GET" : "POST" })
      expect(probe.status, `${name} ${path}`).not.toBe(404)
    }
  })
})

describe("a person connects an assistant", () => {
  it("signs in, consents, and the assistant's tool calls run as the account, a reveal spending its allowance", async () => {
    const person = await signedInPerson(server, "pro", "connects")
    const { tokens } = await connectApplication(server, person)
    expect(tokens.scope.split(" ").sort()).toEqual(["hold", "read", "reveal", "watch"])
    expect(tokens.expires_in).toBeLessThanOrEqual(15 * 60)
    const mcp = await mcpWith(server, tokens.access_token)
    const before = (await mcp.call("me")).structuredContent
    expect(before.plan).toBe("pro")
    const revealed = await mcp.call("reveal_listing", { id: coffee.id })
    expect(revealed.isError, JSON.stringify(revealed.structuredContent)).toBeFalsy()
    expect(revealed.structuredContent.domain).toBe("oauthcoffee.com")
    const after = (await mcp.call("me")).structuredContent
    expect(after.reveals.used).toBe(before.reveals.used + 1)
    expect(after.key.name).toBe("Test Assistant")
    await mcp.close()
  })

  it("the grant is a key: listed with its client and scopes, counted on its own, under the live-key ceiling", async () => {
    const person = await signedInPerson(server, "pro", "listed")
    const { tokens } = await connectApplication(server, person, ["reveal"])
    const keys = await server.run(Operators.Operators.use((operators) => operators.listKeys(person.accountId, { after: undefined, limit: 10 })))
    const application = keys.data.find((key: { application?: unknown }) => key.application)
    expect(application?.prefix).toMatch(/^app_[0-9A-Za-z]{8}$/)
    expect(application?.application).toMatchObject({ clientName: "Test Assistant", scopes: ["read", "reveal"] })
    // Its own per-minute counter: the account's API key's window does not move.
    const first = await rawToolCall(server, tokens.access_token, "me")
    const second = await rawToolCall(server, tokens.access_token, "me")
    expect(Number(second.headers.get("x-ratelimit-remaining"))).toBe(Number(first.headers.get("x-ratelimit-remaining")) - 1)
    const page = await browse(person.jar, `${server.base}/account/keys`)
    expect(page.text).toContain("Connected applications")
    expect(page.text).toContain("Test Assistant")
  })

  it("a client's name is anyone's text: shown escaped, listed storable and shortened", async () => {
    const person = await signedInPerson(server, "pro", "odd-name")
    const clientId = await register(server, { client_name: `<b>Evil</b>\u0000${"x".repeat(300)}` })
    const { challenge, verifier } = pkce()
    const consent = await toConsent(server, person.jar, authorizeUrl(server, clientId, challenge))
    expect(consent.status).toBe(200)
    expect(consent.text).toContain("&lt;b&gt;Evil&lt;/b&gt;")
    const back = await consentAndReturn(server, person.jar, consent)
    expect((await exchangeCode(server, clientId, back.searchParams.get("code")!, verifier)).status).toBe(200)
    const keys = await server.run(Operators.Operators.use((operators) => operators.listKeys(person.accountId, { after: undefined, limit: 10 })))
    const name = keys.data.find((key) => key.application)!.name
    expect(name.startsWith("<b>Evil</b>\uFFFDxxx")).toBe(true)
    expect(name.length).toBe(100)
  })

  it("a full account is told so on the consent page, and no grant is made", async () => {
    const person = await signedInPerson(server, "free", "full")
    // Fill the free plan's live keys.
    for (let index = 0; index < 10; index++) {
      const created = await server.run(Operators.Operators.use((operators) => operators.createKey(person.accountId, `k${index}`))).catch(() => undefined)
      if (created === undefined) break
    }
    const clientId = await register(server)
    const { challenge } = pkce()
    const consent = await toConsent(server, person.jar, authorizeUrl(server, clientId, challenge))
    const decided = await browse(person.jar, `${server.base}${consent.path}`, { csrf: csrfOf(consent.text), decision: "allow", scope: ["reveal"] })
    expect(decided.status).toBe(409)
    expect(decided.text).toMatch(/allows \d+ live keys/)
  })

  it("refresh rotates the refresh token; the old one no longer works", async () => {
    const person = await signedInPerson(server, "pro", "refreshes")
    const { clientId, tokens } = await connectApplication(server, person)
    const refreshed = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId })
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200)
    expect(refreshed.body.refresh_token).not.toBe(tokens.refresh_token)
    expect((await rawToolCall(server, refreshed.body.access_token, "me")).status).toBe(200)
    const again = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId })
    expect(again.status).toBe(400)
    expect(again.body.error).toBe("invalid_grant")
  })

  it("disconnected in the account area: the next tool call is 401 and the refresh token is dead", async () => {
    const person = await signedInPerson(server, "pro", "revokes")
    const { clientId, tokens } = await connectApplication(server, person)
    expect((await rawToolCall(server, tokens.access_token, "me")).status).toBe(200)
    const keys = await browse(person.jar, `${server.base}/account/keys`)
    const action = /action="(\/account\/keys\/[^"]+\/revoke)"[^]*?Disconnect/.exec(keys.text)?.[1]
    expect(action).toBeDefined()
    const revoked = await browse(person.jar, `${server.base}${action}`, { csrf: csrfOf(keys.text) })
    expect(revoked.status).toBe(200)
    const refused = await rawToolCall(server, tokens.access_token, "me")
    expect(refused.status).toBe(401)
    expect(refused.headers.get("www-authenticate")).toContain("resource_metadata=")
    const refresh = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId })
    expect(refresh.body.error).toBe("invalid_grant")
  })

  it("every authorization asks again, as the person signed in now: an earlier grant in this browser is not reused", async () => {
    const first = await signedInPerson(server, "pro", "first-person")
    const clientId = await register(server)
    const once = pkce()
    const consent = await toConsent(server, first.jar, authorizeUrl(server, clientId, once.challenge))
    await consentAndReturn(server, first.jar, consent)
    // Another person signs in in the same browser, keeping the authorization server's cookies.
    const second = await signedInPerson(server, "pro", "second-person")
    first.jar.cookies.set("__Host-dropshelf_session", second.jar.cookies.get("__Host-dropshelf_session")!)
    const again = await toConsent(server, first.jar, authorizeUrl(server, clientId, pkce().challenge))
    expect(again.status).toBe(200)
    expect(again.text).toContain("second-person")
  })

  it("declining sends the assistant access_denied and makes no key", async () => {
    const person = await signedInPerson(server, "pro", "declines")
    const clientId = await register(server)
    const { challenge } = pkce()
    const consent = await toConsent(server, person.jar, authorizeUrl(server, clientId, challenge))
    const back = await consentAndReturn(server, person.jar, consent, [], "deny")
    expect(back.origin + back.pathname).toBe(REDIRECT_URI)
    expect(back.searchParams.get("error")).toBe("access_denied")
    const keys = await server.run(Operators.Operators.use((operators) => operators.listKeys(person.accountId, { after: undefined, limit: 10 })))
    expect(keys.data.filter((key: { application?: unknown }) => key.application)).toEqual([])
  })

  it("someone not signed in is sent to sign in, and comes back to the consent page", async () => {
    const stranger = new CookieJar()
    const clientId = await register(server)
    const { challenge } = pkce()
    const consent = await toConsent(server, stranger, authorizeUrl(server, clientId, challenge))
    expect(consent.status).toBe(303)
    expect(consent.location).toBe("/signin")
    expect(stranger.cookies.get("__Host-dropshelf_return")).toBe(consent.path)
  })
})

describe("security (RFC 9700)", () => {
  it("PKCE is required, S256 only", async () => {
    const person = await signedInPerson(server, "pro", "pkce")
    const clientId = await register(server)
    for (const extra of [{ code_challenge: "", code_challenge_method: "" }, { code_challenge_method: "plain" }]) {
      const { challenge } = pkce()
      const answer = await browse(person.jar, authorizeUrl(server, clientId, challenge, extra))
      expect(answer.status).toBe(303)
      const location = new URL(answer.location!)
      expect(location.origin + location.pathname).toBe(REDIRECT_URI)
      expect(location.searchParams.get("error")).toBe("invalid_request")
    }
  })

  it("PKCE is checked: a code with the wrong verifier gets no token", async () => {
    const person = await signedInPerson(server, "pro", "verifier")
    const clientId = await register(server)
    const { challenge } = pkce()
    const consent = await toConsent(server, person.jar, authorizeUrl(server, clientId, challenge))
    const back = await consentAndReturn(server, person.jar, consent)
    const answer = await exchangeCode(server, clientId, back.searchParams.get("code")!, pkce().verifier)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toBe("invalid_grant")
  })

  it("an unregistered redirect URI is refused, never redirected to", async () => {
    const person = await signedInPerson(server, "pro", "redirect")
    const clientId = await register(server)
    const { challenge } = pkce()
    for (const redirect of ["https://attacker.example/callback", `${REDIRECT_URI}/more`, "http://127.0.0.1:9/callback?x=1"]) {
      const answer = await browse(person.jar, authorizeUrl(server, clientId, challenge, { redirect_uri: redirect }))
      expect(answer.status).toBe(400)
      expect(answer.location).toBeNull()
      expect(answer.text).toContain("redirect_uri")
    }
  })

  it("a client id metadata document is fetched from public addresses only", async () => {
    const person = await signedInPerson(server, "pro", "cimd")
    const { challenge } = pkce()
    const clientId = "https://127.0.0.1:9/assistant/client.json"
    const answer = await browse(person.jar, authorizeUrl(server, clientId, challenge))
    expect(answer.status).toBe(400)
    expect(answer.location).toBeNull()
    expect(answer.text).toContain("invalid_client")
  })

  it("a native application's loopback redirect may use any port; a web application's must match exactly", async () => {
    const person = await signedInPerson(server, "pro", "loopback")
    const native = await register(server, { application_type: "native", redirect_uris: ["http://127.0.0.1/callback"] })
    const web = await register(server, { redirect_uris: ["http://127.0.0.1/callback"] })
    const { challenge } = pkce()
    const redirect = { redirect_uri: "http://127.0.0.1:51234/callback" }
    expect((await browse(person.jar, authorizeUrl(server, native, challenge, redirect))).location).toMatch(/^\/oauth\/consent\//)
    expect((await browse(person.jar, authorizeUrl(server, web, challenge, redirect))).status).toBe(400)
  })

  it("a token for another resource is never issued", async () => {
    const person = await signedInPerson(server, "pro", "audience")
    const clientId = await register(server)
    const { challenge } = pkce()
    const answer = await browse(person.jar, authorizeUrl(server, clientId, challenge, { resource: "https://other.example/mcp" }))
    const location = new URL(answer.location!)
    expect(location.searchParams.get("error")).toBe("invalid_target")
  })

  it("/mcp refuses a token issued for another server's /mcp, though it can read the token (RFC 8707 audience)", async () => {
    // Two instances over one store, each its own issuer and resource: as two deployments sharing a database would be.
    const stores = ManagedRuntime.make(StoreMemory.layer)
    const shared = { name: "shared memory", layer: () => Layer.effectContext(Effect.promise(() => stores.context())) }
    const first = await start(shared)
    const second = await start(shared)
    try {
      const person = await signedInPerson(first, "pro", "two-servers")
      const { tokens } = await connectApplication(first, person)
      expect((await rawToolCall(first, tokens.access_token, "me")).status).toBe(200)
      const elsewhere = await rawToolCall(second, tokens.access_token, "me")
      expect(elsewhere.status).toBe(401)
      expect(((await elsewhere.json()) as any).error.message).toContain("not issued for")
    } finally {
      await second.close()
      await first.close()
      await stores.dispose()
    }
  })

  it("a read-only token can read but neither reveal nor hold nor watch", async () => {
    const person = await signedInPerson(server, "pro", "readonly")
    const { tokens } = await connectApplication(server, person, [])
    expect(tokens.scope).toBe("read")
    const mcp = await mcpWith(server, tokens.access_token)
    const page = await mcp.call("search_listings", {})
    expect(page.isError).toBeFalsy()
    for (const [tool, args] of [["reveal_listing", { id: tea.id }], ["hold_listing", { id: tea.id }], ["create_watch", { name: "w" }]] as const) {
      const refused = await mcp.call(tool, args)
      expect(refused.isError).toBe(true)
      expect(refused.structuredContent.error.code).toBe("forbidden")
    }
    expect((await mcp.call("me")).structuredContent.reveals.used).toBe(0)
    await mcp.close()
  })

  it("an access token is accepted at /mcp only, never by the REST API", async () => {
    const person = await signedInPerson(server, "pro", "restless")
    const { tokens } = await connectApplication(server, person)
    const answer = await call(server, "GET", "/api/v1/me", { key: tokens.access_token })
    expect(answer.status).toBe(401)
  })

  it("consent needs the session's CSRF token, a same-origin form, and the browser that started the request", async () => {
    const person = await signedInPerson(server, "pro", "csrf")
    const clientId = await register(server)
    const { challenge } = pkce()
    const consent = await toConsent(server, person.jar, authorizeUrl(server, clientId, challenge))
    const url = `${server.base}${consent.path}`
    expect((await browse(person.jar, url, { decision: "allow" })).status).toBe(403)
    expect((await browse(person.jar, url, { csrf: csrfOf(consent.text), decision: "allow" }, { "sec-fetch-site": "cross-site" })).status).toBe(403)
    // The same person in another browser (their session, not the interaction's cookies).
    const other = new CookieJar()
    other.cookies.set("__Host-dropshelf_session", person.jar.cookies.get("__Host-dropshelf_session")!)
    const elsewhere = await browse(other, url, { csrf: csrfOf(consent.text), decision: "allow" })
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.text).toContain("expired")
  })

  it("the return cookie sends a person nowhere but a consent page", async () => {
    const { token } = await accountWithLink(server, "pro", "no-open-redirect")
    const jar = new CookieJar()
    jar.cookies.set("__Host-dropshelf_return", "//attacker.example/x")
    const signedIn = await browse(jar, `${server.base}/signin`, { token })
    expect(signedIn.status).toBe(303)
    expect(signedIn.location).toBe("/account")
  })

  it("registration is limited per address", async () => {
    const limited = await start(memoryAdapter, { oauthRegistrationsPerMinute: 3 })
    try {
      const statuses: Array<number> = []
      for (let index = 0; index < 4; index++) {
        const response = await fetch(`${limited.base}/oauth/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" })
        })
        statuses.push(response.status)
        if (response.status === 429) expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0)
      }
      expect(statuses).toEqual([201, 201, 201, 429])
    } finally {
      await limited.close()
    }
  })
})
