/**
 * Headless Chromium for the page tests (Debian's `chromium`, driven by playwright-core) and an
 * axe-core check of a page. A suite skips, saying why, where `missingChromium` is set.
 */
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Browser, Page } from "playwright-core"
import { expect } from "vitest"

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
