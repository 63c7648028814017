import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, memoryAdapter, type Running, start } from "./harness.ts"
import { accountWithLink, send, signIn } from "./accountSupport.ts"

/* The account area's pages over HTTP: what the overview tells each plan, and its one stylesheet and script. */

describe("the account area's pages", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter, { upgradeUrl: "https://shop.example.com/upgrade?from=account" })
  })
  afterAll(() => server.close())

  it("the overview names what the plan lacks, each with the upgrade link; a business plan lacks nothing", async () => {
    const free = await signIn(server, (await accountWithLink(server, "lapsed", "lapsed-plan")).token)
    const page = (await send(server, "GET", "/account", { session: free })).text
    expect(page).toContain("free (lapsed: reads as free)")
    for (const line of ["Your plan has no holds.", "Your plan has no since feed", "Your plan cannot reveal featured names."]) {
      expect(page).toContain(line)
    }
    expect(page.match(/<a href="https:\/\/shop\.example\.com\/upgrade\?from=account">Upgrade your plan<\/a>/g)).toHaveLength(3)

    const business = await signIn(server, (await accountWithLink(server, "business", "business-plan")).token)
    const rich = (await send(server, "GET", "/account", { session: business })).text
    expect(rich).not.toContain("Upgrade your plan")
    expect(rich).toContain("(no monthly limit)")
    expect(rich).toMatch(/<dt>Since feed<\/dt><dd>available<\/dd>/)
    expect(rich).toMatch(/<dt>Holds running<\/dt><dd>0 of 20<\/dd>/)
  })

  it("the stylesheet and script are served under a name with their digest, cached for a year, revalidated by ETag", async () => {
    const signin = (await send(server, "GET", "/signin")).text
    const css = /<link rel="stylesheet" href="(\/account\/assets\/account\.[0-9a-f]{16}\.css)">/.exec(signin)![1]!
    const answer = await send(server, "GET", css)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toBe("text/css; charset=utf-8")
    expect(answer.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(answer.text.length).toBeLessThan(8 * 1024)
    const etag = answer.headers.get("etag")!
    expect(css).toContain(etag.replaceAll("\"", ""))
    expect((await send(server, "GET", css, { headers: { "if-none-match": etag } })).status).toBe(304)

    const { token } = await accountWithLink(server, "pro", "script")
    const session = await signIn(server, token)
    const csrf = /name="csrf" value="([^"]+)"/.exec((await send(server, "GET", "/account/keys", { session })).text)![1]!
    const created = (await send(server, "POST", "/account/keys", { session, form: { name: "k", csrf } })).text
    const js = /<script src="(\/account\/assets\/account\.[0-9a-f]{16}\.js)" defer><\/script>/.exec(created)![1]!
    const script = await send(server, "GET", js)
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect((await send(server, "GET", "/account/assets/account.0000000000000000.css")).status).toBe(404)
  })

  it("rotating a key shows its successor once; both work through the grace; another account's key is refused", async () => {
    const { token } = await accountWithLink(server, "free", "rotation")
    const session = await signIn(server, token)
    const csrf = /name="csrf" value="([^"]+)"/.exec((await send(server, "GET", "/account/keys", { session })).text)![1]!
    const first = (await send(server, "POST", "/account/keys", { session, form: { name: "ci", csrf } })).text
    const old = /<code id="secret">([^<]+)<\/code>/.exec(first)![1]!
    await send(server, "POST", "/account/keys", { session, form: { name: "laptop", csrf } })
    const list = (await send(server, "GET", "/account/keys", { session })).text
    const id = /action="\/account\/keys\/([^/]+)\/rotate"/.exec(list)![1]!
    const rotated = await send(server, "POST", `/account/keys/${id}/rotate`, { session, form: { csrf } })
    expect(rotated.status).toBe(200)
    expect(rotated.text).toContain("<h1>Key rotated</h1>")
    expect(rotated.text).toMatch(/The old key <code>dsk_[0-9A-Za-z]{8}<\/code> keeps working until <time/)
    const successor = /<code id="secret">([^<]+)<\/code>/.exec(rotated.text)![1]!
    expect(successor).not.toBe(old)
    for (const key of [old, successor]) expect((await call(server, "GET", "/api/v1/me", { key })).status).toBe(200)

    const other = await signIn(server, (await accountWithLink(server, "free", "rotation-other")).token)
    const otherCsrf = /name="csrf" value="([^"]+)"/.exec((await send(server, "GET", "/account/keys", { session: other })).text)![1]!
    const refused = await send(server, "POST", `/account/keys/${id}/rotate`, { session: other, form: { csrf: otherCsrf } })
    expect(refused.status).toBe(404)
  })
})
