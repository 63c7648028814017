import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Operators } from "@dropshelf/core"
import { addListings, awayFromMinuteEdge, call, listing, memoryAdapter, type Running, start } from "./harness.ts"
import { accountWithLink, csrfOf, expectAccountPageHeaders, send, signIn } from "./accountSupport.ts"

/*
 * The directory for a signed-in person over HTTP, as a browser sends it: refusals of a filter
 * as the API words them, CSRF on reveal and hold, the per-account web rate limit, the upgrade
 * link, and the 405 table. The flows a person clicks through are in account-directory-browser.
 */

const DAY = 86_400_000
const UPGRADE_URL = "https://shop.example.com/upgrade?from=directory"

/** Text as the templates escape it. */
const escaped = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("\"", "&quot;").replaceAll("'", "&#39;")

/** A signed-in person on `plan`, with a key of the same account. */
const person = async (server: Running, plan: "free" | "pro" | "business", name: string) => {
  const { account, token } = await accountWithLink(server, plan, name)
  const session = await signIn(server, token)
  const { secret } = await server.run(Operators.Operators.use((operators) => operators.createKey(account.id, `${name}-key`)))
  return { account, session, secret }
}

describe("the account area's directory over HTTP", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter, { upgradeUrl: UPGRADE_URL })
  })
  afterAll(() => server.close())

  it("a filter the API refuses is refused with the API's own message, next to its field", async () => {
    const { secret, session } = await person(server, "pro", "filters")
    for (const [query, parameter] of [["limit=ten", "limit"], ["spam=high", "spam"], ["rd=7-9", "rd"], ["category=nosuchcode", "category"]] as const) {
      const api = await call(server, "GET", `/api/v1/domains?${query}`, { key: secret })
      expect(api.status, query).toBe(400)
      expect(api.body.error.parameter).toBe(parameter)
      const answer = await send(server, "GET", `/account/directory?${query}`, { session })
      expect(answer.status, query).toBe(400)
      expect(answer.text).toContain(`<p class="notice bad" id="f-${parameter}-error">${escaped(api.body.error.message)}</p>`)
      expect(answer.text).toContain(`aria-invalid="true" aria-describedby="`)
      expect(answer.text).toMatch(new RegExp(`role="alert">[^<]+ needs another value: see <a href="#f-${parameter}">the field</a> below\\.`))
    }
    // A parameter that is no field of the form is refused above it, in the API's words.
    const cursor = await send(server, "GET", "/account/directory?cursor=forged", { session })
    expect(cursor.status).toBe(400)
    const apiCursor = await call(server, "GET", "/api/v1/domains?cursor=forged", { key: secret })
    expect(cursor.text).toContain(`<p class="notice bad" role="alert">${escaped(apiCursor.body.error.message)}</p>`)
    // An empty field is a parameter not given, as a blank form sends it.
    const blank = await send(server, "GET", "/account/directory?q=&limit=&spam=&tld=", { session })
    expect(blank.status).toBe(200)
  })

  it("reveal and hold are refused without the session's CSRF token or from another site, and spend nothing", async () => {
    const { secret, session } = await person(server, "pro", "csrf-reveal")
    const row = listing({ domain: "csrfguard.com", discoveredAt: Date.now() - 30 * DAY })
    await addListings(server, [row])
    const csrf = csrfOf((await send(server, "GET", `/account/directory/${row.id}`, { session })).text)
    for (const action of ["reveal", "hold"]) {
      const attempts: Array<Parameters<typeof send>[3]> = [
        { session, form: {} },
        { session, form: { csrf: "x".repeat(43) } },
        { session, form: { csrf }, headers: { "sec-fetch-site": "cross-site", origin: "https://evil.example" } },
        { session, form: { csrf }, headers: { "sec-fetch-site": undefined, origin: "https://evil.example" } }
      ]
      for (const attempt of attempts) {
        const answer = await send(server, "POST", `/account/directory/${row.id}/${action}`, attempt)
        expect(answer.status, action).toBe(403)
        expect(answer.text).toContain("Request refused")
      }
    }
    const me = await call(server, "GET", "/api/v1/me", { key: secret })
    expect(me.body.reveals.used).toBe(0)
    expect((await call(server, "GET", "/api/v1/holds", { key: secret })).body.data).toEqual([])
    // The same POST from the site's own page goes through.
    expect((await send(server, "POST", `/account/directory/${row.id}/reveal`, { session, form: { csrf } })).status).toBe(303)
    expect((await call(server, "GET", "/api/v1/me", { key: secret })).body.reveals.used).toBe(1)
  })

  it("a person's requests count against the plan's per-minute ceiling, apart from the account's keys", async () => {
    await awayFromMinuteEdge(15)
    const { secret, session } = await person(server, "free", "web-limit")
    for (let request = 1; request <= 20; request++) {
      const path = request % 2 === 0 ? "/account/directory" : "/account"
      expect((await send(server, "GET", path, { session })).status, `request ${request}`).toBe(200)
    }
    const refused = await send(server, "GET", "/account/directory", { session })
    expect(refused.status).toBe(429)
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(refused.text).toContain(`Try again in ${retryAfter} seconds.`)
    expect(refused.headers.get("content-security-policy")).toContain("default-src 'none'")
    // A form counts too, and is refused before it acts.
    const csrf = csrfOf(refused.text)
    expect((await send(server, "POST", "/account/keys", { session, form: { name: "late", csrf } })).status).toBe(429)
    // The account's key has its own window, untouched.
    const me = await call(server, "GET", "/api/v1/me", { key: secret })
    expect(me.status).toBe(200)
    expect(me.headers.get("x-ratelimit-remaining")).toBe("19")
    // Another person is not limited by this one.
    const other = await person(server, "free", "web-limit-other")
    expect((await send(server, "GET", "/account/directory", { session: other.session })).status).toBe(200)
  })

  it("what the plan lacks links to the upgrade: a featured reveal and holds on free", async () => {
    const { session } = await person(server, "free", "upgrade-link")
    const featured = listing({ domain: "goldshelf.com", tier: "featured", discoveredAt: Date.now() - 30 * DAY })
    await addListings(server, [featured])
    const shown = await send(server, "GET", `/account/directory/${featured.id}`, { session })
    expect(shown.status).toBe(200)
    const link = `<a href="${escaped(UPGRADE_URL)}">Upgrade your plan</a>`
    expect(shown.text).toContain(`Revealing a featured listing needs the pro or business plan. ${link}`)
    expect(shown.text).toContain(`Holds need the pro or business plan. ${link}`)
    const csrf = csrfOf(shown.text)
    const reveal = await send(server, "POST", `/account/directory/${featured.id}/reveal`, { session, form: { csrf } })
    expect(reveal.status).toBe(402)
    expect(reveal.text).toMatch(/role="alert">Revealing a featured listing needs the pro or business plan\. <a href="https:\/\/shop\.example\.com/)
    const hold = await send(server, "POST", `/account/directory/${featured.id}/hold`, { session, form: { csrf } })
    expect(hold.status).toBe(402)
  })

  it("the spec's refusals are sentences: allowance spent, another account's hold, the hold cap", async () => {
    const free = await person(server, "free", "spent")
    const rows = Array.from({ length: 11 }, (_, index) => listing({ domain: `spentshelf${index}.com`, discoveredAt: Date.now() - 30 * DAY }))
    await addListings(server, rows)
    for (const row of rows.slice(0, 10)) expect((await call(server, "POST", `/api/v1/domains/${row.id}/reveal`, { key: free.secret })).status).toBe(200)
    const last = rows[10]!
    const shown = await send(server, "GET", `/account/directory/${last.id}`, { session: free.session })
    expect(shown.text).toContain("You have used this month's reveals; they come back <time")
    expect(shown.text).not.toContain("<button type=\"submit\">Reveal</button>")
    // A stale page's form is refused as the API refuses it.
    const refused = await send(server, "POST", `/account/directory/${last.id}/reveal`, { session: free.session, form: { csrf: csrfOf(shown.text) } })
    expect(refused.status).toBe(402)
    expect(refused.text).toMatch(/role="alert">You have used this month's reveals; they come back <time[^>]*>[^<]+<\/time>\. <a href="https:\/\/shop/)
    const confirm = await send(server, "GET", `/account/directory/${last.id}/reveal`, { session: free.session })
    expect(confirm.status).toBe(303)

    const holder = await person(server, "pro", "cap-holder")
    const capped = Array.from({ length: 4 }, (_, index) => listing({ domain: `capshelf${index}.com`, discoveredAt: Date.now() - 30 * DAY }))
    await addListings(server, capped)
    for (const row of capped) expect((await call(server, "POST", `/api/v1/domains/${row.id}/reveal`, { key: holder.secret })).status).toBe(200)
    for (const row of capped.slice(0, 3)) expect((await call(server, "POST", `/api/v1/domains/${row.id}/hold`, { key: holder.secret })).status).toBe(200)
    const csrf = csrfOf((await send(server, "GET", `/account/directory/${capped[3]!.id}`, { session: holder.session })).text)
    const cap = await send(server, "POST", `/account/directory/${capped[3]!.id}/hold`, { session: holder.session, form: { csrf } })
    expect(cap.status).toBe(403)
    expect(cap.text).toContain("All 3 holds your plan allows are running. End one to hold another.")

    const other = await person(server, "pro", "cap-other")
    const held = await send(server, "GET", `/account/directory/${capped[0]!.id}`, { session: other.session })
    expect(held.text).toMatch(/Another account holds this listing until <time[^>]*>[^<]+<\/time>\. Try again after\./)
    const otherCsrf = csrfOf(held.text)
    const reveal = await send(server, "POST", `/account/directory/${capped[0]!.id}/reveal`, { session: other.session, form: { csrf: otherCsrf } })
    expect(reveal.status).toBe(403)
    const hold = await send(server, "POST", `/account/directory/${capped[0]!.id}/hold`, { session: other.session, form: { csrf: otherCsrf } })
    expect(hold.status).toBe(403)
    expect(hold.text).toContain("Another account holds this listing until")
    expect((await call(server, "GET", "/api/v1/me", { key: other.secret })).body.reveals.used).toBe(0)
  })

  it("every directory page carries the account area's security headers and no inline script or style", async () => {
    const { session } = await person(server, "pro", "headers")
    const row = listing({ domain: "headerbay.com", discoveredAt: Date.now() - 30 * DAY })
    await addListings(server, [row])
    for (const path of ["/account/directory", "/account/directory?limit=x", `/account/directory/${row.id}`, `/account/directory/${row.id}/reveal`]) {
      const answer = await send(server, "GET", path, { session })
      expectAccountPageHeaders(answer, path)
    }
  })

  it("an unknown listing is a 404 page; other methods are 405 with Allow; signed out goes to sign in", async () => {
    const { session } = await person(server, "pro", "not-found")
    const missing = await send(server, "GET", "/account/directory/NOSUCH01", { session })
    expect(missing.status).toBe(404)
    expect(missing.text).toContain("No such listing")
    const wrong = await send(server, "DELETE", "/account/directory/NOSUCH01/hold", { session })
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get("allow")).toContain("POST")
    expect((await send(server, "PUT", "/account/directory", { session })).status).toBe(405)
    for (const path of ["/account/directory", "/account/directory/NOSUCH01", "/account/directory/NOSUCH01/reveal"]) {
      const answer = await send(server, "GET", path)
      expect(answer.status, path).toBe(303)
      expect(answer.headers.get("location")).toBe("/signin")
    }
  })
})
