/**
 * Headless Chromium for the page tests (Debian's `chromium`, driven by playwright-core) and an
 * axe-core check of a page. A suite skips, saying why, where `missingChromium` is set.
 */
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Browser, BrowserContext, BrowserContextOptions, Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, expect } from "vitest"

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

/** Why the browser suites are skipped, or `undefined` when Chromium is there. */
export const missingChromium = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (install Debian's chromium, or set CHROMIUM_PATH)`

/** Chromium as the tests run it: headless, no sandbox (root in CI), no calls home. */
export const launchChromium = async (): Promise<Browser> => {
  const { chromium } = await import("playwright-core")
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
  })
}

/**
 * Chromium for one suite: launched before its tests, closed after them. `open` gives a page in a
 * fresh context, closed after each test, whose faults are recorded in `errors`: an uncaught
 * exception, a dialog, a console error (a CSP violation among them). A refused request's status,
 * which the console reports as a failed load, is not a fault. With `noErrorsAfterEach`, every
 * test must end with none.
 */
export const suiteBrowser = (options: { readonly noErrorsAfterEach?: boolean } = {}) => {
  let browser: Browser | undefined
  let context: BrowserContext | undefined
  const errors: Array<string> = []
  beforeAll(async () => {
    browser = await launchChromium()
  }, 60_000)
  afterEach(async () => {
    await context?.close()
    context = undefined
    if (options.noErrorsAfterEach === true) expect(errors).toEqual([])
    errors.length = 0
  })
  afterAll(async () => {
    await browser?.close()
  })
  const open = async (contextOptions: BrowserContextOptions = {}): Promise<Page> => {
    context = await browser!.newContext(contextOptions)
    const page = await context.newPage()
    page.on("pageerror", (error) => errors.push(error.message))
    page.on("dialog", (dialog) => {
      errors.push(`a dialog opened: ${dialog.message()}`)
      void dialog.dismiss()
    })
    page.on("console", (message) => {
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) errors.push(message.text())
    })
    return page
  }
  /** The browser itself, for a context a test manages alone (a phone beside the page under test). */
  return { open, errors, browser: () => browser! }
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string> }>
}

/**
 * axe-core's verdict on the page as it stands: a serious or critical violation fails. Its source
 * is evaluated through the DevTools protocol, which the page's Content-Security-Policy (no
 * inline script) does not govern.
 */
export const expectAccessible = async (page: Page) => {
  await page.evaluate(AXE_SOURCE)
  const violations = await page.evaluate<ReadonlyArray<Violation>>(
    `axe.run(document, { resultTypes: ["violations"] }).then((result) =>
      result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`
  )
  const serious = violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical")
  expect(serious, `${page.url()}: ${JSON.stringify(serious, null, 2)}`).toEqual([])
}
