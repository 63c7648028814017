import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { build } from "../../../scripts/build.ts"
import { minimumOf, satisfies } from "../src/NodeSupport.ts"
import { headCommit } from "../src/Staleness.ts"
import { embeddedTarget, expectOneLineFailure, inspectServing, killStragglers, node24, repoRoot, run, runJson, serve, type Target } from "./support.ts"

/*
 * The bundle of `npm run build`, the way a deployment runs it: the API it serves, including what
 * it loads only when first asked (the MCP SDK, the API reference page), and what it says of its
 * checkout and its Node (the operator contract through it is bundle-operator.test.ts). It is built inside the repo because it resolves the packages
 * it leaves to Node (PGlite, the word list) from the repo's node_modules.
 */

const outdir = join(repoRoot, "dist", `test-${process.pid}-${Date.now().toString(36)}`)
const via = { executable: node24, script: join(outdir, "dropshelf.js"), through: "the bundle" }
const ENGINES: string = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")).engines.node

beforeAll(() => build(outdir), 120_000)
afterAll(() => rmSync(outdir, { recursive: true, force: true }))

describe("the bundle and its checkout", () => {
  const staleOutdir = `${outdir}-stale`
  afterAll(() => rmSync(staleOutdir, { recursive: true, force: true }))

  it("says nothing when it was built at the commit the checkout is at", async () => {
    const outcome = await run(["--version"], { via })
    expect(outcome).toMatchObject({ code: 0, stderr: "" })
  })

  it("warns on stderr, and still runs, when it was built at another commit", async () => {
    const head = headCommit(repoRoot)
    expect(head).toMatch(/^[0-9a-f]{40}$/)
    await build(staleOutdir, { commit: "0".repeat(40) })
    const outcome = await run(["--version"], { via: { ...via, script: join(staleOutdir, "dropshelf.js") } })
    expect(outcome.code).toBe(0)
    expect(outcome.stdout).toContain("0.1.0")
    expect(outcome.stderr).toBe(
      `dropshelf: warning: this bundle was built at commit 000000000000, the checkout in ${repoRoot} is at ${head!.slice(0, 12)}; run npm run build\n`
    )
  }, 120_000)
})

describe.skipIf(!existsSync("/proc/self/cmdline"))("the bundle run as a program", () => {
  it("serves in the pid it was started as, node running with the launcher's flags", async () => {
    const script = join(outdir, "dropshelf.js")
    const serving = await inspectServing({ executable: script, path: [dirname(node24), process.env.PATH].join(delimiter) })
    expect(serving.commandLine).toEqual(["node", "--max-semi-space-size=16", "--no-allocation-site-pretenuring", script, "serve", "--port", expect.any(String)])
    expect(serving.children).toEqual([])
  }, 60_000)
})

describe("the bundle serves the API", { timeout: 240_000 }, () => {
  let target: Target
  beforeAll(async () => {
    target = embeddedTarget({ migrated: true })
  })
  afterEach(() => killStragglers())
  afterAll(async () => {
    await target.dispose()
  })

  it("lists, reads, describes itself, and answers MCP tool calls", async () => {
    const on = { env: target.env, via }
    expect(await runJson(["seed", "--listings", "40", "--seed", "3"], on)).toEqual({ inserted: 40 })
    const account = await runJson(["accounts", "create", "--name", "bundle", "--plan", "business"], on)
    const { key } = await runJson(["keys", "create", account.id, "--name", "bundle"], on)
    const { server, base } = await serve(on)
    try {
      const auth = { authorization: `Bearer ${key}` }

      const page = await fetch(`${base}/api/v1/domains?limit=5`, { headers: auth })
      expect(page.status).toBe(200)
      const body = await page.json() as { data: Array<{ id: string; domain: string }>; next_cursor: string | null }
      expect(body.data).toHaveLength(5)
      expect(typeof body.next_cursor).toBe("string")

      const one = await fetch(`${base}/api/v1/domains/${body.data[0]!.id}`, { headers: auth })
      expect(one.status).toBe(200)
      expect((await one.json() as { id: string }).id).toBe(body.data[0]!.id)

      const unauthorized = await fetch(`${base}/api/v1/domains`)
      expect(unauthorized.status).toBe(401)
      expect(unauthorized.headers.get("www-authenticate")).toBe("Bearer realm=\"dropshelf\"")

      const openapi = await fetch(`${base}/api/v1/openapi.json`, { headers: auth })
      expect(openapi.status).toBe(200)
      expect((await openapi.json() as { openapi: string }).openapi).toMatch(/^3\./)
      const docs = await fetch(`${base}/docs`)
      expect(docs.status).toBe(200)
      expect(docs.headers.get("content-type")).toMatch(/text\/html/)

      const mcp = await fetch(`${base}/mcp`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search_listings", arguments: { limit: 2 } } })
      })
      expect(mcp.status).toBe(200)
      const text = await mcp.text()
      const result = JSON.parse(text.startsWith("{") ? text : text.slice(text.indexOf("{"))) as {
        result: { isError?: boolean; structuredContent: { data: Array<unknown> } }
      }
      expect(result.result.isError ?? false).toBe(false)
      expect(result.result.structuredContent.data).toHaveLength(2)
    } finally {
      expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    }
  })
})

/** A node older than `engines.node` on this machine (a stock Node 20), to start the bundle with. */
const oldNode = (() => {
  for (const candidate of [process.env.DROPSHELF_OLD_NODE, "/usr/bin/node", "/usr/local/bin/node"]) {
    if (candidate === undefined || !existsSync(candidate)) continue
    const version = execFileSync(candidate, ["--version"], { encoding: "utf8" }).trim()
    if (!satisfies(version, minimumOf(ENGINES)!)) return { path: candidate, version }
  }
  return undefined
})()

describe.skipIf(oldNode === undefined)(
  `the bundle on a Node older than engines.node${oldNode === undefined ? ` (skipped: no node older than ${ENGINES} here; set DROPSHELF_OLD_NODE)` : ` (${oldNode.version})`}`,
  () => {
    it("stops with one line naming the command that works, and that command works", async () => {
      const script = join(outdir, "dropshelf.js")
      for (const via of [{ executable: oldNode!.path, script }, { executable: script, path: [dirname(oldNode!.path), "/usr/bin", "/bin"].join(delimiter) }]) {
        const refused = await run(["--version"], { via })
        expectOneLineFailure(refused, 1, new RegExp(`needs Node ${ENGINES} and this is Node ${oldNode!.version.slice(1)}; run PATH=`))
        const command = /; run (PATH=\S+) (.+)$/.exec(refused.stderr.trim())!
        const [assignment, words] = [command[1]!, command[2]!.split(" ")]
        const path = assignment.slice("PATH=".length).replace("$PATH", "/usr/bin:/bin")
        const works = await run(words.slice(1), { via: { executable: words[0]!, path } })
        expect(works).toMatchObject({ code: 0, stderr: "" })
        expect(works.stdout).toContain("0.1.0")
      }
    })
  }
)
