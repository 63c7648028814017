/**
 * Renders the interactive reference at /docs in headless Chromium (Debian's `chromium`, driven
 * by playwright-core). Where no Chromium is installed the test is skipped and says why.
 */
import { existsSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { memoryAdapter, type Running, start } from "./harness.ts"

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const missing = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (install Debian's chromium, or set CHROMIUM_PATH)`

describe.skipIf(missing !== undefined)(`/docs in headless Chromium${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter)
  })
  afterAll(() => server.close())

  it("renders the API reference with every operation, without a key", async () => {
    const { chromium } = await import("playwright-core")
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
    })
    try {
      const page = await browser.newPage()
      const errors: Array<string> = []
      page.on("pageerror", (error) => errors.push(error.message))
      const response = await page.goto(`${server.base}/docs`, { waitUntil: "load" })
      expect(response?.status()).toBe(200)
      await page.getByText("Reveal a name").first().waitFor({ timeout: 30_000 })
      const text = await page.locator("body").innerText()
      for (const summary of ["Key and plan record", "Page of listings", "One listing", "Hold a listing", "Use the one extension", "End a hold"]) {
        expect(text).toContain(summary)
      }
      expect(await page.title()).toContain("dropshelf")
      expect(errors).toEqual([])
    } finally {
      await browser.close()
    }
  })
})

if (missing !== undefined) {
  describe("/docs in headless Chromium", () => {
    it.skip(`skipped: ${missing}`, () => {})
  })
}
