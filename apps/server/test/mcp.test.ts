/**
 * Black-box tests of the MCP endpoint with the official MCP TypeScript SDK client: the real
 * server on a random port (the same harness as the REST tests), tools listed and called, every
 * kind of refusal, and the one per-key rate-limit window shared with the REST API.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { account, addListings, awayFromMinuteEdge, call, listing, memoryAdapter, type Running, start } from "./harness.ts"

interface Connected {
  readonly client: Client
  /** `X-RateLimit-Remaining` of every MCP POST, in order, with the JSON-RPC method it carried. */
  readonly posts: Array<{ readonly method: string; readonly status: number; readonly remaining: string | null }>
  readonly close: () => Promise<void>
}

const connect = async (server: Running, key: string | undefined): Promise<Connected> => {
  const posts: Array<{ method: string; status: number; remaining: string | null }> = []
  const recordingFetch = async (input: string | URL, init?: RequestInit) => {
    const response = await fetch(input, init)
    if ((init?.method ?? "GET") === "POST") {
      const body = typeof init?.body === "string" ? JSON.parse(init.body) : undefined
      posts.push({ method: body?.method ?? "?", status: response.status, remaining: response.headers.get("x-ratelimit-remaining") })
    }
    return response
  }
  const transport = new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), {
    ...(key !== undefined ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : {}),
    fetch: recordingFetch
  })
  const client = new Client({ name: "dropshelf-test", version: "1.0.0" })
  await client.connect(transport)
  // Listing the tools makes the client check every later structuredContent against its outputSchema.
  await client.listTools()
  return { client, posts, close: () => client.close() }
}

const callTool = async (connected: Connected, name: string, args: Record<string, unknown> = {}) =>
  (await connected.client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: any }

const expectRefusal = (result: CallToolResult & { structuredContent: any }, code: string, extra: Record<string, unknown> = {}) => {
  expect(result.isError, JSON.stringify(result.structuredContent)).toBe(true)
  expect(result.structuredContent.error.code).toBe(code)
  expect(result.structuredContent.error.message).toBeTypeOf("string")
  expect(result.structuredContent.error).toMatchObject(extra)
  // The text carries the same envelope, for clients that read only text.
  const text = result.content[0]
  expect(text?.type).toBe("text")
  expect(JSON.parse((text as { text: string }).text)).toEqual(result.structuredContent)
}

const expectOk = (result: CallToolResult & { structuredContent: any }) => {
  expect(result.isError ?? false, JSON.stringify(result.structuredContent)).toBe(false)
  expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent)
  return result.structuredContent
}

const TOOL_NAMES = [
  "create_watch",
  "delete_watch",
  "end_hold",
  "extend_hold",
  "get_listing",
  "hold_listing",
  "list_holds",
  "list_watch_matches",
  "list_watches",
  "me",
  "reveal_listing",
  "search_listings"
]

describe("MCP endpoint", () => {
  let server: Running
  const ids = { regular: [] as Array<string>, featured: "", open: "" }

  beforeAll(async () => {
    server = await start(memoryAdapter)
    const regular = Array.from({ length: 16 }, (_, i) =>
      listing({ domain: `mcp-listing-${i}-${Math.random().toString(36).slice(2, 8)}.com` }))
    const featured = listing({ domain: `mcp-featured-${Math.random().toString(36).slice(2, 8)}.com`, tier: "featured", featuredRank: 1 })
    const open = listing({ domain: `mcp-open-${Math.random().toString(36).slice(2, 8)}.net`, tier: "open" })
    await addListings(server, [...regular, featured, open])
    ids.regular = regular.map((row) => row.id).sort()
    ids.featured = featured.id
    ids.open = open.id
  })

  afterAll(async () => {
    await server?.close()
  })

  describe("the protocol", () => {
    it("initializes with the official client and names the server", async () => {
      const key = await account(server, "pro", "mcp-init")
      const connected = await connect(server, key.secret)
      expect(connected.client.getServerVersion()).toMatchObject({ name: "dropshelf", version: "1.3.0" })
      expect(connected.client.getServerCapabilities()?.tools).toBeDefined()
      expect(connected.client.getInstructions()).toContain("rate_limited")
      await connected.close()
    })

    it("lists the tools with input and output schemas and annotations", async () => {
      const key = await account(server, "pro", "mcp-list")
      const connected = await connect(server, key.secret)
      const { tools } = await connected.client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES)
      const byName = new Map(tools.map((tool) => [tool.name, tool]))
      for (const tool of tools) {
        expect(tool.inputSchema.type, tool.name).toBe("object")
        expect(tool.outputSchema?.type, tool.name).toBe("object")
        expect(tool.description, tool.name).toBeTypeOf("string")
        expect(tool.annotations?.openWorldHint, tool.name).toBe(false)
      }
      for (const name of ["search_listings", "get_listing", "list_holds", "me"]) {
        expect(byName.get(name)?.annotations, name).toMatchObject({ readOnlyHint: true, destructiveHint: false })
      }
      expect(byName.get("reveal_listing")?.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true, destructiveHint: false })
      expect(byName.get("end_hold")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true })
      for (const name of ["hold_listing", "extend_hold"]) {
        expect(byName.get(name)?.annotations, name).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false })
      }
      // The search tool takes the REST parameters, with the same accepted values.
      const search = byName.get("search_listings")!.inputSchema as any
      expect(Object.keys(search.properties)).toEqual(expect.arrayContaining(["cursor", "limit", "since", "sort", "spam", "tier", "priceRange", "q", "category"]))
      expect(search.properties.spam.enum).toEqual(["low", "moderate"])
      expect((byName.get("get_listing")!.inputSchema as any).required).toEqual(["id"])
      expect((byName.get("end_hold")!.inputSchema as any).properties.outcome.enum).toEqual(["released", "registered"])
      await connected.close()
    })

    it("search_listings refuses a value that is not text, a number or a boolean, naming it, as the query string cannot carry one", async () => {
      const key = await account(server, "pro", "mcp-query-object")
      const connected = await connect(server, key.secret)
      for (const [name, value] of [["q", { $ne: 1 }], ["tld", ["com", "net"]], ["limit", null]] as const) {
        const result = await callTool(connected, "search_listings", { [name]: value })
        expectRefusal(result, "invalid_request", { parameter: name })
      }
      await connected.close()
    })

    it("reads the Authorization header as REST does: the scheme in any case, then spaces, never a tab", async () => {
      const key = await account(server, "pro", "mcp-bearer-spelling")
      const initialize = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } }
      })
      for (const [authorization, status] of [[`bearer   ${key.secret}`, 200], [`Bearer\t${key.secret}`, 401]] as const) {
        const rest = await call(server, "GET", "/api/v1/me", { headers: { authorization } })
        const mcp = await call(server, "POST", "/mcp", {
          body: initialize,
          headers: { authorization, accept: "application/json, text/event-stream", "content-type": "application/json" }
        })
        expect([rest.status, mcp.status], JSON.stringify(authorization)).toEqual([status, status])
      }
    })

    it("refuses a missing or unknown key: 401, WWW-Authenticate and the envelope", async () => {
      const initialize = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } }
      })
      const headers = { accept: "application/json, text/event-stream" }
      for (const key of [undefined, "ds_live_notarealkeynotarealkeynotarealkey00", "garbage"]) {
        const response = await call(server, "POST", "/mcp", { body: initialize, headers, key })
        expect(response.status).toBe(401)
        expect(response.headers.get("www-authenticate")).toMatch(/^Bearer realm="dropshelf", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp", scope="read reveal hold watch"$/)
        expect(response.body.error.code).toBe("unauthorized")
        expect(response.body.error.message).toBeTypeOf("string")
        expect(response.headers.get("access-control-allow-origin")).toBe("*")
      }
      await expect(connect(server, undefined)).rejects.toThrow(/401|unauthorized/i)
      await expect(connect(server, "ds_live_notarealkeynotarealkeynotarealkey00")).rejects.toThrow(/401|unauthorized/i)
    })

    it("answers the preflight, and 405 with Allow for GET and DELETE (stateless: no stream, no session)", async () => {
      const preflight = await call(server, "OPTIONS", "/mcp")
      expect(preflight.status).toBe(204)
      expect(preflight.headers.get("access-control-allow-methods")).toContain("POST")
      expect(preflight.headers.get("access-control-allow-headers")).toContain("Authorization")
      expect(preflight.headers.get("access-control-allow-headers")).toContain("Mcp-Protocol-Version")
      for (const method of ["GET", "DELETE", "PUT"]) {
        const response = await call(server, method, "/mcp")
        expect(response.status, method).toBe(405)
        expect(response.headers.get("allow")).toBe("POST, OPTIONS")
        expect(response.body.error.code).toBe("method_not_allowed")
      }
    })

    it("an unknown tool is a JSON-RPC error naming the tools", async () => {
      const key = await account(server, "pro", "mcp-unknown-tool")
      const connected = await connect(server, key.secret)
      await expect(connected.client.callTool({ name: "delete_everything", arguments: {} })).rejects.toThrow(/search_listings/)
      await connected.close()
    })

    it("a request whose params the protocol refuses is -32602 invalid params naming the parameter, in a batch too", async () => {
      const key = await account(server, "pro", "mcp-invalid-params")
      const headers = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" }
      const single = await call(server, "POST", "/mcp", {
        key: key.secret,
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list", params: { cursor: 5 } })
      })
      expect(single.status).toBe(200)
      expect(single.body).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32602, message: expect.stringMatching(/^Invalid params: params\.cursor: .*string/) } })
      const batch = await call(server, "POST", "/mcp", {
        key: key.secret,
        headers,
        body: JSON.stringify([
          { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
          { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: 5 } }
        ])
      })
      expect(batch.status).toBe(200)
      const answers = new Map((batch.body as Array<any>).map((answer) => [answer.id, answer]))
      expect(answers.get(1).result.tools.length).toBeGreaterThan(0)
      expect(answers.get(2).error).toEqual({ code: -32602, message: expect.stringMatching(/^Invalid params: params\.name: /) })
    })
  })

  describe("reads", () => {
    /** A page's text without its watermark, which follows the clock between two requests. */
    const withoutWatermark = (text: string) => text.replace(/,"synced_at":"[^"]*"\}$/, "}")
    const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text

    it("search_listings and get_listing send the REST body's text, and structuredContent is that text parsed", async () => {
      const key = await account(server, "business", "mcp-same-text")
      const connected = await connect(server, key.secret)
      const id = ids.regular[1]!
      const single = expectOk(await callTool(connected, "get_listing", { id }))
      const singleRest = await call(server, "GET", `/api/v1/domains/${id}`, { key: key.secret })
      expect(singleRest.status).toBe(200)
      expect(textOf(await callTool(connected, "get_listing", { id }))).toBe(singleRest.text)
      // Parsed once from that text: the same members in the same order.
      expect(JSON.stringify(single)).toBe(singleRest.text)

      const since = new Date(Date.now() - 86_400_000).toISOString()
      for (const query of [{ limit: 4 }, { limit: 4, sort: "latest" }, { limit: 3, since }]) {
        const result = await callTool(connected, "search_listings", query)
        const page = expectOk(result)
        const rest = await call(server, "GET", `/api/v1/domains?${new URLSearchParams(Object.entries(query).map(([name, value]): [string, string] => [name, String(value)]))}`, {
          key: key.secret
        })
        expect(rest.status, JSON.stringify(query)).toBe(200)
        expect(page.data.length, JSON.stringify(query)).toBeGreaterThan(0)
        expect(withoutWatermark(textOf(result)), JSON.stringify(query)).toBe(withoutWatermark(rest.text))
        expect(withoutWatermark(JSON.stringify(page)), JSON.stringify(query)).toBe(withoutWatermark(rest.text))
      }
      await connected.close()
    })

    it("search_listings pages like GET /domains, with the same cursor and the same refusals", async () => {
      const key = await account(server, "pro", "mcp-search")
      const connected = await connect(server, key.secret)
      const first = expectOk(await callTool(connected, "search_listings", { limit: 3 }))
      expect(first.data).toHaveLength(3)
      expect(first.has_more).toBe(true)
      const rest = await call(server, "GET", "/api/v1/domains?limit=3", { key: key.secret })
      expect(first.data).toEqual(rest.body.data)
      const second = expectOk(await callTool(connected, "search_listings", { limit: "3", cursor: first.next_cursor }))
      expect(second.data[0].id > first.data[2].id).toBe(true)
      const open = expectOk(await callTool(connected, "search_listings", { tier: "open", featured: false }))
      expect(open.data.map((row: any) => row.id)).toEqual([ids.open])
      expect(open.data[0].domain).toMatch(/^mcp-open-/)

      const badSpam = await callTool(connected, "search_listings", { spam: "high" })
      expectRefusal(badSpam, "invalid_request", { parameter: "spam" })
      const restSpam = await call(server, "GET", "/api/v1/domains?spam=high", { key: key.secret })
      expect(badSpam.structuredContent).toEqual(restSpam.body)
      expect(badSpam.structuredContent.error.message).toMatch(/low, moderate/)

      expectRefusal(await callTool(connected, "search_listings", { limit: 2.5 }), "invalid_request", { parameter: "limit" })
      expectRefusal(await callTool(connected, "search_listings", { cursor: "forged" }), "invalid_request", { parameter: "cursor" })
      expectRefusal(await callTool(connected, "search_listings", { sort: "oldest" }), "invalid_request", { parameter: "sort" })
      expectRefusal(await callTool(connected, "search_listings", { since: "2026-01-01T00:00:00.000Z" }), "upgrade_required", { parameter: "since" })
      await connected.close()
    })

    it("get_listing shows exactly what GET /domains/{id} shows, and refuses like it", async () => {
      const key = await account(server, "pro", "mcp-get")
      const connected = await connect(server, key.secret)
      const id = ids.regular[0]!
      const viaTool = expectOk(await callTool(connected, "get_listing", { id }))
      const viaRest = await call(server, "GET", `/api/v1/domains/${id}`, { key: key.secret })
      expect(viaTool).toEqual(viaRest.body)
      // Pro has a reveal ceiling: an unrevealed regular name stays withheld, on both.
      expect(viaTool.domain).toBeNull()
      expect(viaTool.name_disclosed).toBe(false)

      const missing = await callTool(connected, "get_listing", { id: "ZZZZZZZZ" })
      expectRefusal(missing, "not_found")
      expect(missing.structuredContent.error.hold_code).toBeUndefined()
      expect(missing.structuredContent.error.reveal_code).toBeUndefined()
      expectRefusal(await callTool(connected, "get_listing", {}), "invalid_request", { parameter: "id" })
      expectRefusal(await callTool(connected, "get_listing", { id: 12345678 }), "invalid_request", { parameter: "id" })
      await connected.close()
    })

    it("me is the key and plan record, counting this call", async () => {
      const key = await account(server, "business", "mcp-me")
      const connected = await connect(server, key.secret)
      const me = expectOk(await callTool(connected, "me"))
      expect(me.plan).toBe("business")
      expect(me.reveals.limit).toBeNull()
      expect(me.rate_limit.limit).toBe(120)
      expect(me.sync_feed).toBe(true)
      expect(me.key.prefix).toBe(key.prefix)
      expect(me.rate_limit.remaining).toBe(Number(connected.posts.at(-1)!.remaining))
      await connected.close()
    })
  })

  describe("reveals", () => {
    it("reveal_listing discloses, repeats at no cost, and refuses NOT_FOUND and FEATURED_REQUIRES_PRO", async () => {
      const pro = await account(server, "pro", "mcp-reveal")
      const connected = await connect(server, pro.secret)
      const id = ids.regular[1]!
      const revealed = expectOk(await callTool(connected, "reveal_listing", { id }))
      expect(revealed.domain).toMatch(/^mcp-listing-/)
      expect(revealed.revealed_at).toBeTypeOf("string")
      const again = expectOk(await callTool(connected, "reveal_listing", { id }))
      expect(again.revealed_at).toBe(revealed.revealed_at)
      const me = expectOk(await callTool(connected, "me"))
      expect(me.reveals.used).toBe(1)
      // Now the plain read discloses it too, as REST does.
      expect(expectOk(await callTool(connected, "get_listing", { id })).domain).toBe(revealed.domain)
      expectRefusal(await callTool(connected, "reveal_listing", { id: "ZZZZZZZZ" }), "not_found", { reveal_code: "NOT_FOUND" })
      await connected.close()

      const free = await account(server, "free", "mcp-reveal-free")
      const freeClient = await connect(server, free.secret)
      expectRefusal(await callTool(freeClient, "reveal_listing", { id: ids.featured }), "upgrade_required", { reveal_code: "FEATURED_REQUIRES_PRO" })
      await freeClient.close()
    })

    it("refuses QUOTA_EXHAUSTED with resets_at once the month's allowance is spent", async () => {
      await awayFromMinuteEdge(15)
      const free = await account(server, "free", "mcp-quota")
      const connected = await connect(server, free.secret)
      for (const id of ids.regular.slice(0, 10)) expectOk(await callTool(connected, "reveal_listing", { id }))
      const refused = await callTool(connected, "reveal_listing", { id: ids.regular[10]! })
      expectRefusal(refused, "upgrade_required", { reveal_code: "QUOTA_EXHAUSTED" })
      expect(new Date(refused.structuredContent.error.resets_at).getUTCDate()).toBe(1)
      await connected.close()
    })
  })

  describe("watches", () => {
    it("create, list, read matches and delete a watch, as REST does, with REST's refusals", async () => {
      const key = await account(server, "free", "mcp-watches")
      const connected = await connect(server, key.secret)
      expectRefusal(await callTool(connected, "create_watch", { name: "w", query: { tld: ".com" } }), "invalid_request", { parameter: "query.tld" })
      // The core's decoder, as REST's: unstorable text, unknown keys and query names, wrong types, each named.
      expectRefusal(await callTool(connected, "create_watch", { name: "a\u0000b" }), "invalid_request", { parameter: "name" })
      expectRefusal(await callTool(connected, "create_watch", { name: "w", query: { q: "lone \ud800" } }), "invalid_request", { parameter: "query.q" })
      expectRefusal(await callTool(connected, "create_watch", { name: "w", webhook_url: "https://a.example/\u0000" }), "invalid_request", {
        parameter: "webhook_url"
      })
      expectRefusal(await callTool(connected, "create_watch", { name: "w", query: { tldd: "io" } }), "invalid_request", { parameter: "query.tldd" })
      expectRefusal(await callTool(connected, "create_watch", { name: "w", query: { checkedDays: 7 } }), "invalid_request", {
        parameter: "query.checkedDays"
      })
      expectRefusal(await callTool(connected, "create_watch", { name: 5 }), "invalid_request", { parameter: "name" })
      expectRefusal(await callTool(connected, "create_watch", { name: "w", query: [] }), "invalid_request", { parameter: "query" })
      expectRefusal(await callTool(connected, "create_watch", { name: "w", paused: "yes" }), "invalid_request", { parameter: "paused" })
      const created = expectOk(await callTool(connected, "create_watch", { name: "all com", query: { tld: "com" } }))
      expect(created).toMatchObject({ name: "all com", query: { tld: "com" }, webhook: null })
      expectRefusal(await callTool(connected, "create_watch", { name: "second" }), "watch_limit_reached", { limit: 1 })
      const listed = expectOk(await callTool(connected, "list_watches"))
      expect(listed).toEqual((await call(server, "GET", "/api/v1/watches", { key: key.secret })).body)
      const matches = expectOk(await callTool(connected, "list_watch_matches", { id: created.id }))
      expect(matches).toEqual({ data: [], next_cursor: null, has_more: false })
      expect(expectOk(await callTool(connected, "delete_watch", { id: created.id }))).toEqual({ deleted: created.id })
      expectRefusal(await callTool(connected, "delete_watch", { id: created.id }), "not_found")
      expectRefusal(await callTool(connected, "list_watch_matches", { id: created.id }), "not_found")
    })
  })

  describe("holds", () => {
    it("hold, hold again, list, extend once, end with an outcome, cooldown, hold codes", async () => {
      const key = await account(server, "pro", "mcp-holds")
      const connected = await connect(server, key.secret)
      const id = ids.regular[2]!
      expectRefusal(await callTool(connected, "hold_listing", { id }), "forbidden", { hold_code: "REVEAL_REQUIRED" })
      expectOk(await callTool(connected, "reveal_listing", { id }))
      const held = expectOk(await callTool(connected, "hold_listing", { id }))
      expect(held.hold.listing_id).toBe(id)
      expect(held.hold.can_extend).toBe(true)
      expect(held.holds).toMatchObject({ active: 1, limit: 3, plan: "pro", hold_hours: 48 })
      const again = expectOk(await callTool(connected, "hold_listing", { id }))
      expect(again.hold.id).toBe(held.hold.id)
      expect(expectOk(await callTool(connected, "get_listing", { id })).hold_state).toBe("mine")

      const listed = expectOk(await callTool(connected, "list_holds"))
      expect(listed.data.map((hold: any) => hold.id)).toEqual([held.hold.id])
      expect(listed).toEqual((await call(server, "GET", "/api/v1/holds", { key: key.secret })).body)

      const extended = expectOk(await callTool(connected, "extend_hold", { hold_id: held.hold.id }))
      expect(Date.parse(extended.hold.expires_at) - Date.parse(held.hold.expires_at)).toBe(24 * 3_600_000)
      expect(extended.hold.can_extend).toBe(false)
      expectRefusal(await callTool(connected, "extend_hold", { hold_id: held.hold.id }), "invalid_request", { hold_code: "ALREADY_EXTENDED" })
      expectRefusal(await callTool(connected, "extend_hold", { hold_id: "no-such-hold" }), "not_found", { hold_code: "HOLD_NOT_FOUND" })
      expectRefusal(await callTool(connected, "extend_hold", {}), "invalid_request", { parameter: "hold_id" })

      const badOutcome = await callTool(connected, "end_hold", { hold_id: held.hold.id, outcome: "sold" })
      expectRefusal(badOutcome, "invalid_request", { parameter: "outcome" })
      expect(badOutcome.structuredContent.error.message).toMatch(/released, registered/)
      const ended = expectOk(await callTool(connected, "end_hold", { hold_id: held.hold.id, outcome: "registered" }))
      expect(ended.hold.state).toBe("registered")
      expectRefusal(await callTool(connected, "end_hold", { hold_id: held.hold.id }), "invalid_request", { hold_code: "HOLD_OVER" })
      const cooldown = await callTool(connected, "hold_listing", { id })
      expectRefusal(cooldown, "forbidden", { hold_code: "HOLD_COOLDOWN" })
      expect(Date.parse(cooldown.structuredContent.error.available_at)).toBeGreaterThan(Date.now() + 29 * 86_400_000)
      expectRefusal(await callTool(connected, "hold_listing", { id: "ZZZZZZZZ" }), "not_found", { hold_code: "NOT_FOUND" })
      await connected.close()
    })

    it("refuses HELD_BY_OTHER (never naming the holder), HOLD_CAP_REACHED and HOLDS_REQUIRE_PRO", async () => {
      const holder = await account(server, "pro", "mcp-holder")
      const other = await account(server, "pro", "mcp-other")
      const free = await account(server, "free", "mcp-free-holder")
      const a = await connect(server, holder.secret)
      const b = await connect(server, other.secret)
      const f = await connect(server, free.secret)
      const [first, ...more] = ids.regular.slice(3, 7) as [string, ...Array<string>]
      for (const id of [first, ...more]) expectOk(await callTool(a, "reveal_listing", { id }))
      const held = expectOk(await callTool(a, "hold_listing", { id: first }))

      const viewOfOther = expectOk(await callTool(b, "get_listing", { id: first }))
      expect(viewOfOther).toMatchObject({ hold_state: "other", domain: null })
      const reveal = await callTool(b, "reveal_listing", { id: first })
      expectRefusal(reveal, "forbidden", { reveal_code: "HELD_BY_OTHER", expires_at: held.hold.expires_at })
      const hold = await callTool(b, "hold_listing", { id: first })
      expectRefusal(hold, "forbidden", { hold_code: "HELD_BY_OTHER", expires_at: held.hold.expires_at })
      expect(JSON.stringify(hold.structuredContent)).not.toContain(holder.accountId)

      for (const id of more.slice(0, 2)) expectOk(await callTool(a, "hold_listing", { id }))
      expectRefusal(await callTool(a, "hold_listing", { id: more[2]! }), "forbidden", { hold_code: "HOLD_CAP_REACHED", limit: 3 })

      expectRefusal(await callTool(f, "hold_listing", { id: ids.open }), "upgrade_required", { hold_code: "HOLDS_REQUIRE_PRO" })
      await Promise.all([a.close(), b.close(), f.close()])
    })
  })

  describe("idempotency keys", () => {
    const REPLAYED = "dropshelf/idempotent-replayed"

    it("the writing tools take an idempotency_key; a repeat returns the first result, marked replayed in _meta, and changes nothing", async () => {
      const key = await account(server, "pro", "mcp-idempotent")
      const connected = await connect(server, key.secret)
      const { tools } = await connected.client.listTools()
      for (const name of ["reveal_listing", "hold_listing", "extend_hold", "end_hold"]) {
        const input = tools.find((tool) => tool.name === name)!.inputSchema as any
        expect(input.properties.idempotency_key?.type, name).toBe("string")
        expect(input.required ?? [], name).not.toContain("idempotency_key")
      }
      const id = ids.regular[12]!
      expectOk(await callTool(connected, "reveal_listing", { id }))
      const first = await callTool(connected, "hold_listing", { id, idempotency_key: "mcp-hold-1" })
      expectOk(first)
      expect(first._meta?.[REPLAYED]).toBeUndefined()
      const repeat = await callTool(connected, "hold_listing", { id, idempotency_key: "mcp-hold-1" })
      expect(expectOk(repeat)).toEqual(first.structuredContent)
      expect(repeat._meta?.[REPLAYED]).toBe(true)

      const ended = await callTool(connected, "end_hold", { hold_id: first.structuredContent.hold.id, idempotency_key: "mcp-end-1" })
      expectOk(ended)
      // Without the key this would be HOLD_OVER: the hold has ended. `outcome` absent is `released`.
      const endedAgain = await callTool(connected, "end_hold", {
        hold_id: first.structuredContent.hold.id,
        outcome: "released",
        idempotency_key: "mcp-end-1"
      })
      expect(expectOk(endedAgain)).toEqual(ended.structuredContent)
      expect(endedAgain._meta?.[REPLAYED]).toBe(true)
      expect(expectOk(await callTool(connected, "list_holds")).data).toHaveLength(1)
      await connected.close()
    })

    it("a refused first call is replayed as refused; the key with another call is idempotency_key_reused; a bad key is invalid_request", async () => {
      const key = await account(server, "pro", "mcp-idempotent-refusals")
      const connected = await connect(server, key.secret)
      const id = ids.regular[13]!
      const refused = await callTool(connected, "hold_listing", { id, idempotency_key: "mcp-refused" })
      expectRefusal(refused, "forbidden", { hold_code: "REVEAL_REQUIRED" })
      expectOk(await callTool(connected, "reveal_listing", { id }))
      const stillRefused = await callTool(connected, "hold_listing", { id, idempotency_key: "mcp-refused" })
      expectRefusal(stillRefused, "forbidden", { hold_code: "REVEAL_REQUIRED" })
      expect(stillRefused._meta?.[REPLAYED]).toBe(true)

      const reused = await callTool(connected, "hold_listing", { id: ids.regular[14]!, idempotency_key: "mcp-refused" })
      expectRefusal(reused, "idempotency_key_reused")
      expect(reused.structuredContent.error.hold_code).toBeUndefined()
      for (const bad of ["", "with space", "x".repeat(256), 42]) {
        expectRefusal(await callTool(connected, "reveal_listing", { id, idempotency_key: bad }), "invalid_request", { parameter: "idempotency_key" })
      }
      expect(expectOk(await callTool(connected, "list_holds")).data).toHaveLength(0)
      await connected.close()
    })

    it("a key is the account's across REST and MCP: a reveal sent with Idempotency-Key replays to reveal_listing", async () => {
      const key = await account(server, "pro", "mcp-idempotent-rest")
      const id = ids.regular[14]!
      const rest = await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: key.secret, headers: { "idempotency-key": "shared-1" } })
      expect(rest.status).toBe(200)
      const connected = await connect(server, key.secret)
      const tool = await callTool(connected, "reveal_listing", { id, idempotency_key: "shared-1" })
      expect(expectOk(tool)).toEqual(rest.body)
      expect(tool._meta?.[REPLAYED]).toBe(true)
      await connected.close()
    })
  })

  describe("one rate-limit window with REST", () => {
    it("REST, a tool call, REST: X-RateLimit-Remaining drops by one each time; initialize costs what it POSTs", async () => {
      await awayFromMinuteEdge()
      const key = await account(server, "pro", "mcp-shared")
      const before = await call(server, "GET", "/api/v1/me", { key: key.secret })
      const r0 = Number(before.headers.get("x-ratelimit-remaining"))
      expect(r0).toBe(59)

      const connected = await connect(server, key.secret)
      // The SDK client POSTs `initialize` and then the `notifications/initialized` notification,
      // and this test's client lists the tools: every authenticated POST counts once.
      expect(connected.posts.map((post) => [post.method, post.remaining])).toEqual([
        ["initialize", String(r0 - 1)],
        ["notifications/initialized", String(r0 - 2)],
        ["tools/list", String(r0 - 3)]
      ])

      const r1 = Number((await call(server, "GET", "/api/v1/me", { key: key.secret })).headers.get("x-ratelimit-remaining"))
      expect(r1).toBe(r0 - 4)
      const me = expectOk(await callTool(connected, "me"))
      expect(connected.posts.at(-1)).toEqual({ method: "tools/call", status: 200, remaining: String(r1 - 1) })
      expect(me.rate_limit.remaining).toBe(r1 - 1)
      const r3 = Number((await call(server, "GET", "/api/v1/domains?limit=1", { key: key.secret })).headers.get("x-ratelimit-remaining"))
      expect(r3).toBe(r1 - 2)
      // A refused call counts too, as a refused REST request does.
      expectRefusal(await callTool(connected, "get_listing", { id: "ZZZZZZZZ" }), "not_found")
      expect(connected.posts.at(-1)?.remaining).toBe(String(r3 - 1))
      await connected.close()
    })

    it("over the limit a tool call is a rate_limited result with retry_after; other MCP requests are 429", async () => {
      await awayFromMinuteEdge()
      const key = await account(server, "free", "mcp-limited")
      const connected = await connect(server, key.secret)
      let remaining = Number(connected.posts.at(-1)!.remaining)
      while (remaining > 0) {
        remaining = Number((await call(server, "GET", "/api/v1/me", { key: key.secret })).headers.get("x-ratelimit-remaining"))
      }
      const limited = await callTool(connected, "search_listings", {})
      expectRefusal(limited, "rate_limited")
      const retryAfter = limited.structuredContent.error.retry_after
      expect(Number.isInteger(retryAfter)).toBe(true)
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(limited.structuredContent.error.message).toContain(`retry after ${retryAfter} s`)
      expect(connected.posts.at(-1)).toMatchObject({ status: 200, remaining: "0" })

      await expect(connected.client.listTools()).rejects.toThrow(/429|rate_limited/)
      const raw = await call(server, "POST", "/mcp", {
        key: key.secret,
        headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" })
      })
      expect(raw.status).toBe(429)
      expect(raw.body.error.code).toBe("rate_limited")
      expect(Number(raw.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      expect(raw.body.error.retry_after).toBe(Number(raw.headers.get("retry-after")))
      expect(raw.headers.get("x-ratelimit-remaining")).toBe("0")
      const rest = await call(server, "GET", "/api/v1/me", { key: key.secret })
      expect(rest.status).toBe(429)
      expect(rest.body.error.retry_after).toBe(Number(rest.headers.get("retry-after")))
      await connected.close()
    })

    it("a JSON-RPC batch counts every tool call it carries: it is no way around the limit", async () => {
      await awayFromMinuteEdge()
      const key = await account(server, "free", "mcp-batch")
      const batch = (calls: number) =>
        call(server, "POST", "/mcp", {
          key: key.secret,
          headers: { accept: "application/json, text/event-stream" },
          body: JSON.stringify([
            { jsonrpc: "2.0", id: "list", method: "tools/list" },
            ...Array.from({ length: calls }, (_, index) => ({ jsonrpc: "2.0", id: index, method: "tools/call", params: { name: "me", arguments: {} } }))
          ])
        })
      const r0 = Number((await call(server, "GET", "/api/v1/me", { key: key.secret })).headers.get("x-ratelimit-remaining"))
      const three = await batch(3)
      expect(three.status).toBe(200)
      expect(three.body.filter((answer: any) => answer.result?.isError === undefined && answer.result?.structuredContent !== undefined)).toHaveLength(3)
      // The POST counts once, and each tool call after the first once more.
      expect(three.headers.get("x-ratelimit-remaining")).toBe(String(r0 - 3))

      const over = await batch(r0 - 3 + 2)
      const refusals = over.body.filter((answer: any) => answer.result?.structuredContent?.error?.code === "rate_limited")
      expect(refusals).toHaveLength(2)
      expect(over.headers.get("x-ratelimit-remaining")).toBe("0")
      expect((await call(server, "GET", "/api/v1/me", { key: key.secret })).status).toBe(429)
    })
  })
})
