/**
 * `DROPSHELF_UPGRADE_URL` on the API and the MCP tools: when set, every 402 carries it as
 * `upgrade_url` (and the served OpenAPI document describes the field); unset, no 402 has it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { account, addListings, call, conformanceProblems, listing, memoryAdapter, type Running, start } from "./harness.ts"

const UPGRADE_URL = "https://shop.example.com/upgrade?plan=pro"
const DAY = 86_400_000

/** A tool call over MCP with `key`, as an assistant makes it. */
const callTool = async (server: Running, key: string, name: string, args: Record<string, unknown>) => {
  const client = new Client({ name: "dropshelf-test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } }
  }))
  try {
    return (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: any }
  } finally {
    await client.close()
  }
}

describe.each([
  { label: "set", upgradeUrl: UPGRADE_URL },
  { label: "unset", upgradeUrl: undefined }
])("DROPSHELF_UPGRADE_URL $label: the 402s of the API and MCP", ({ upgradeUrl }) => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter, { upgradeUrl })
  })
  afterAll(() => server.close())

  const expectUpgrade = (error: Record<string, unknown>) => {
    expect(error.code).toBe("upgrade_required")
    if (upgradeUrl === undefined) expect(error).not.toHaveProperty("upgrade_url")
    else expect(error.upgrade_url).toBe(UPGRADE_URL)
  }

  it("REST: a featured reveal on free, holds on free, since off business, the snapshot; the other refusals never", async () => {
    const free = await account(server, "free", "upgrade-free")
    const featured = listing({ domain: "shinyfeature.com", tier: "featured", discoveredAt: Date.now() - 30 * DAY })
    await addListings(server, [featured])
    const reveal = await call(server, "POST", `/api/v1/domains/${featured.id}/reveal`, { key: free.secret })
    expect(reveal.status).toBe(402)
    expect(reveal.body.error.reveal_code).toBe("FEATURED_REQUIRES_PRO")
    expectUpgrade(reveal.body.error)
    const hold = await call(server, "POST", `/api/v1/domains/${featured.id}/hold`, { key: free.secret })
    expect(hold.status).toBe(402)
    expect(hold.body.error.hold_code).toBe("HOLDS_REQUIRE_PRO")
    expectUpgrade(hold.body.error)
    const since = await call(server, "GET", "/api/v1/domains?since=2026-01-01T00:00:00.000Z", { key: free.secret })
    expect(since.status).toBe(402)
    expectUpgrade(since.body.error)
    const snapshot = await call(server, "GET", "/api/v1/domains/snapshot", { key: free.secret })
    expect(snapshot.status).toBe(402)
    expectUpgrade(snapshot.body.error)
    // A refusal that is not about the plan never names the upgrade.
    const missing = await call(server, "POST", "/api/v1/domains/NOSUCH01/reveal", { key: free.secret })
    expect(missing.status).toBe(404)
    expect(missing.body.error).not.toHaveProperty("upgrade_url")

    const spec = (await call(server, "GET", "/api/v1/openapi.json", { key: free.secret })).body
    const described = JSON.stringify(spec.components.schemas)
    expect(described).toContain("upgrade_url")
    expect(conformanceProblems(spec, server.exchanges)).toEqual([])
  })

  it("MCP: the same refusal as a tool result", async () => {
    const free = await account(server, "free", "upgrade-mcp")
    const featured = listing({ domain: "mcpfeature.com", tier: "featured", discoveredAt: Date.now() - 30 * DAY })
    await addListings(server, [featured])
    const result = await callTool(server, free.secret, "reveal_listing", { id: featured.id })
    expect(result.isError).toBe(true)
    expect(result.structuredContent.error.reveal_code).toBe("FEATURED_REQUIRES_PRO")
    expectUpgrade(result.structuredContent.error)
    const hold = await callTool(server, free.secret, "hold_listing", { id: featured.id })
    expect(hold.structuredContent.error.hold_code).toBe("HOLDS_REQUIRE_PRO")
    expectUpgrade(hold.structuredContent.error)
  })
})
