/**
 * Spec, Limits rule 2: every answer to a request that carries a valid key carries
 * `X-RateLimit-Limit`, `-Remaining` and `-Reset`, including the answers the boundary gives
 * before any handler runs: a path under `/api/v1` no route knows (the prefix itself included),
 * and `/mcp`'s keyed `OPTIONS`, its 413 and its 405s. Checked on the wire, on the memory adapter
 * (the boundary does not depend on storage).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { account, awayFromMinuteEdge, memoryAdapter, type Running, start } from "./harness.ts"
import { rawExchange } from "./rawHttp.ts"

const RATE_HEADERS = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]

describe("rate-limit headers on every keyed answer", () => {
  let server: Running

  beforeAll(async () => {
    server = await start(memoryAdapter)
  })

  afterAll(() => server?.close())

  // Each test counts a fresh key's requests in one wall-clock window.
  const fresh = async (name: string) => {
    await awayFromMinuteEdge()
    return (await account(server, "pro", name)).secret
  }
  const send = (method: string, path: string, secret: string, init: { headers?: Record<string, string>; body?: string } = {}) =>
    fetch(`${server.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${secret}`, ...init.headers },
      ...(init.body === undefined ? {} : { body: init.body })
    })
  const remaining = (response: { readonly headers: Headers }) => Number(response.headers.get("x-ratelimit-remaining"))
  const expectRateHeaders = (response: { readonly headers: Headers }, label: string) => {
    for (const name of RATE_HEADERS) expect(response.headers.get(name), `${label}: ${name}`).toMatch(/^\d+$/)
  }
  /** What a `/me` says is left, counting itself. */
  const left = async (secret: string) => remaining(await send("GET", "/api/v1/me", secret))

  it("GET /api/v1 and other unknown paths under the prefix: 404 with the headers, counted", async () => {
    const secret = await fresh("rl-prefix")
    for (const path of ["/api/v1", "/api/v1/nothing", "/api/v1/domains/abcdefgh/nothing"]) {
      const response = await send("GET", path, secret)
      expect(response.status, path).toBe(404)
      expect(((await response.json()) as any).error.code).toBe("not_found")
      expectRateHeaders(response, path)
    }
    // Three 404s, then this /me: 60 - 4.
    expect(await left(secret)).toBe(56)
  })

  it("/mcp: a keyed OPTIONS, a 413 and the 405s carry the headers", async () => {
    const secret = await fresh("rl-mcp")
    const options = await send("OPTIONS", "/mcp", secret, {
      headers: { origin: "https://example.com", "access-control-request-method": "POST" }
    })
    expect(options.status).toBe(204)
    expect(options.headers.get("access-control-allow-origin")).toBe("*")
    expectRateHeaders(options, "OPTIONS /mcp")

    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(20_000) } })
    const declared = await send("POST", "/mcp", secret, {
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: big
    })
    expect(declared.status).toBe(413)
    expect(((await declared.json()) as any).error).toMatchObject({ code: "invalid_request", parameter: "body" })
    expectRateHeaders(declared, "POST /mcp, declared length over the cap")

    // No declared length: the cap is met while the body is read, after the POST was counted.
    const url = new URL(server.base)
    const chunked = await rawExchange(
      server.base,
      `POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`
    )
    expect(chunked?.status).toBe(413)
    expect(JSON.parse(chunked!.text).error).toMatchObject({ code: "invalid_request", parameter: "body" })
    for (const name of RATE_HEADERS) expect(chunked!.headers[name], `chunked 413: ${name}`).toMatch(/^\d+$/)

    for (const method of ["GET", "DELETE", "PUT", "PATCH"]) {
      const response = await send(method, "/mcp", secret, method === "GET" ? { headers: { accept: "text/event-stream" } } : {})
      expect(response.status, method).toBe(405)
      expect(response.headers.get("allow")).toBe("POST, OPTIONS")
      expect(((await response.json()) as any).error.code).toBe("method_not_allowed")
      expectRateHeaders(response, `${method} /mcp`)
    }
  })

  it("/mcp counts those answers as REST does, except the GET an MCP client probes for a stream with", async () => {
    const secret = await fresh("rl-mcp-count")
    const before = await left(secret)
    const probe = await send("GET", "/mcp", secret, { headers: { accept: "text/event-stream" } })
    // The probe is told the window as it stands, uncounted.
    expect(remaining(probe)).toBe(before)
    await send("OPTIONS", "/mcp", secret)
    await send("DELETE", "/mcp", secret)
    // The OPTIONS and the DELETE counted, then this /me.
    expect(await left(secret)).toBe(before - 3)
    // The one exemption from counting is stated in the served document.
    const spec = (await (await send("GET", "/api/v1/openapi.json", secret)).json()) as any
    expect(spec.info.description).toMatch(/GET an MCP client probes `\/mcp` with for a stream \(answered 405\)[^.]*uncounted/)
  })
})
