/**
 * The holds, reveals, watches and security pages in headless Chromium, as a person uses them:
 * one flow per page, role locators, an axe-core check of every page, and the API agreeing with
 * what the page did. Where no Chromium is installed the suite is skipped and says why.
 */
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectAccessible, missingChromium as missing, suiteBrowser } from "./browser.ts"
import { Operators } from "@dropshelf/core"
import { addListings, call, listing, memoryAdapter, newId, type Running, start } from "./harness.ts"
import { accountWithKey, apiHolds, heldThroughApi, revealedListing } from "./accountApiSupport.ts"
import { eventually, receiver } from "./receiver.ts"

describe.skipIf(missing !== undefined)(`the account area's holds, reveals, watches and security pages in headless Chromium${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: Running
  const chromium = suiteBrowser()
  const { errors } = chromium

  beforeAll(async () => {
    server = await start(memoryAdapter, { watchWorker: true })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  /** A signed-in page of a fresh account on `plan`, and the account's API key. */
  const signedIn = async (plan: "free" | "pro" | "business", name: string, options: { readonly javaScriptEnabled?: boolean } = {}) => {
    const person = await accountWithKey(server, plan, name)
    const page = await chromium.open({ javaScriptEnabled: options.javaScriptEnabled ?? true })
    await page.goto(person.url)
    await page.getByRole("button", { name: "Continue" }).click()
    await page.getByRole("heading", { level: 1, name: "Your account" }).waitFor()
    return { page, ...person }
  }

  const visit = async (page: Page, link: string, heading: string) => {
    await page.getByRole("link", { name: link, exact: true }).click()
    await page.getByRole("heading", { level: 1, name: heading }).waitFor()
    await expectAccessible(page)
  }


  it("holds: a hold made through the API is extended and ended on the page, and GET /api/v1/holds agrees", async () => {
    const { page, secret } = await signedIn("pro", "browser-holder", { javaScriptEnabled: false })
    const first = await heldThroughApi(server, secret)
    const second = await heldThroughApi(server, secret)
    await page.getByRole("link", { name: "Holds", exact: true }).click()
    await page.getByRole("heading", { level: 1, name: "Holds" }).waitFor()
    expect(await page.locator("main").innerText()).toContain("2 of 3 holds running")

    await page.getByRole("button", { name: `Extend the hold on ${first.listing_id} by 24 hours` }).click()
    await page.getByRole("status").filter({ hasText: `The hold on ${first.listing_id} now ends` }).waitFor()
    expect(await page.getByRole("button", { name: `Extend the hold on ${first.listing_id} by 24 hours` }).count()).toBe(0)
    await page.getByRole("button", { name: `Registered: end the hold on ${second.listing_id}` }).click()
    await page.getByRole("status").filter({ hasText: `The hold on ${second.listing_id} is ended: registered.` }).waitFor()

    const api = Object.fromEntries((await apiHolds(server, secret)).map((hold) => [hold.id, hold]))
    expect(api[first.id]).toMatchObject({ state: "running", can_extend: false })
    expect(Date.parse(api[first.id]!.expires_at) - Date.parse(first.expires_at)).toBe(24 * 3_600_000)
    expect(api[second.id]).toMatchObject({ state: "registered" })
    expect(await page.locator("main").innerText()).toContain("1 of 3 holds running")

    // Page scripts cannot run without JavaScript, axe's included: the page is checked again with them.
    const checked = await chromium.browser().newContext()
    try {
      await checked.addCookies(await page.context().cookies())
      const again = await checked.newPage()
      await again.goto(`${server.base}/account/holds`)
      await expectAccessible(again)
    } finally {
      await checked.close()
    }
    expect(errors).toEqual([])
  }, 60_000)

  it("reveals: a name revealed through the API is in the month's ledger", async () => {
    const { page, secret } = await signedIn("free", "browser-revealer")
    const revealed = await revealedListing(server, secret)
    await visit(page, "Reveals", "Reveals")
    const main = await page.locator("main").innerText()
    expect(main).toMatch(/1 of 10 reveals used in \d{4}-\d{2}/)
    expect(await page.getByRole("cell", { name: revealed.domain }).count()).toBe(1)
    expect(errors).toEqual([])
  }, 60_000)

  it("watches: created from the form, paused and resumed; a delivery's attempts from a local receiver, sent again", async () => {
    const hook = await receiver()
    try {
      const { page, secret } = await signedIn("business", "browser-watcher")
      await visit(page, "Watches", "Watches")
      const name = `open <script>alert("x")</script> names`
      await page.getByLabel("Name").fill(name)
      await page.getByLabel("Query").fill("tier=open")
      await page.getByLabel("Webhook URL (optional)").fill(hook.url)
      await page.getByRole("button", { name: "Create watch" }).click()
      await page.getByRole("heading", { level: 1, name: "Watch created" }).waitFor()
      await expectAccessible(page)
      expect((await page.locator("#secret").innerText()).trim()).toMatch(/^whsec_/)
      await page.getByRole("link", { name: `Back to ${name}` }).click()
      await page.getByRole("heading", { level: 1, name }).waitFor()
      await expectAccessible(page)

      await page.getByRole("button", { name: "Pause" }).click()
      await page.getByRole("status").filter({ hasText: "The watch is paused." }).waitFor()
      const [watch] = (await call(server, "GET", "/api/v1/watches", { key: secret })).body.data
      expect(watch).toMatchObject({ name, paused: true, webhook: { url: hook.url } })
      await page.getByRole("button", { name: "Resume" }).click()
      await page.getByRole("status").filter({ hasText: "The watch is running again." }).waitFor()

      await addListings(server, [listing({ domain: `browser-${newId().toLowerCase()}.com`, tier: "open" })])
      expect(await eventually(() => hook.received.length >= 1)).toBe(true)
      const eventId = hook.received[0]!.headers["webhook-id"]!
      expect(await eventually(async () => {
        await page.reload()
        return (await page.locator("main").innerText()).includes("HTTP 204")
      })).toBe(true)
      await expectAccessible(page)
      await page.getByRole("button", { name: `Send again: delivery ${eventId}` }).click()
      await page.getByRole("status").filter({ hasText: `Delivery ${eventId} will be sent again shortly.` }).waitFor()
      expect(await eventually(() => hook.received.length >= 2)).toBe(true)
      expect(hook.received[1]!.headers["webhook-id"]).toBe(eventId)
      expect(errors).toEqual([])
    } finally {
      await hook.close()
    }
  }, 60_000)

  it("security: a key the operator made and the page revoked are in the log", async () => {
    const person = await accountWithKey(server, "pro", "browser-secure")
    const made = await server.run(Operators.Operators.use((operators) => operators.createKey(person.account.id, "from-cli")))
    const page = await chromium.open()
    await page.goto(person.url)
    await page.getByRole("button", { name: "Continue" }).click()
    await page.getByRole("heading", { level: 1, name: "Your account" }).waitFor()
    await visit(page, "Keys", "API keys")
    await page.getByRole("button", { name: `Revoke key ${made.key.prefix} (from-cli)` }).click()
    await page.getByRole("status").filter({ hasText: `Key ${made.key.prefix} is revoked.` }).waitFor()
    await visit(page, "Security", "Security log")
    const rows = await page.getByRole("row").allInnerTexts()
    expect(rows.filter((row) => row.includes(`${made.key.prefix} (from-cli)`)).map((row) => row.split("\t")[1])).toEqual(["Key revoked", "Key created"])
    expect(rows.some((row) => row.includes("Signed in") && row.includes("with a one-time link"))).toBe(true)
  }, 60_000)

  it("watches without JavaScript: create, pause and delete with the forms alone", async () => {
    const { page, secret } = await signedIn("pro", "no-script-watcher", { javaScriptEnabled: false })
    await page.getByRole("link", { name: "Watches", exact: true }).click()
    await page.getByLabel("Name").fill("plain forms")
    await page.getByLabel("Query").fill("tld=com")
    await page.getByRole("button", { name: "Create watch" }).click()
    await page.getByRole("heading", { level: 1, name: "plain forms" }).waitFor()
    await page.getByRole("button", { name: "Pause" }).click()
    await page.getByRole("status").filter({ hasText: "The watch is paused." }).waitFor()
    expect((await call(server, "GET", "/api/v1/watches", { key: secret })).body.data).toMatchObject([{ name: "plain forms", query: { tld: "com" }, paused: true }])
    await page.getByRole("button", { name: "Delete this watch" }).click()
    await page.getByRole("status").filter({ hasText: "The watch plain forms is deleted." }).waitFor()
    expect((await call(server, "GET", "/api/v1/watches", { key: secret })).body.data).toEqual([])
    expect(errors).toEqual([])
  }, 60_000)

  it("every new page fits a 360 px wide phone and passes axe there", async () => {
    const hook = await receiver()
    try {
      const { page, secret } = await signedIn("business", "browser-phone")
      await heldThroughApi(server, secret)
      const created = await call(server, "POST", "/api/v1/watches", {
        key: secret,
        body: JSON.stringify({ name: "a watch with a rather long name to wrap on a phone", query: { tier: "open" }, webhook_url: `${hook.url}/a/rather/long/path/for/a/phone` })
      })
      await addListings(server, [listing({ domain: `phone-${newId().toLowerCase()}.com`, tier: "open" })])
      expect(await eventually(() => hook.received.length >= 1)).toBe(true)
      const phone = await chromium.browser().newContext({ viewport: { width: 360, height: 740 } })
      try {
        await phone.addCookies(await page.context().cookies())
        const small = await phone.newPage()
        for (const path of ["/account/holds", "/account/reveals", "/account/watches", `/account/watches/${created.body.id}`, "/account/security"]) {
          await small.goto(`${server.base}${path}`)
          await expectAccessible(small)
          expect(await small.evaluate<number>("document.documentElement.scrollWidth"), path).toBeLessThanOrEqual(360)
        }
      } finally {
        await phone.close()
      }
    } finally {
      await hook.close()
    }
  }, 60_000)
})

if (missing !== undefined) {
  describe("the account area's holds, reveals, watches and security pages in headless Chromium", () => {
    it.skip(`skipped: ${missing}`, () => {})
  })
}
