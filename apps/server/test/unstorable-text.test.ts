/**
 * A property against the running server, on every storage adapter: any Unicode text a caller
 * sends where text is stored or searched — NUL and lone surrogates included — into every query
 * parameter, path id, write body field and header of every endpoint, and every argument of
 * every MCP tool, is answered without a 5xx (and, on `/mcp`, without a `server_error` result or
 * an internal JSON-RPC error). What cannot be stored is refused 400 `invalid_request` naming the
 * parameter (`Text.storable` in the core).
 *
 * A query string and a path carry UTF-8, in which a lone surrogate has no form (a client's
 * encoder sends U+FFFD), so lone surrogates reach the server in JSON: write bodies and MCP
 * arguments. Bounded: a few runs per target, a fixed seed (`DROPSHELF_TEXT_SEED` varies it).
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ListQuery } from "@dropshelf/core"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, addListings, listing, type Running, start } from "./harness.ts"

const SEED = Number(process.env.DROPSHELF_TEXT_SEED ?? 20_261_206)
const RUNS = 6

/** Arbitrary Unicode, weighted towards what storage refuses. */
const text: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ unit: "binary", maxLength: 24 }), weight: 3 },
  { arbitrary: fc.tuple(fc.string({ unit: "binary", maxLength: 8 }), fc.constantFrom("\u0000", "\ud800", "\udfff")).map(([a, b]) => a + b), weight: 2 },
  { arbitrary: fc.constantFrom("\u0000", "\ud800", "a\u0000b", "tech\u0000", "com\ud800", "\udc00x", "\ud800\u0000"), weight: 2 }
)

/** Percent-encoded UTF-8, as a client's encoder writes a query value or path segment. */
const encoded = (value: string) =>
  Array.from(new TextEncoder().encode(value), (byte) =>
    /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("")

/** A header can carry only bytes: the text's UTF-8 as Latin-1, without the bytes HTTP forbids there. */
const headerValue = (value: string) => Buffer.from(value, "utf8").toString("latin1").replace(/[\u0000\r\n]/g, "")

interface Request {
  readonly method: string
  readonly path: string
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

interface Context {
  readonly listingId: string
  readonly watchId: string
}

type Target = { readonly name: string; readonly watches?: true } & (
  | { readonly rest: (value: string, context: Context) => Request }
  | { readonly tool: string; readonly args: (value: string, context: Context) => Record<string, unknown> }
)

const rest = (name: string, build: (value: string, context: Context) => Request, watches = false): Target => ({
  name,
  rest: build,
  ...(watches ? { watches: true as const } : {})
})
const tool = (name: string, args: (value: string, context: Context) => Record<string, unknown>, watches = false): Target => ({
  name: `${name} ${JSON.stringify(Object.keys(args("", { listingId: "", watchId: "" })))}`,
  tool: name,
  args,
  ...(watches ? { watches: true as const } : {})
})

const TARGETS: ReadonlyArray<Target> = [
  ...ListQuery.LIST_PARAMETERS.map((parameter) =>
    rest(`GET /domains?${parameter}`, (value) => ({ method: "GET", path: `/api/v1/domains?${parameter}=${encoded(value)}` }))
  ),
  rest("GET /domains/{id}", (value) => ({ method: "GET", path: `/api/v1/domains/${encoded(value)}` })),
  rest("POST /domains/{id}/reveal", (value) => ({ method: "POST", path: `/api/v1/domains/${encoded(value)}/reveal` })),
  rest("POST /domains/{id}/hold", (value) => ({ method: "POST", path: `/api/v1/domains/${encoded(value)}/hold` })),
  rest("POST /holds/{id}/extend", (value) => ({ method: "POST", path: `/api/v1/holds/${encoded(value)}/extend` })),
  rest("DELETE /holds/{id}", (value) => ({ method: "DELETE", path: `/api/v1/holds/${encoded(value)}` })),
  rest("DELETE /holds/{id} outcome", (value) => ({ method: "DELETE", path: "/api/v1/holds/nosuchhold", body: { outcome: value } })),
  rest("Idempotency-Key", (value, { listingId }) => ({
    method: "POST",
    path: `/api/v1/domains/${listingId}/reveal`,
    headers: { "idempotency-key": headerValue(value) }
  })),
  rest("POST /watches name", (value) => ({ method: "POST", path: "/api/v1/watches", body: { name: value } }), true),
  rest("POST /watches query", (value) => ({ method: "POST", path: "/api/v1/watches", body: { name: "w", query: { q: value, tld: value } } }), true),
  rest("POST /watches query name", (value) => ({ method: "POST", path: "/api/v1/watches", body: { name: "w", query: { [value]: "x" } } }), true),
  rest("POST /watches webhook_url", (value) => ({ method: "POST", path: "/api/v1/watches", body: { name: "w", webhook_url: value } }), true),
  rest("PATCH /watches/{id} name", (value, { watchId }) => ({ method: "PATCH", path: `/api/v1/watches/${watchId}`, body: { name: value } }), true),
  rest("PATCH /watches/{id} query", (value, { watchId }) => ({ method: "PATCH", path: `/api/v1/watches/${watchId}`, body: { query: { category: value } } }), true),
  rest("PATCH /watches/{id} webhook_url", (value, { watchId }) => ({ method: "PATCH", path: `/api/v1/watches/${watchId}`, body: { webhook_url: value } }), true),
  rest("GET /watches/{id}", (value) => ({ method: "GET", path: `/api/v1/watches/${encoded(value)}` }), true),
  rest("GET /watches/{id}/matches cursor", (value, { watchId }) => ({ method: "GET", path: `/api/v1/watches/${watchId}/matches?cursor=${encoded(value)}` }), true),
  rest("POST /watches/{id}/deliveries/{event}/retry", (value, { watchId }) => ({
    method: "POST",
    path: `/api/v1/watches/${watchId}/deliveries/${encoded(value)}/retry`
  }), true),
  ...ListQuery.LIST_PARAMETERS.map((parameter) => tool("search_listings", (value) => ({ [parameter]: value }))),
  tool("get_listing", (value) => ({ id: value })),
  tool("reveal_listing", (value) => ({ id: value })),
  tool("reveal_listing", (value, { listingId }) => ({ id: listingId, idempotency_key: value })),
  tool("hold_listing", (value) => ({ id: value })),
  tool("extend_hold", (value) => ({ hold_id: value })),
  tool("end_hold", (value) => ({ hold_id: value })),
  tool("end_hold", (value) => ({ hold_id: "nosuchhold", outcome: value })),
  tool("create_watch", (value) => ({ name: value }), true),
  tool("create_watch", (value) => ({ name: "w", query: { q: value, source: value } }), true),
  tool("create_watch", (value) => ({ name: "w", webhook_url: value }), true),
  tool("delete_watch", (value) => ({ id: value }), true),
  tool("list_watch_matches", (value) => ({ id: value }), true),
  tool("list_watch_matches", (value, { watchId }) => ({ id: watchId, cursor: value }), true)
]

for (const adapter of adapters) {
  describe.skipIf(adapter.skip !== undefined)(`unstorable text on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let server: Running
    const open = listing({ domain: `open-${Math.random().toString(36).slice(2, 8)}.com`, tier: "open" })
    let key = ""
    let context: Context
    let sent = 0

    /** A business key with a watch of its own; a fresh one every few dozen requests, so none is refused 429. */
    const rotate = async () => {
      key = (await account(server, "business", `text-${sent}`)).secret
      const created = await fetch(`${server.base}/api/v1/watches`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "seed" })
      })
      expect(created.status).toBe(201)
      context = { listingId: open.id, watchId: ((await created.json()) as { id: string }).id }
    }

    beforeAll(async () => {
      server = await start(adapter)
      await addListings(server, [open])
      await rotate()
    })

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    const send = async (target: Target, value: string) => {
      if (++sent % 50 === 0) await rotate()
      const headers: Record<string, string> = { authorization: `Bearer ${key}` }
      let request: Request
      if ("rest" in target) {
        request = target.rest(value, context)
      } else {
        Object.assign(headers, { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" })
        request = {
          method: "POST",
          path: "/mcp",
          body: { jsonrpc: "2.0", id: sent, method: "tools/call", params: { name: target.tool, arguments: target.args(value, context) } }
        }
      }
      if (request.body !== undefined) headers["content-type"] = "application/json"
      const response = await fetch(`${server.base}${request.path}`, {
        method: request.method,
        headers: { ...headers, ...request.headers },
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) })
      })
      const answer = await response.text()
      const label = `${target.name} with ${JSON.stringify(value)}: ${response.status} ${answer.slice(0, 300)}`
      expect(response.status, label).toBeLessThan(500)
      const body = answer === "" ? undefined : JSON.parse(answer)
      if ("tool" in target) {
        expect(body.error?.code, label).not.toBe(-32603)
        expect(body.result?.structuredContent?.error?.code, label).not.toBe("server_error")
      }
      return { status: response.status, body }
    }

    for (const target of TARGETS) {
      it(`${target.name}: no 5xx for any text`, async () => {
        await fc.assert(
          fc.asyncProperty(text, async (value) => {
            await send(target, value)
          }),
          { numRuns: RUNS, seed: SEED, examples: [["\u0000"], ["\ud800"], ["a\u0000"]] }
        )
      })
    }

    it("text that cannot be stored is refused 400 naming the parameter, REST and MCP alike", async () => {
      for (const [parameter, value] of [["q", "coffee\u0000"], ["cursor", "abc\u0000"], ["category", "tech\u0000"], ["tld", "com\u0000"]] as const) {
        const answer = await send(TARGETS.find((target) => target.name === `GET /domains?${parameter}`)!, value)
        expect(answer.status, parameter).toBe(400)
        expect(answer.body.error, parameter).toMatchObject({ code: "invalid_request", parameter })
      }
      for (const [parameter, value] of [["q", "coffee\ud800"], ["cursor", "abc\ud800"], ["q", "a\u0000"]] as const) {
        const answer = await send(TARGETS.find((target) => "tool" in target && target.name === `search_listings ["${parameter}"]`)!, value)
        expect(answer.body.result.structuredContent.error, parameter).toMatchObject({ code: "invalid_request", parameter })
      }
      for (const name of ["get_listing", "reveal_listing", "hold_listing"]) {
        const answer = await send(TARGETS.find((target) => target.name === `${name} ["id"]`)!, "Ab3dE9x\u0000")
        expect(answer.body.result.structuredContent.error, name).toMatchObject({ code: "invalid_request", parameter: "id" })
      }
      const extend = await send(TARGETS.find((target) => target.name === `extend_hold ["hold_id"]`)!, "h\ud800")
      expect(extend.body.result.structuredContent.error).toMatchObject({ code: "invalid_request", parameter: "hold_id" })
    })
  })
}
