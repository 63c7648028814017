/**
 * The since-feed consumer printed in docs/api.md, run as written (plain Node, no build) against
 * the real server: a first run copies the directory, a second drops what left and picks up
 * what changed.
 */
import { execFile, execFileSync } from "node:child_process"
import { createServer, type Server } from "node:http"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ListQuery, Operators } from "@dropshelf/core"
import { account, addListings, listing, memoryAdapter, type Running, start } from "./harness.ts"

const run = promisify(execFile)
const guide = readFileSync(new URL("../../../docs/api.md", import.meta.url), "utf8")
const script = /```js since-feed\.mjs\n([\s\S]*?)```/.exec(guide)?.[1]
const pythonScript = /```python dropshelf_example\.py\n([\s\S]*?)```/.exec(guide)?.[1]

/** Why the Python example cannot run here, when it cannot: it needs Python 3 with `requests`. */
const noPython = (() => {
  try {
    execFileSync("python3", ["-c", "import requests"], { stdio: "ignore" })
    return undefined
  } catch {
    return "no python3 with requests (install Debian's python3-requests)"
  }
})()

describe("docs/api.md", () => {
  it("says what every filter of GET /domains keeps, in its table of filters", () => {
    const rows = new Set([...guide.matchAll(/^\s*\| `(\w+)` \| [^|]*\w[^|]* \|$/gm)].map((match) => match[1]))
    const filters = ListQuery.LIST_PARAMETERS.filter((name) => !["cursor", "limit", "since", "sort"].includes(name))
    expect(filters.filter((name) => !rows.has(name))).toEqual([])
  })
})

describe("docs/api.md since-feed consumer", () => {
  let server: Running
  let dir: string
  beforeAll(async () => {
    server = await start(memoryAdapter)
    dir = mkdtempSync(join(tmpdir(), "dropshelf-since-"))
  })
  afterAll(async () => {
    await server.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("is in the guide, and keeps a copy in sync across runs", async () => {
    expect(script).toBeDefined()
    const file = join(dir, "since-feed.mjs")
    writeFileSync(file, script!)
    const rows = Array.from({ length: 7 }, (_, i) => listing({ domain: `feed-${i}-example.com` }))
    await addListings(server, rows)
    const key = await account(server, "business", "feed")
    const env = { ...process.env, DROPSHELF_URL: server.base, DROPSHELF_KEY: key.secret, DROPSHELF_STATE: join(dir, "copy.json") }
    const first = await run(process.execPath, [file, "--once"], { env })
    expect(first.stdout).toContain("7 upserted")
    const afterFirst = JSON.parse(readFileSync(join(dir, "copy.json"), "utf8"))
    expect(Object.keys(afterFirst.rows).sort()).toEqual(rows.map((row) => row.id).sort())
    expect(afterFirst.watermark).toMatch(/Z$/)

    await server.run(Operators.Operators.use((operators) => operators.delist([rows[0]!.id], "sold")))
    await addListings(server, [{ ...rows[1]!, estimatedValueCents: 300_000 }])
    const second = await run(process.execPath, [file, "--once"], { env })
    expect(second.stdout).toContain("1 dropped")
    const afterSecond = JSON.parse(readFileSync(join(dir, "copy.json"), "utf8"))
    expect(afterSecond.rows[rows[0]!.id]).toBeUndefined()
    expect(afterSecond.rows[rows[1]!.id].estimated_value_cents).toBe(300_000)
    expect(Object.keys(afterSecond.rows)).toHaveLength(6)
  })

  it("resynchronises with a full run when its watermark is past the feed's horizon", async () => {
    const file = join(dir, "since-feed.mjs")
    writeFileSync(file, script!)
    const rows = Array.from({ length: 3 }, (_, i) => listing({ domain: `feed-old-${i}-example.com` }))
    await addListings(server, rows)
    const key = await account(server, "business", "feed-old")
    const state = join(dir, "old.json")
    const stale = { id: "GONE0000", status: "active", updated_at: "2026-01-01T00:00:00.000Z" }
    writeFileSync(state, JSON.stringify({ watermark: new Date(Date.now() - 40 * 86_400_000).toISOString(), rows: { GONE0000: stale } }))
    const env = { ...process.env, DROPSHELF_URL: server.base, DROPSHELF_KEY: key.secret, DROPSHELF_STATE: state }
    const resynced = await run(process.execPath, [file, "--once"], { env })
    expect(resynced.stdout).toContain("resynchronising with a full run")
    const copy = JSON.parse(readFileSync(state, "utf8"))
    expect(copy.rows.GONE0000).toBeUndefined()
    for (const row of rows) expect(copy.rows[row.id]).toBeDefined()
    expect(Date.parse(copy.watermark)).toBeGreaterThan(Date.now() - 86_400_000)
  })

  it("stops with the error envelope's code when the plan has no since feed", async () => {
    const file = join(dir, "since-feed.mjs")
    writeFileSync(file, script!)
    const key = await account(server, "pro", "feed-pro")
    const state = join(dir, "pro.json")
    writeFileSync(state, JSON.stringify({ watermark: "2026-01-01T00:00:00.000Z", rows: {} }))
    const env = { ...process.env, DROPSHELF_URL: server.base, DROPSHELF_KEY: key.secret, DROPSHELF_STATE: state }
    await expect(run(process.execPath, [file, "--once"], { env })).rejects.toThrow(/402 upgrade_required/)
  })
})

describe.skipIf(noPython !== undefined)(`docs/api.md Python example${noPython ? ` (skipped: ${noPython})` : ""}`, () => {
  let server: Running
  let proxy: Server
  let proxyBase: string
  let dir: string
  const refused: Array<string> = []
  beforeAll(async () => {
    server = await start(memoryAdapter)
    dir = mkdtempSync(join(tmpdir(), "dropshelf-python-"))
    // In front of the server: the first page request is answered 429 with Retry-After, as over a key's limit.
    proxy = createServer(async (request, response) => {
      if (request.url?.startsWith("/api/v1/domains?") && refused.length === 0) {
        refused.push(request.url)
        response.writeHead(429, { "retry-after": "1", "content-type": "application/json" })
        response.end(JSON.stringify({ error: { code: "rate_limited", message: "over the limit", retry_after: 1 } }))
        return
      }
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name === "authorization")) as Record<string, string>
      const answer = await fetch(server.base + request.url, { method: request.method!, headers })
      response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" })
      response.end(Buffer.from(await answer.arrayBuffer()))
    })
    await new Promise<void>((listening) => proxy.listen(0, "127.0.0.1", () => listening()))
    const address = proxy.address()
    proxyBase = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
  })
  afterAll(async () => {
    await new Promise((closed) => proxy.close(closed))
    await server.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("is in the guide, and lists over two pages, waits out a 429, and reveals what a free plan may", async () => {
    expect(pythonScript).toBeDefined()
    const file = join(dir, "dropshelf_example.py")
    writeFileSync(file, pythonScript!)
    const featured = listing({ id: "00000000" as never, domain: "python-featured.com", tier: "featured", referringDomains: 2_000 })
    const wanted = Array.from({ length: 104 }, (_, i) => listing({ domain: `python-${i}-example.com`, referringDomains: i % 2 === 0 ? 1_500 : 700 }))
    const others = [listing({ domain: "python-few.com", referringDomains: 100 }), listing({ domain: "python-other.net", referringDomains: 1_500 })]
    await addListings(server, [featured, ...wanted, ...others])
    const key = await account(server, "free", "python")
    const { stdout } = await run("python3", [file], { env: { ...process.env, DROPSHELF_URL: proxyBase, DROPSHELF_KEY: key.secret } })
    const lines = stdout.trim().split("\n")
    expect(lines[0]).toBe("plan free, reveals left: 10")
    expect(lines[1]).toBe(`${wanted.length + 1} listings`)
    expect(refused).toHaveLength(1)
    // The featured listing sorts first; the free plan skips it and reveals the next one.
    const first = [...wanted].sort((a, b) => (a.id < b.id ? -1 : 1))[0]!
    expect(lines[2]).toBe(`revealed ${first.domain}`)
  }, 60_000)
})

if (noPython !== undefined) {
  describe("docs/api.md Python example", () => {
    it.skip(`skipped: ${noPython}`, () => {})
  })
}
