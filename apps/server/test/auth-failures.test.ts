/**
 * Requests without a valid key, against the real server on every storage adapter: refusals are
 * counted per client address on every path that reads a key (the REST middleware, the answers
 * the boundary gives before a handler, `/mcp`); past the ceiling the address gets 429 with
 * `Retry-After`, before any key is looked up. The servers trust 127.0.0.1 as a proxy, so each
 * test speaks from addresses of its own through `X-Forwarded-For`.
 */
import { Context, Effect, Layer } from "effect"
import { IpNetwork } from "effect/net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApiKey, KeyStore, Operators } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, type Adapter, awayFromMinuteEdge, call, memoryAdapter, type Running, start } from "./harness.ts"

const CEILING = 4

/** The adapter with its key store counting look-ups by digest. */
const countingLookUps = (adapter: Adapter, lookUps: { count: number }): Adapter => ({
  ...adapter,
  layer: () =>
    Layer.effectContext(Effect.gen(function*() {
      const context = yield* Layer.build(adapter.layer())
      const keys = Context.get(context, KeyStore.KeyStore)
      return Context.add(context, KeyStore.KeyStore, KeyStore.KeyStore.of({
        ...keys,
        findByDigest: (digest) => Effect.suspend(() => (lookUps.count++, keys.findByDigest(digest)))
      }))
    }))
})

const unknownKey = () => Effect.runPromise(ApiKey.generateSecret.pipe(Effect.provide(StoreMemory.layerCrypto)))

const withBadChecksum = (secret: string) => secret.slice(0, -1) + (secret.endsWith("A") ? "B" : "A")

const MCP_HEADERS = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" }
const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } }
})

const expectAddressRefusal = (response: { readonly status: number; readonly headers: Headers; readonly body: any }) => {
  expect(response.status).toBe(429)
  expect(response.body.error.code).toBe("rate_limited")
  expect(response.body.error.message).toMatch(/without a valid API key/)
  const retryAfter = Number(response.headers.get("retry-after"))
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true)
  for (const header of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) expect(response.headers.get(header)).toBeNull()
  expect(response.headers.get("access-control-allow-origin")).toBe("*")
}

for (const adapter of adapters) {
  describe.skipIf(adapter.skip !== undefined)(`refused keys per address on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    const lookUps = { count: 0 }
    let server: Running
    let last = 0
    /** A client address no other test used: 198.51.100.0/24 is for documentation. */
    const newAddress = () => `198.51.100.${++last}`

    beforeAll(async () => {
      server = await start(countingLookUps(adapter, lookUps), {
        authFailuresPerMinute: CEILING,
        trustedProxies: [IpNetwork.fromStringUnsafe("127.0.0.1/32")]
      })
    })

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    it("REST: every 401 counts against the address; past the ceiling 429 with Retry-After, no key looked up, a valid key refused too", async () => {
      const valid = await account(server, "pro", "valid")
      const revoked = await account(server, "pro", "revoked")
      await server.run(Operators.Operators.use((operators) => operators.revokeKey(revoked.prefix)))
      const unknown = await unknownKey()
      await awayFromMinuteEdge(8)
      const from = { "x-forwarded-for": newAddress() }
      const refused: Array<Record<string, string>> = [
        {},
        { authorization: "Bearer not-a-key" },
        { authorization: `Bearer ${withBadChecksum(valid.secret)}` },
        { authorization: `Bearer ${unknown}` }
      ]
      for (const headers of refused) {
        const response = await call(server, "GET", "/api/v1/me", { headers: { ...headers, ...from } })
        expect(response.status, JSON.stringify(headers)).toBe(401)
      }
      const before = lookUps.count
      expectAddressRefusal(await call(server, "GET", "/api/v1/me", { key: revoked.secret, headers: from }))
      expect(lookUps.count - before).toBe(1)
      for (const key of [valid.secret, unknown, await unknownKey(), undefined]) {
        expectAddressRefusal(await call(server, "GET", "/api/v1/domains", { key, headers: from }))
      }
      expectAddressRefusal(await call(server, "POST", "/api/v1/domains/AAAAAAAA/reveal", { key: valid.secret, headers: from }))
      expect(lookUps.count - before).toBe(1)
      // Another address is its own count, and the valid key itself was never counted against.
      const elsewhere = await call(server, "GET", "/api/v1/me", { key: valid.secret, headers: { "x-forwarded-for": newAddress() } })
      expect(elsewhere.status).toBe(200)
      expect(elsewhere.body.rate_limit.remaining).toBe(elsewhere.body.rate_limit.limit - 1)
    })

    it("the boundary's answers before a handler (405, no route) count a refused key against the address", async () => {
      const valid = await account(server, "pro", "boundary")
      const unknown = await unknownKey()
      await awayFromMinuteEdge(8)
      const from = { "x-forwarded-for": newAddress() }
      for (const [method, path] of [["DELETE", "/api/v1/me"], ["PUT", "/api/v1/holds"], ["GET", "/api/v1/nowhere"], ["GET", "/api/v1/me/"]] as const) {
        const response = await call(server, method, path, { key: unknown, headers: from })
        expect(response.status, `${method} ${path}`).toBeOneOf([404, 405])
        expect(response.headers.get("x-ratelimit-limit")).toBeNull()
      }
      expectAddressRefusal(await call(server, "DELETE", "/api/v1/me", { key: unknown, headers: from }))
      expectAddressRefusal(await call(server, "DELETE", "/api/v1/me", { key: valid.secret, headers: from }))
      expectAddressRefusal(await call(server, "GET", "/api/v1/me", { key: valid.secret, headers: from }))
    })

    it("/mcp: refused keys count against the same address as REST's; past the ceiling 429, a valid key too", async () => {
      const valid = await account(server, "pro", "mcp")
      const unknown = await unknownKey()
      await awayFromMinuteEdge(8)
      const from = { "x-forwarded-for": newAddress() }
      expect((await call(server, "GET", "/api/v1/me", { key: unknown, headers: from })).status).toBe(401)
      expect((await call(server, "GET", "/api/v1/me", { headers: from })).status).toBe(401)
      for (const key of [unknown, withBadChecksum(valid.secret)]) {
        const response = await call(server, "POST", "/mcp", { key, body: INITIALIZE, headers: { ...MCP_HEADERS, ...from } })
        expect(response.status).toBe(401)
      }
      // The refusal past the ceiling finds the address over it; from then on no key is looked up.
      expectAddressRefusal(await call(server, "POST", "/mcp", { key: unknown, body: INITIALIZE, headers: { ...MCP_HEADERS, ...from } }))
      const before = lookUps.count
      for (const key of [unknown, valid.secret, undefined]) {
        expectAddressRefusal(await call(server, "POST", "/mcp", { key, body: INITIALIZE, headers: { ...MCP_HEADERS, ...from } }))
      }
      expect(lookUps.count).toBe(before)
      const elsewhere = await call(server, "POST", "/mcp", { key: valid.secret, body: INITIALIZE, headers: { ...MCP_HEADERS, "x-forwarded-for": newAddress() } })
      expect(elsewhere.status).toBe(200)
    })

    it("behind a trusted proxy the client is the rightmost address it did not append itself: a spoofed entry to its left changes nothing", async () => {
      await awayFromMinuteEdge(8)
      const client = newAddress()
      for (let n = 0; n < CEILING; n++) {
        const spoofed = { "x-forwarded-for": `203.0.113.${n}, ${client}` }
        expect((await call(server, "GET", "/api/v1/me", { headers: spoofed })).status).toBe(401)
      }
      expectAddressRefusal(await call(server, "GET", "/api/v1/me", { headers: { "x-forwarded-for": `192.0.2.1, ${client}` } }))
      expectAddressRefusal(await call(server, "GET", "/api/v1/me", { headers: { "x-forwarded-for": client } }))
      expect((await call(server, "GET", "/api/v1/me", { headers: { "x-forwarded-for": `${client}, ${newAddress()}` } })).status).toBe(401)
    })

    it("the served document says refusals without a valid key are limited per address, and what that 429 carries", async () => {
      const key = await account(server, "free", "document")
      const spec = (await call(server, "GET", "/api/v1/openapi.json", { key: key.secret, headers: { "x-forwarded-for": newAddress() } })).body
      // Every keyed operation: those under /api/v1 (GET / needs no key).
      const operations = Object.entries<any>(spec.paths).filter(([path]) => path.startsWith("/api/v1/")).flatMap(([, item]) => Object.values<any>(item))
      expect(operations.length).toBe(19) // ten of listings, holds and the account; nine of watches
      for (const operation of operations) {
        expect(operation.responses["401"].description).toMatch(/counts against the client's address/)
        expect(operation.responses["429"].description).toMatch(/address .*refused, a valid key included, until the minute ends/)
        expect(operation.responses["429"].description).toMatch(/carries no `X-RateLimit-\*`/)
        expect(operation.responses["429"].headers["Retry-After"]).toBeDefined()
      }
    })
  })
}

describe("refused keys per address without a trusted proxy", () => {
  // Which address counts does not depend on storage: the memory adapter stands for all.
  let server: Running

  beforeAll(async () => {
    server = await start(memoryAdapter, { authFailuresPerMinute: 2 })
  })

  afterAll(async () => {
    await server?.close()
  })

  it("X-Forwarded-For is ignored: every request counts under the socket's address", async () => {
    await awayFromMinuteEdge(8)
    for (const forwarded of ["198.51.100.200", "198.51.100.201"]) {
      expect((await call(server, "GET", "/api/v1/me", { headers: { "x-forwarded-for": forwarded } })).status).toBe(401)
    }
    expectAddressRefusal(await call(server, "GET", "/api/v1/me", { headers: { "x-forwarded-for": "198.51.100.202" } }))
    expectAddressRefusal(await call(server, "GET", "/api/v1/me"))
  })
})
