/**
 * Email sign-in and self sign-up in headless Chromium, with a local SMTP sink: sign up, read the
 * mail, follow its link, continue, signed in; sign in by email, also without JavaScript; the
 * 429 page; the pages of invitation-only and closed sign-up. axe-core checks every page.
 */
import type { Page } from "playwright-core"
import { Operators } from "@dropshelf/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectAccessible, missingChromium as missing, suiteBrowser } from "./browser.ts"
import { memoryAdapter, type Running, start, type StartOptions } from "./harness.ts"
import { type SmtpSink, startSmtpSink } from "./smtpSink.ts"

describe.skipIf(missing !== undefined)(`email sign-in and sign-up in headless Chromium${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let sink: SmtpSink
  let server: Running
  const others: Array<Running> = []
  const chromium = suiteBrowser({ noErrorsAfterEach: true })

  beforeAll(async () => {
    sink = await startSmtpSink()
    server = await start(memoryAdapter, { mail: { smtpUrl: sink.url, from: "no-reply@dropshelf.test" }, signUp: "open" })
  }, 60_000)
  afterAll(async () => {
    for (const other of [server, ...others]) await other?.close()
    await sink?.close()
  })

  const open = (options: { readonly javaScriptEnabled?: boolean } = {}) =>
    chromium.open({ javaScriptEnabled: options.javaScriptEnabled ?? true, viewport: { width: 1280, height: 900 } })

  const heading = (page: Page, name: string) => page.getByRole("heading", { level: 1, name }).waitFor()

  /** The mailed link, opened and continued: the person lands on their overview. */
  const followMail = async (page: Page, address: string, options: { readonly check?: boolean } = {}) => {
    const mail = await sink.waitFor(address)
    await page.goto(mail.link!)
    await heading(page, "Sign in")
    if (options.check !== false) await expectAccessible(page)
    await page.getByRole("button", { name: "Continue" }).click()
    await heading(page, "Your account")
  }

  it("sign up → the mail arrives → its link → Continue → signed in to a new free account", async () => {
    const page = await open()
    await page.goto(`${server.base}/signin`)
    await page.getByRole("link", { name: "Sign up" }).click()
    await heading(page, "Sign up")
    await expectAccessible(page)
    await page.getByLabel("Email address").fill("browser-newcomer@example.com")
    await page.getByLabel("Account name (optional)").fill("Newcomer's shelf")
    await page.getByRole("button", { name: "Sign up" }).click()
    await heading(page, "Check your mail")
    expect(await page.getByRole("status").innerText()).toContain("A sign-in link is on its way to browser-newcomer@example.com.")
    await expectAccessible(page)
    await followMail(page, "browser-newcomer@example.com")
    const overview = await page.locator("main").innerText()
    expect(overview).toContain("Newcomer's shelf")
    expect(overview).toMatch(/Plan\s+free/)
    await expectAccessible(page)
  }, 60_000)

  it("sign in by email, without JavaScript: the form, the same answer for an unknown address, the link", async () => {
    await server.run(Operators.Operators.use((operators) => operators.createAccount("by-mail", "pro", "by-mail@example.com")))
    const page = await open({ javaScriptEnabled: false })
    const ask = async (address: string) => {
      await page.goto(`${server.base}/signin`)
      await heading(page, "Sign in")
      await page.getByLabel("Email address").fill(address)
      await page.getByRole("button", { name: "Email me a sign-in link" }).click()
      await heading(page, "Check your mail")
      return (await page.locator("main").innerText()).replace(address, "ADDRESS")
    }
    // Page scripts cannot run here, axe's included: the other tests check these pages.
    const unknown = await ask("nobody-here@example.com")
    const known = await ask("by-mail@example.com")
    expect(known).toBe(unknown)
    await followMail(page, "by-mail@example.com", { check: false })
    expect(await page.locator("main").innerText()).toContain("by-mail")
    expect(sink.to("nobody-here@example.com")).toEqual([])
  }, 60_000)

  it("a mistyped address, and past the limit the 429 page saying when to try again", async () => {
    const limited = await start(memoryAdapter, {
      mail: { smtpUrl: sink.url, from: "no-reply@dropshelf.test" },
      signInLimits: { requestsPerEmail: 1, windowMs: 24 * 60 * 60_000 }
    })
    others.push(limited)
    const page = await open()
    const ask = async (address: string) => {
      await page.goto(`${limited.base}/signin`)
      await page.getByLabel("Email address").fill(address)
      await page.getByRole("button", { name: "Email me a sign-in link" }).click()
    }
    // A shape the browser accepts and the server does not.
    await ask("someone@localhost")
    await heading(page, "Sign in")
    expect(await page.getByRole("alert").innerText()).toContain("Enter an email address")
    await expectAccessible(page)
    await ask("twice@example.com")
    await heading(page, "Check your mail")
    await expectAccessible(page)
    await ask("twice@example.com")
    await heading(page, "Too many attempts")
    expect(await page.getByRole("alert").innerText()).toMatch(/Try again after \d\d:\d\d UTC/)
    await expectAccessible(page)
  }, 60_000)

  it("sign-up by invitation, closed, and open without mail each say so", async () => {
    const cases: Array<[StartOptions, string]> = [
      [{}, "Accounts by invitation"],
      [{ signUp: "off" }, "Sign-up is closed"],
      [{ signUp: "open" }, "Sign-up needs mail"]
    ]
    const page = await open()
    for (const [options, title] of cases) {
      const other = await start(memoryAdapter, options)
      others.push(other)
      await page.goto(`${other.base}/signup`)
      await heading(page, title)
      expect(await page.getByRole("button", { name: "Sign up" }).count()).toBe(0)
      await expectAccessible(page)
    }
  }, 60_000)
})
