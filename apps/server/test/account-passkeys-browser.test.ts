/**
 * Passkeys in headless Chromium with a virtual authenticator (the DevTools protocol's WebAuthn
 * domain: CTAP2, resident keys, user verification), as a person uses them: sign in by link,
 * add a passkey, sign out, sign in with it, delete it; an answer replayed or made for another
 * origin is refused; an axe-core check of every page. Pages are opened on `localhost`, since a
 * WebAuthn relying party is a domain, never an IP address. Skipped, saying why, without Chromium.
 */
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectAccessible, missingChromium as missing, suiteBrowser } from "./browser.ts"
import { memoryAdapter, type Running, start } from "./harness.ts"
import { accountWithLink } from "./accountSupport.ts"

describe.skipIf(missing !== undefined)(`passkeys in headless Chromium${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: Running
  let base: string
  const chromium = suiteBrowser()
  const { errors } = chromium

  beforeAll(async () => {
    server = await start(memoryAdapter)
    base = server.base.replace("127.0.0.1", "localhost")
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  /** A page with a virtual platform authenticator that verifies its user without asking. */
  const open = async (options: { readonly javaScriptEnabled?: boolean } = {}) => {
    const page = await chromium.open({ javaScriptEnabled: options.javaScriptEnabled ?? true })
    const cdp = await page.context().newCDPSession(page)
    await cdp.send("WebAuthn.enable")
    await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true
      }
    })
    return page
  }

  /** Signs in with an operator's link, on `localhost`. */
  const signInByLink = async (page: Page, name: string) => {
    const { account, url } = await accountWithLink(server, "free", name)
    await page.goto(url.replace(server.base, base))
    await page.getByRole("button", { name: "Continue" }).click()
    await page.getByRole("heading", { level: 1, name: "Your account" }).waitFor()
    return account
  }

  const addPasskey = async (page: Page, name: string) => {
    await page.getByRole("link", { name: "Passkeys" }).click()
    await page.getByRole("heading", { level: 1, name: "Passkeys" }).waitFor()
    await page.getByLabel("Name").fill(name)
    await page.getByRole("button", { name: "Add a passkey" }).click()
    await page.getByText(`Passkey "${name}" is added.`).waitFor()
  }

  const signOut = async (page: Page) => {
    await page.getByRole("button", { name: "Sign out", exact: true }).click()
    await page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor()
  }

  it("sign in by link → add a passkey → sign out → sign in with it → overview → delete it", async () => {
    const page = await open()
    const account = await signInByLink(page, "passkey-person")
    await page.getByRole("link", { name: "Passkeys" }).click()
    await page.getByRole("heading", { level: 1, name: "Passkeys" }).waitFor()
    await page.getByText("No passkeys yet.").waitFor()
    await expectAccessible(page)

    await addPasskey(page, "laptop <b>")
    await page.getByRole("cell", { name: "laptop <b>", exact: true }).waitFor()
    await expectAccessible(page)

    await signOut(page)
    await expectAccessible(page)
    await page.getByRole("button", { name: "Sign in with a passkey" }).click()
    await page.getByRole("heading", { level: 1, name: "Your account" }).waitFor()
    expect(await page.locator("main").innerText()).toContain(account.id)

    await page.getByRole("link", { name: "Passkeys" }).click()
    await page.getByRole("heading", { level: 1, name: "Passkeys" }).waitFor()
    expect(await page.getByRole("cell", { name: "never", exact: true }).count()).toBe(0)
    await page.getByRole("button", { name: "Delete passkey laptop <b>" }).click()
    await page.getByText(`Passkey "laptop <b>" is deleted.`).waitFor()
    await page.getByText("No passkeys yet.").waitFor()
    await expectAccessible(page)

    // The authenticator still holds the credential, but the server no longer knows it.
    await signOut(page)
    await page.getByRole("button", { name: "Sign in with a passkey" }).click()
    await page.getByRole("heading", { level: 1, name: "Passkey sign-in failed" }).waitFor()
    await expectAccessible(page)
    expect(errors).toEqual([])
  })

  it("an answer replayed, or sent to another origin, signs nobody in", async () => {
    const page = await open()
    await signInByLink(page, "replayed-person")
    await addPasskey(page, "phone")
    await signOut(page)

    const answers: Array<string> = []
    await page.route("**/signin/passkey", async (route) => {
      answers.push(route.request().postData() ?? "")
      await (answers.length === 1 ? route.continue() : route.abort())
    })
    await page.getByRole("button", { name: "Sign in with a passkey" }).click()
    await page.getByRole("heading", { level: 1, name: "Your account" }).waitFor()

    const post = (origin: string, body: string) =>
      fetch(`${origin}/signin/passkey`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
        body,
        redirect: "manual"
      })
    const replayed = await post(base, answers[0]!)
    expect(replayed.status).toBe(400)
    expect(replayed.headers.getSetCookie()).toEqual([])

    // A fresh answer, made on localhost, sent to the same server under another origin.
    await signOut(page)
    await page.getByRole("button", { name: "Sign in with a passkey" }).click()
    await expect.poll(() => answers.length).toBe(2)
    const foreign = await post(server.base, answers[1]!)
    expect(foreign.status).toBe(400)
    expect(foreign.headers.getSetCookie()).toEqual([])
  })

  it("without JavaScript, the passkey buttons say they need it and the link still signs in", async () => {
    const page = await open({ javaScriptEnabled: false })
    await page.goto(`${base}/signin`)
    // Chromium parses <noscript> as with scripts on even when they are off: its line is read from the page's source.
    expect(await page.content()).toMatch(/<noscript><p class="hint">Signing in with a passkey needs JavaScript; a one-time link works without it\.<\/p><\/noscript>/)
    expect(await page.getByRole("button", { name: "Sign in with a passkey" }).count()).toBe(0)
    await signInByLink(page, "no-script-person")
    await page.getByRole("link", { name: "Passkeys" }).click()
    await page.getByRole("heading", { level: 1, name: "Passkeys" }).waitFor()
    expect(await page.content()).toContain("Adding a passkey needs JavaScript")
    expect(await page.getByRole("button", { name: "Add a passkey" }).count()).toBe(0)
  })
})
