/**
 * Black-box tests of the since feed's horizon on every storage adapter: a `since` older than the
 * horizon is 400 `invalid_request` naming `since` with `oldest_since` and `horizon_days` (REST
 * and the MCP tool alike), a run's cursor pages get a day
 * more, `/me` names the horizon on the business plan, a pruned tombstone leaves the feed and its
 * id imported again is a new listing, and every answer is as the served document describes.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Directory, type Ids, ListingStore, Operators } from "@dropshelf/core"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, addListings, call, conformanceProblems, listing, type Running, start } from "./harness.ts"

const DAY = 86_400_000
const MINUTE = 60_000

const iso = (instant: number) => new Date(instant).toISOString()

for (const adapter of adapters) {
  describe.skipIf(adapter.skip !== undefined)(`the since feed's horizon on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let server: Running
    let business: { readonly secret: string }
    const word = `hrzn${Math.random().toString(36).slice(2, 8)}`
    const rows = Array.from({ length: 3 }, (_, i) => listing({ domain: `horizon-${i}-${word}.com`, tags: [word] }))

    beforeAll(async () => {
      server = await start(adapter, { sinceHorizonDays: 10 })
      await addListings(server, rows)
      business = await account(server, "business", "horizon")
    })

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    const domains = (query: Record<string, string>, key = business.secret) =>
      call(server, "GET", `/api/v1/domains?${new URLSearchParams({ q: word, ...query })}`, { key })

    it("a since inside the horizon is served; one past it is 400 invalid_request, naming since, the oldest accepted and the horizon", async () => {
      const inside = await domains({ since: iso(Date.now() - 10 * DAY + MINUTE) })
      expect(inside.status).toBe(200)
      expect(inside.body.data.map((row: { id: string }) => row.id).sort()).toEqual(rows.map((row) => row.id).sort())
      const before = Date.now()
      const past = await domains({ since: iso(before - 10 * DAY - MINUTE) })
      expect(past.status).toBe(400)
      expect(past.body.error).toMatchObject({ code: "invalid_request", parameter: "since", horizon_days: 10 })
      expect(past.body.error.message).toMatch(/^since accepts /)
      const oldest = Date.parse(past.body.error.oldest_since)
      expect(oldest).toBeGreaterThanOrEqual(before - 10 * DAY)
      expect(oldest).toBeLessThanOrEqual(Date.now() - 10 * DAY)
      expect(past.body.error.message).toMatch(/full run/)
      expect(past.headers.get("x-ratelimit-remaining")).not.toBeNull()
    })

    it("pages that follow a cursor are served for a day past the horizon, not after", async () => {
      const first = await domains({ since: iso(Date.now() - DAY), limit: "1" })
      expect(first.status).toBe(200)
      const cursor = first.body.next_cursor as string
      expect(cursor).toBeTypeOf("string")
      const graced = await domains({ since: iso(Date.now() - 10 * DAY - 12 * 60 * MINUTE), limit: "1", cursor })
      expect(graced.status).toBe(200)
      expect(graced.body.data).toHaveLength(1)
      const past = await domains({ since: iso(Date.now() - 11 * DAY - MINUTE), limit: "1", cursor })
      expect(past.status).toBe(400)
      expect(past.body.error).toMatchObject({ code: "invalid_request", parameter: "since" })
    })

    it("a plan without the feed is still told to upgrade, whatever the since", async () => {
      const pro = await account(server, "pro", "horizon-pro")
      const refused = await domains({ since: iso(Date.now() - 400 * DAY) }, pro.secret)
      expect(refused.status).toBe(402)
      expect(refused.body.error.code).toBe("upgrade_required")
    })

    it("/me names the horizon on the business plan and null elsewhere", async () => {
      const me = await call(server, "GET", "/api/v1/me", { key: business.secret })
      expect(me.body).toMatchObject({ sync_feed: true, since_horizon_days: 10 })
      const free = await account(server, "free", "horizon-free")
      const freeMe = await call(server, "GET", "/api/v1/me", { key: free.secret })
      expect(freeMe.body).toMatchObject({ sync_feed: false, since_horizon_days: null })
    })

    it("a pruned tombstone leaves the feed; its id imported again comes back active and newly discovered", async () => {
      const gone = listing({ domain: `horizon-gone-${word}.com`, tags: [word] })
      await addListings(server, [gone])
      const since = iso(Date.now() - 5 * MINUTE)
      await server.run(Operators.Operators.use((operators) => operators.delist([gone.id], "sold")))
      const tombstone = (await domains({ since })).body.data.find((row: { id: string }) => row.id === gone.id)
      expect(tombstone).toEqual({ id: gone.id, status: "delisted", updated_at: expect.any(String) })
      // Pruned as if its time had come; the server's own round prunes by the horizon (tested in the core).
      await server.run(ListingStore.ListingStore.use((store) => store.pruneTombstones(Date.now() + MINUTE)))
      expect((await domains({ since })).body.data.map((row: { id: string }) => row.id)).not.toContain(gone.id)
      expect(await server.run(ListingStore.ListingStore.use((store) => store.find(gone.id as Ids.ListingId)))).toBeUndefined()
      const discoveredAt = Date.now() - 2 * DAY
      await addListings(server, [{ ...gone, discoveredAt }])
      const back = (await domains({ since })).body.data.find((row: { id: string }) => row.id === gone.id)
      expect(back).toMatchObject({ id: gone.id, status: "active", discovered_at: iso(discoveredAt) })
      // Nothing left to prune by the horizon: every tombstone here is minutes old.
      expect(await server.run(Directory.Directory.use((directory) => directory.pruneTombstones))).toBe(0)
    })

    it("the MCP search tool refuses the same way", async () => {
      const transport = new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${business.secret}` } }
      })
      const client = new Client({ name: "dropshelf-test", version: "1.0.0" })
      await client.connect(transport)
      try {
        // Listing the tools makes the client check structuredContent against each outputSchema.
        await client.listTools()
        const result = (await client.callTool({
          name: "search_listings",
          arguments: { q: word, since: iso(Date.now() - 10 * DAY - MINUTE) }
        })) as CallToolResult & { structuredContent: any }
        expect(result.isError).toBe(true)
        expect(result.structuredContent.error).toMatchObject({ code: "invalid_request", parameter: "since", horizon_days: 10 })
        expect(result.structuredContent.error.oldest_since).toBeTypeOf("string")
        const me = (await client.callTool({ name: "me", arguments: {} })) as CallToolResult & { structuredContent: any }
        expect(me.structuredContent.since_horizon_days).toBe(10)
      } finally {
        await client.close()
      }
    })

    it("every answer is as the served document describes", async () => {
      const spec = (await call(server, "GET", "/api/v1/openapi.json", { key: business.secret })).body
      const since = spec.paths["/api/v1/domains"].get.parameters.find((parameter: { name: string }) => parameter.name === "since")
      expect(since.description ?? since.schema.description).toMatch(/invalid_request. naming .since/)
      expect(Object.keys(spec.paths["/api/v1/domains"].get.responses)).not.toContain("410")
      expect(conformanceProblems(spec, server.exchanges)).toEqual([])
    })
  })
}
