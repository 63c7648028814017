/**
 * Renders the interactive reference at /docs in headless Chromium (Debian's `chromium`, driven
 * by playwright-core). Where no Chromium is installed the test is skipped and says why.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium, missingChromium as missing } from "./browser.ts"
import { account, memoryAdapter, type Running, start } from "./harness.ts"

/** A curl snippet as the page prints it: its URL, method and headers. */
const parseCurl = (snippet: string) => {
  const url = /^curl '?([^'\s\\]+)'?/.exec(snippet.trim())?.[1]
  const method = /--request (\w+)/.exec(snippet)?.[1] ?? "GET"
  const headers = Object.fromEntries([...snippet.matchAll(/--header '([^:]+): ([^']*)'/g)].map((match) => [match[1]!, match[2]!]))
  return { url, method, headers }
}

/** Every number in a JSON value, with its path. */
const numbersIn = (value: unknown, path = ""): Array<[string, number]> =>
  typeof value === "number"
    ? [[path, value]]
    : typeof value === "object" && value !== null
    ? Object.entries(value).flatMap(([key, inner]) => numbersIn(inner, `${path}.${key}`))
    : []

describe.skipIf(missing !== undefined)(`/docs in headless Chromium${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: Running
  let browser: Browser
  let page: Page
  const errors: Array<string> = []
  const elsewhere: Array<string> = []

  beforeAll(async () => {
    server = await start(memoryAdapter)
    browser = await launchChromium()
    // Tall enough that every operation is laid out: Scalar renders sections as they come into view.
    page = await browser.newPage({ viewport: { width: 1400, height: 40_000 } })
    page.on("pageerror", (error) => errors.push(error.message))
    page.on("request", (request) => {
      if (!request.url().startsWith(server.base) && !request.url().startsWith("data:")) elsewhere.push(request.url())
    })
    const response = await page.goto(`${server.base}/docs`, { waitUntil: "load" })
    expect(response?.status()).toBe(200)
    await page.getByText("Reveal a name").first().waitFor({ timeout: 30_000 })
    // Code blocks are highlighted after the text is laid out: wait for one per operation.
    await page.waitForFunction(
      "document.querySelectorAll('code.language-curl').length >= 10 && document.querySelectorAll('code.language-json').length >= 10",
      undefined,
      { timeout: 30_000 }
    )
  }, 90_000)
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("renders the API reference with every operation, without a key", async () => {
    const text = await page.locator("body").innerText()
    for (const summary of ["Key and plan record", "Page of listings", "One listing", "Hold a listing", "Use the one extension", "End a hold", "Where to start"]) {
      expect(text).toContain(summary)
    }
    expect(await page.title()).toContain("dropshelf")
    expect(errors).toEqual([])
    // Scalar's script and the document are inline: nothing comes from a CDN or another origin.
    expect(elsewhere).toEqual([])
  })

  it("offers the API key in its authentication panel and writes it into every snippet as a Bearer key", async () => {
    const text = await page.locator("body").innerText()
    expect(text).not.toContain("No authentication selected")
    expect(text).toContain("Bearer Token")
    const snippets = await page.locator("code.language-curl").allInnerTexts()
    const keyed = snippets.filter((snippet) => parseCurl(snippet).url?.includes("/api/v1/"))
    // One snippet for each keyed operation the served document has.
    const { secret } = await account(server, "free", "document")
    const spec = await (await fetch(`${server.base}/api/v1/openapi.json`, { headers: { authorization: `Bearer ${secret}` } })).json() as {
      paths: Record<string, Record<string, unknown>>
    }
    const operations = Object.entries(spec.paths).filter(([path]) => path.startsWith("/api/v1/")).flatMap(([, item]) => Object.keys(item))
    expect(operations.length).toBeGreaterThan(9)
    expect(keyed).toHaveLength(operations.length)
    for (const snippet of keyed) {
      expect(snippet).toMatch(/--header 'Authorization: Bearer /)
      expect(snippet).not.toContain("Basic")
    }
    const list = keyed.find((snippet) => /\/api\/v1\/domains(\?|'|\s)/.test(snippet) && !snippet.includes("--request"))
    expect(list).toBeDefined()
    expect(parseCurl(list!).headers.Authorization).toMatch(/^Bearer \S+$/)
  })

  it("a snippet copied with a real key in place of the placeholder gets its answer", async () => {
    const key = await account(server, "pro", "docs-snippet")
    const snippets = await page.locator("code.language-curl").allInnerTexts()
    const me = snippets.map(parseCurl).find(({ url }) => url === `${server.base}/api/v1/me`)
    expect(me).toBeDefined()
    const headers = { ...me!.headers, Authorization: me!.headers.Authorization!.replace(/^Bearer \S+$/, `Bearer ${key.secret}`) }
    const answer = await fetch(me!.url!, { method: me!.method, headers })
    expect(answer.status).toBe(200)
    expect(((await answer.json()) as { plan: string }).plan).toBe("pro")
    const index = snippets.map(parseCurl).find(({ url }) => url === `${server.base}/`)
    expect(index).toBeDefined()
    expect((await fetch(index!.url!, { headers: index!.headers })).status).toBe(200)
  })

  it("shows no example number outside what the field can hold", async () => {
    const examples = (await page.locator("code.language-json").allInnerTexts()).map((text) => JSON.parse(text) as unknown)
    expect(examples.length).toBeGreaterThanOrEqual(10)
    const numbers = examples.flatMap((example) => numbersIn(example))
    expect(numbers.length).toBeGreaterThan(10)
    // Every number the API publishes is a count, cents, a 0-100 figure or a small ceiling.
    expect(numbers.filter(([, value]) => value < 0 || value > 2_147_483_647)).toEqual([])
    for (const [path, value] of numbers) {
      if (/directory_score\.(low|high)$|agent_citability\.score$/.test(path)) expect(value, path).toBeLessThanOrEqual(100)
      if (/rate_limit\.limit$/.test(path)) expect(value, path).toBeGreaterThanOrEqual(1)
    }
    const snippets = await page.locator("code.language-curl").allInnerTexts()
    for (const { url } of snippets.map(parseCurl)) {
      const query = new URL(url!).searchParams
      if (query.has("limit")) expect(Number(query.get("limit"))).toBeGreaterThanOrEqual(1)
      if (query.has("limit")) expect(Number(query.get("limit"))).toBeLessThanOrEqual(250)
      for (const [name, value] of query) if (/^-?\d+$/.test(value)) expect(Number(value), name).toBeGreaterThanOrEqual(0)
    }
  })
})

if (missing !== undefined) {
  describe("/docs in headless Chromium", () => {
    it.skip(`skipped: ${missing}`, () => {})
  })
}
