/**
 * The code the `/docs` page writes, run as a reader would: Chromium (Debian's `chromium`, driven
 * by playwright-core) renders the page of a fresh `npm start` demo; for the main operations the
 * curl, Python (requests and http.client) and Node (fetch) snippets are read off the page and run
 * unchanged but for the key placeholder, replaced by the demo's business key; each gets a 2xx.
 * The status is read without touching the snippet: curl's from a `.curlrc` (`CURL_HOME`) that
 * adds `--write-out`; Python's and Node's from a hook loaded before the snippet that notes each
 * response's status. Scalar's `requests` snippet is the call alone, without `import requests`:
 * it runs with requests imported, as in a Python session that has it.
 * Skipped, saying why, where Chromium, curl, python3 or requests is missing.
 */
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDemo } from "./demoServer.ts"

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const has = (command: string, args: ReadonlyArray<string>) => spawnSync(command, args, { stdio: "ignore" }).status === 0
const noChromium = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (install Debian's chromium, or set CHROMIUM_PATH)`
const noCurl = has("curl", ["--version"]) ? undefined : "no curl on PATH"
const noPython = has("python3", ["--version"]) ? undefined : "no python3 on PATH"
const noRequests = noPython ?? (has("python3", ["-c", "import requests"]) ? undefined : "python3 has no requests (install python3-requests)")

/** The placeholder Scalar writes where the reader's key goes. */
const PLACEHOLDER = "YOUR_SECRET_TOKEN"

/** The main operations, by the path (and method) a snippet of each calls; the listing is the documented example. */
const OPERATIONS = [
  ["GET", "/api/v1/me"],
  ["GET", "/api/v1/domains"],
  ["GET", "/api/v1/domains/Ab3dE9xZ"],
  ["POST", "/api/v1/domains/Ab3dE9xZ/reveal"],
  ["POST", "/api/v1/domains/Ab3dE9xZ/hold"],
  ["GET", "/api/v1/holds"]
] as const

/** Records the status of every response Python's http.client (so requests too) reads, then runs the snippet. */
const PYTHON_RUNNER = `import http.client, sys
_getresponse = http.client.HTTPConnection.getresponse
def getresponse(self, *args, **kwargs):
    response = _getresponse(self, *args, **kwargs)
    print(f"HTTP_STATUS {response.status}", file=sys.stderr)
    return response
http.client.HTTPConnection.getresponse = getresponse
namespace = {"__name__": "__main__"}
if sys.argv[2] == "requests":
    import requests
    namespace["requests"] = requests
with open(sys.argv[1]) as snippet:
    exec(compile(snippet.read(), sys.argv[1], "exec"), namespace)
`

/** Records the status of every response `fetch` resolves to. */
const NODE_HOOK = `const original = globalThis.fetch
globalThis.fetch = async (...args) => {
  const response = await original(...args)
  process.stderr.write(\`HTTP_STATUS \${response.status}\\n\`)
  return response
}
`

interface Client {
  readonly name: string
  /** The client menu's group and entry. */
  readonly group: string
  readonly option: string
  /** The class of the page's code blocks in this language. */
  readonly language: string
  readonly missing: string | undefined
}

const CLIENTS: ReadonlyArray<Client> = [
  { name: "curl", group: "Shell", option: "Curl", language: "curl", missing: noCurl },
  { name: "Python requests", group: "Python", option: "Requests", language: "python", missing: noRequests },
  { name: "Python http.client", group: "Python", option: "http.client", language: "python", missing: noPython },
  { name: "Node fetch", group: "Node.js", option: "Fetch", language: "javascript", missing: undefined }
]

/** The method and path a snippet calls, in any of the clients above. */
const callOf = (snippet: string, base: string): string | undefined => {
  const url = new RegExp(`${base.replace(/[.]/g, "\\.")}(/[^\\s'"\`]*)`).exec(snippet)?.[1]
  const method = /--request (\w+)|requests\.(\w+)\(|method: '(\w+)'|conn\.request\(\s*"(\w+)"/.exec(snippet)?.slice(1).find((group) => group !== undefined)
  const path = url ?? /conn\.request\(\s*"\w+",\s*"([^"]+)"/.exec(snippet)?.[1]
  return path === undefined ? undefined : `${(method ?? "GET").toUpperCase()} ${path}`
}

/** Runs `command`; its output and the HTTP statuses it noted. */
const runSnippet = (command: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<{ readonly output: string; readonly statuses: ReadonlyArray<number> }>((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"], timeout: 30_000 })
    let output = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    child.on("error", reject)
    child.on("close", (code) =>
      code === 0
        ? resolve({ output, statuses: [...output.matchAll(/HTTP_STATUS (\d{3})/g)].map((match) => Number(match[1])) })
        : reject(new Error(`${command} exited ${code}: ${output}`)))
  })

describe.skipIf(noChromium !== undefined)(`the /docs snippets against a fresh demo${noChromium ? ` (skipped: ${noChromium})` : ""}`, () => {
  let demo: Awaited<ReturnType<typeof startDemo>>
  let browser: Browser
  let page: Page
  let dir: string

  beforeAll(async () => {
    demo = await startDemo()
    dir = mkdtempSync(join(tmpdir(), "dropshelf-snippets-"))
    writeFileSync(join(dir, ".curlrc"), `silent\nwrite-out = "\\nHTTP_STATUS %{http_code}\\n"\n`)
    writeFileSync(join(dir, "python-runner.py"), PYTHON_RUNNER)
    writeFileSync(join(dir, "node-hook.mjs"), NODE_HOOK)
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
    })
    // Tall enough that the operations this test reads are laid out (Scalar renders sections as they come into view).
    page = await browser.newPage({ viewport: { width: 1400, height: 12_000 } })
    const response = await page.goto(`${demo.base}/docs`, { waitUntil: "load" })
    expect(response?.status()).toBe(200)
    await page.waitForFunction(`document.querySelectorAll('code.language-curl').length >= ${OPERATIONS.length + 1}`, undefined, { timeout: 60_000 })
  }, 180_000)
  afterAll(async () => {
    await browser?.close()
    await demo?.stop()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  /** Picks the client in the first operation's menu (the page then writes every snippet with it); its snippets by call. */
  const snippetsOf = async (client: Client) => {
    await page.getByRole("button", { name: /^Change code sample language: / }).first().click()
    await page.getByRole("group", { name: client.group }).getByRole("option", { name: client.option, exact: true }).click()
    const marker = client.option === "http.client" ? "http.client" : client.option === "Requests" ? "requests." : undefined
    // Every block of the language written, by the client picked (both Python clients are "python").
    await page.waitForFunction(
      `[...document.querySelectorAll("code.language-${client.language}")].filter((block) => block.textContent.includes(${JSON.stringify(marker ?? "")})).length >= ${OPERATIONS.length}`,
      undefined,
      { timeout: 30_000 }
    )
    const byCall = new Map<string, string>()
    for (const snippet of await page.locator(`code.language-${client.language}`).allInnerTexts()) {
      const call = callOf(snippet, demo.base)
      if (call !== undefined && !byCall.has(call)) byCall.set(call, snippet)
    }
    return byCall
  }

  for (const client of CLIENTS) {
    it.skipIf(client.missing !== undefined)(`${client.name}: each main operation's snippet answers 2xx${client.missing ? ` (skipped: ${client.missing})` : ""}`, async () => {
      const snippets = await snippetsOf(client)
      for (const [method, path] of OPERATIONS) {
        const snippet = snippets.get(`${method} ${path}`)
        expect(snippet, `${client.name} ${method} ${path}`).toBeDefined()
        // Only the optional parameters' absence makes a snippet runnable: none is filled in.
        expect(snippet).not.toMatch(/cursor|since|If-None-Match|Idempotency-Key/)
        expect(snippet!.split(PLACEHOLDER)).toHaveLength(2)
        const keyed = snippet!.replace(PLACEHOLDER, demo.businessKey)
        const file = join(dir, `snippet-${client.language}.${client.language === "javascript" ? "mjs" : "txt"}`)
        writeFileSync(file, keyed)
        const env = { ...process.env, CURL_HOME: dir }
        const { output, statuses } = client.language === "curl"
          ? await runSnippet("sh", [file], env)
          : client.language === "python"
          ? await runSnippet("python3", [join(dir, "python-runner.py"), file, client.option === "Requests" ? "requests" : "plain"], env)
          : await runSnippet(process.execPath, ["--import", join(dir, "node-hook.mjs"), file], env)
        expect(statuses, `${client.name} ${method} ${path}: ${output}\n${keyed}`).toHaveLength(1)
        expect(statuses[0], `${client.name} ${method} ${path}: ${output}\n${keyed}`).toBeGreaterThanOrEqual(200)
        expect(statuses[0], `${client.name} ${method} ${path}: ${output}\n${keyed}`).toBeLessThan(300)
      }
    }, 120_000)
  }
})

if (noChromium !== undefined) {
  describe("the /docs snippets against a fresh demo", () => {
    it.skip(`skipped: ${noChromium}`, () => {})
  })
}
