/**
 * The passkey routes over plain HTTP: every POST, the script's JSON requests included, is
 * refused unless same-origin (and, signed in, without the session's CSRF token); the options
 * name the relying party of DROPSHELF_PUBLIC_URL or the request's `Host`; a passkey is deleted
 * by its own account only. The ceremonies themselves run in Chromium
 * (account-passkeys-browser.test.ts).
 */
import { PasskeyStore } from "@dropshelf/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { memoryAdapter, type Running, start } from "./harness.ts"
import { accountWithLink, csrfOf, send, signIn } from "./accountSupport.ts"

describe("passkey routes", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter)
  })
  afterAll(async () => {
    await server?.close()
  })

  const signedIn = async (name: string) => {
    const { account, token } = await accountWithLink(server, "free", name)
    const session = await signIn(server, token)
    const page = await send(server, "GET", "/account/passkeys", { session })
    return { account, session, csrf: csrfOf(page.text), page }
  }

  it("registration options need the session's CSRF token and a same-origin request", async () => {
    const { csrf, page, session } = await signedIn("options-person")
    expect(page.status).toBe(200)
    expect(page.headers.get("cache-control")).toBe("no-store")

    const options = await send(server, "POST", "/account/passkeys/options", { session, form: { csrf } })
    expect(options.status).toBe(200)
    expect(options.headers.get("content-type")).toContain("application/json")
    const body = JSON.parse(options.text)
    expect(body.challengeId).toMatch(/^pkc_/)
    expect(body.options.rp).toEqual({ id: "127.0.0.1", name: "dropshelf" })
    expect(body.options.authenticatorSelection).toMatchObject({ residentKey: "required", userVerification: "required" })

    expect((await send(server, "POST", "/account/passkeys/options", { session, form: {} })).status).toBe(403)
    expect((await send(server, "POST", "/account/passkeys/options", { session, form: { csrf: `${csrf}x` } })).status).toBe(403)
    const crossSite = { "sec-fetch-site": "cross-site", origin: "https://evil.example" }
    expect((await send(server, "POST", "/account/passkeys/options", { session, form: { csrf }, headers: crossSite })).status).toBe(403)
    expect((await send(server, "POST", "/account/passkeys", { session, form: { csrf, name: "x", challenge: body.challengeId, response: "{}" }, headers: crossSite })).status).toBe(403)
  })

  it("sign-in options and answers need a same-origin request; a bad answer is a 400 page and no cookie", async () => {
    const options = await send(server, "POST", "/signin/passkey/options", { form: {} })
    expect(options.status).toBe(200)
    const body = JSON.parse(options.text)
    expect(body.options).toMatchObject({ rpId: "127.0.0.1", userVerification: "required" })
    expect(body.options.allowCredentials ?? []).toEqual([])

    const crossSite = { "sec-fetch-site": "cross-site", origin: "https://evil.example" }
    expect((await send(server, "POST", "/signin/passkey/options", { form: {}, headers: crossSite })).status).toBe(403)
    expect((await send(server, "POST", "/signin/passkey", { form: { challenge: body.challengeId, response: "{}" }, headers: crossSite })).status).toBe(403)

    const forged = await send(server, "POST", "/signin/passkey", { form: { challenge: body.challengeId, response: JSON.stringify({ id: "nope" }) } })
    expect(forged.status).toBe(400)
    expect(forged.text).toContain("Passkey sign-in failed")
    expect(forged.setCookies).toEqual([])
  })

  it("/signin loads the passkey scripts from this origin, digest-named and cached, and nothing inline", async () => {
    const signInPage = await send(server, "GET", "/signin")
    const sources = [...signInPage.text.matchAll(/<script([^>]*)>/g)].map((match) => /src="([^"]+)"/.exec(match[1]!)?.[1])
    expect(sources).toHaveLength(2)
    expect(sources[0]).toMatch(/^\/account\/assets\/simplewebauthn-browser\.[0-9a-f]{16}\.js$/)
    expect(sources[1]).toMatch(/^\/account\/assets\/passkeys\.[0-9a-f]{16}\.js$/)
    for (const source of sources) {
      const asset = await send(server, "GET", source!)
      expect(asset.status).toBe(200)
      expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
      expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    }
    expect((await send(server, "GET", sources[0]!)).text).toContain("SimpleWebAuthnBrowser")
  })

  it("the passkey routes answer other methods 405 with Allow", async () => {
    for (const [path, allow] of [["/signin/passkey", "POST, OPTIONS"], ["/signin/passkey/options", "POST, OPTIONS"], ["/account/passkeys/x/delete", "POST, OPTIONS"], ["/account/passkeys", "GET, POST, HEAD, OPTIONS"]] as const) {
      const answer = await send(server, "DELETE", path)
      expect(answer.status, path).toBe(405)
      expect(answer.headers.get("allow"), path).toBe(allow)
    }
  })

  it("one client address begins 30 passkey sign-ins in 15 minutes; past them a 429 page with Retry-After", async () => {
    // A server of its own: every request here comes from one address, which this spends.
    const own = await start(memoryAdapter)
    try {
      for (let n = 0; n < 30; n++) expect((await send(own, "POST", "/signin/passkey/options", { form: {} })).status).toBe(200)
      const refused = await send(own, "POST", "/signin/passkey/options", { form: {} })
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
      expect(refused.headers.get("content-type")).toContain("text/html")
      expect(refused.text).toContain("Too many")
    } finally {
      await own.close()
    }
  })

  it("the relying party is DROPSHELF_PUBLIC_URL's host when set", async () => {
    const behind = await start(memoryAdapter, { publicUrl: "https://shelf.example" })
    try {
      const options = await send(behind, "POST", "/signin/passkey/options", { form: {}, headers: { origin: undefined } })
      expect(JSON.parse(options.text).options.rpId).toBe("shelf.example")
    } finally {
      await behind.close()
    }
  })

  it("a passkey is deleted by its own account only", async () => {
    const owner = await signedIn("owner-person")
    const other = await signedIn("other-person")
    await server.run(PasskeyStore.PasskeyStore.use((store) =>
      store.addPasskey({
        id: "cred-owned",
        accountId: owner.account.id,
        name: "owner's key",
        publicKey: "pQECAyYgASFYIA",
        counter: 0,
        transports: ["internal"],
        createdAt: Date.now(),
        lastUsedAt: null
      })
    ))
    const refused = await send(server, "POST", "/account/passkeys/cred-owned/delete", { session: other.session, form: { csrf: other.csrf } })
    expect(refused.status).toBe(404)
    expect(refused.text).toContain("No such passkey on your account.")
    expect((await send(server, "GET", "/account/passkeys", { session: owner.session })).text).toContain("owner&#39;s key")

    const deleted = await send(server, "POST", "/account/passkeys/cred-owned/delete", { session: owner.session, form: { csrf: owner.csrf } })
    expect(deleted.status).toBe(200)
    expect(deleted.text).toContain("is deleted.")
    expect(deleted.text).toContain("No passkeys yet.")
  })
})
