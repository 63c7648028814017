import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, memoryAdapter, type Running, start } from "./harness.ts"
import { accountWithLink, csrfOf, expectAccountPageHeaders, linkFor, send, SESSION_COOKIE, sessionSet, signIn } from "./accountSupport.ts"

/*
 * The account area's security, from outside, over HTTP as a browser would send it: the session
 * cookie's flags, CSRF and same-origin checks, session fixation, escaping, one-time links, sign
 * out everywhere, account scoping, and an API that never reads or sets a cookie.
 */

const MINUTE = 60_000

describe("the account area's security", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter)
  })
  afterAll(() => server.close())

  it("signing in sets a __Host- session cookie: HttpOnly, Secure, SameSite=Lax, Path=/, no Domain", async () => {
    const { token } = await accountWithLink(server, "pro", "cookie")
    const answer = await send(server, "POST", "/signin", { form: { token } })
    expect(answer.status).toBe(303)
    expect(answer.headers.get("location")).toBe("/account")
    const cookie = answer.setCookies.find((line) => line.startsWith(`${SESSION_COOKIE}=`))!
    expect(cookie).toMatch(/^__Host-dropshelf_session=dss_[A-Za-z0-9_-]{43};/)
    const attributes = cookie.split(";").slice(1).map((part) => part.trim().toLowerCase())
    expect(attributes).toEqual(expect.arrayContaining(["path=/", "secure", "httponly", "samesite=lax"]))
    expect(attributes.some((attribute) => attribute.startsWith("domain"))).toBe(false)
  })

  it("a sign-in link's page only offers a button; the link works once, and not once expired", async () => {
    const { token, url } = await accountWithLink(server, "free", "once")
    // Following the link (as a mail scanner does) spends nothing.
    const shown = await fetch(url)
    expect(shown.status).toBe(200)
    expect(await shown.text()).toContain(`name="token" value="${token}"`)
    await signIn(server, token)
    const again = await send(server, "POST", "/signin", { form: { token } })
    expect(again.status).toBe(400)
    expect(again.text).toContain("This sign-in link cannot be used")
    expect(sessionSet(again)).toBeUndefined()

    const expired = await accountWithLink(server, "free", "expired", 16 * MINUTE)
    const late = await send(server, "POST", "/signin", { form: { token: expired.token } })
    expect(late.status).toBe(400)
    expect(sessionSet(late)).toBeUndefined()
    const fresh = await accountWithLink(server, "free", "fresh", 14 * MINUTE)
    expect((await send(server, "POST", "/signin", { form: { token: fresh.token } })).status).toBe(303)
  })

  it("session fixation: a cookie planted before sign-in is not the session after, and is ended", async () => {
    const { account, token } = await accountWithLink(server, "pro", "fixation")
    // The attacker's own valid session, planted in the victim's browser.
    const planted = await signIn(server, await linkFor(server, account.id))
    const after = await signIn(server, token, planted)
    expect(after).not.toBe(planted)
    expect((await send(server, "GET", "/account", { session: planted })).status).toBe(303)
    expect((await send(server, "GET", "/account", { session: after })).status).toBe(200)
    // A made-up token planted is never honoured either.
    const made = `dss_${"A".repeat(43)}`
    expect((await send(server, "GET", "/account", { session: made })).status).toBe(303)
  })

  it("CSRF: a POST without the session's token, or sent from another site, is refused 403 and changes nothing", async () => {
    const { token } = await accountWithLink(server, "pro", "csrf")
    const session = await signIn(server, token)
    const csrf = csrfOf((await send(server, "GET", "/account/keys", { session })).text)
    const attempts: Array<Parameters<typeof send>[3]> = [
      { session, form: { name: "no-token" } },
      { session, form: { name: "wrong-token", csrf: "x".repeat(43) } },
      { session, form: { name: "cross-site", csrf }, headers: { "sec-fetch-site": "cross-site", origin: "https://evil.example" } },
      { session, form: { name: "foreign-origin", csrf }, headers: { "sec-fetch-site": undefined, origin: "https://evil.example" } },
      { session, form: { name: "null-origin", csrf }, headers: { "sec-fetch-site": undefined, origin: "null" } }
    ]
    for (const attempt of attempts) {
      const answer = await send(server, "POST", "/account/keys", attempt)
      expect(answer.status, attempt!.form!.name).toBe(403)
      expect(answer.text).toContain("Request refused")
    }
    const keys = (await send(server, "GET", "/account/keys", { session })).text
    expect(keys).toContain("No keys yet.")
    // The same form from the site's own page goes through.
    const created = await send(server, "POST", "/account/keys", { session, form: { name: "mine", csrf } })
    expect(created.status).toBe(200)
    expect(created.text).toContain("Key created")
    // Signing out takes the token too.
    expect((await send(server, "POST", "/signout", { session, form: {} })).status).toBe(403)
    expect((await send(server, "GET", "/account", { session })).status).toBe(200)
  })

  it("a key's name is shown as text: markup in it is escaped, never run", async () => {
    const { token } = await accountWithLink(server, "pro", "xss")
    const session = await signIn(server, token)
    const csrf = csrfOf((await send(server, "GET", "/account/keys", { session })).text)
    const name = `<script>alert(1)</script><img src=x onerror="alert(2)">`
    const created = await send(server, "POST", "/account/keys", { session, form: { name, csrf } })
    expect(created.status).toBe(200)
    const list = (await send(server, "GET", "/account/keys", { session })).text
    for (const page of [created.text, list]) {
      expect(page).not.toContain("<script>alert")
      expect(page).not.toContain("<img src=x")
      expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(2)&quot;&gt;")
    }
  })

  it("sign out everywhere ends the account's sessions in every browser", async () => {
    const { account, token } = await accountWithLink(server, "pro", "everywhere")
    const laptop = await signIn(server, token)
    const phone = await signIn(server, await linkFor(server, account.id))
    const csrf = csrfOf((await send(server, "GET", "/account", { session: laptop })).text)
    const ended = await send(server, "POST", "/account/sessions/end-all", { session: laptop, form: { csrf } })
    expect(ended.status).toBe(303)
    expect(ended.headers.get("location")).toBe("/signin")
    expect(ended.setCookies.some((line) => /^__Host-dropshelf_session=;.*Max-Age=0/i.test(line))).toBe(true)
    expect((await send(server, "GET", "/account", { session: phone })).status).toBe(303)
    expect((await send(server, "GET", "/account", { session: laptop })).status).toBe(303)
  })

  it("another account's key cannot be revoked", async () => {
    const mine = await accountWithLink(server, "pro", "mine")
    const theirs = await accountWithLink(server, "pro", "theirs")
    const theirSession = await signIn(server, theirs.token)
    const theirCsrf = csrfOf((await send(server, "GET", "/account/keys", { session: theirSession })).text)
    const theirPage = (await send(server, "POST", "/account/keys", { session: theirSession, form: { name: "theirs", csrf: theirCsrf } })).text
    const secret = /<code id="secret">([^<]+)<\/code>/.exec(theirPage)![1]!
    const keyId = /action="\/account\/keys\/([^/]+)\/revoke"/.exec((await send(server, "GET", "/account/keys", { session: theirSession })).text)![1]!

    const session = await signIn(server, mine.token)
    const csrf = csrfOf((await send(server, "GET", "/account/keys", { session })).text)
    const refused = await send(server, "POST", `/account/keys/${keyId}/revoke`, { session, form: { csrf } })
    expect(refused.status).toBe(404)
    expect(refused.text).toContain("No such key on your account.")
    expect((await call(server, "GET", "/api/v1/me", { key: secret })).status).toBe(200)
  })

  it("signed-out requests for the account area are sent to sign in; every page carries the security headers", async () => {
    for (const path of ["/account", "/account/keys"]) {
      const answer = await send(server, "GET", path)
      expect(answer.status).toBe(303)
      expect(answer.headers.get("location")).toBe("/signin")
    }
    const { token } = await accountWithLink(server, "free", "headers")
    const session = await signIn(server, token)
    for (const [path, options] of [["/signin", {}], ["/account", { session }], ["/account/keys", { session }]] as const) {
      const answer = await send(server, "GET", path, options)
      expect(answer.status, path).toBe(200)
      expectAccountPageHeaders(answer, path)
    }
  })

  it("the API never reads or sets a cookie: /api/v1 answers the same with the session cookie as without", async () => {
    const { account, token } = await accountWithLink(server, "pro", "api")
    const session = await signIn(server, token)
    const cookie = { cookie: `${SESSION_COOKIE}=${session}` }
    const bare = await call(server, "GET", "/api/v1/me")
    const withCookie = await call(server, "GET", "/api/v1/me", { headers: cookie })
    expect(withCookie.status).toBe(401)
    expect(withCookie.status).toBe(bare.status)
    expect(withCookie.body.error.code).toBe(bare.body.error.code)
    expect(withCookie.body.error.message).toBe(bare.body.error.message)

    const csrf = csrfOf((await send(server, "GET", "/account/keys", { session })).text)
    const secret = /<code id="secret">([^<]+)<\/code>/.exec((await send(server, "POST", "/account/keys", { session, form: { name: "api", csrf } })).text)![1]!
    const keyed = await call(server, "GET", "/api/v1/me", { key: secret })
    const keyedWithCookie = await call(server, "GET", "/api/v1/me", { key: secret, headers: cookie })
    expect(keyedWithCookie.status).toBe(200)
    expect({ ...keyedWithCookie.body, rate_limit: null, key: null }).toEqual({ ...keyed.body, rate_limit: null, key: null })
    for (const answer of [bare, withCookie, keyed, keyedWithCookie]) expect(answer.headers.get("set-cookie")).toBeNull()
    expect(account.id).toMatch(/^acct_/)
  })
})
