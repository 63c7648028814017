/**
 * The edges of HTTP against the real server on every storage adapter, mostly over raw sockets
 * (requests `fetch` would never send): every refusal is the JSON envelope with
 * `Access-Control-Allow-Origin: *`, and a request whose valid key was read carries the
 * rate-limit headers and counts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, call, type Running, start } from "./harness.ts"
import { rawExchange } from "./rawHttp.ts"

for (const adapter of adapters) {
  describe.skipIf(adapter.skip !== undefined)(`raw HTTP on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let server: Running
    beforeAll(async () => {
      server = await start(adapter)
    })

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    /** What is left of a key's window, read with a request that itself counts one, away from the minute's end. */
    /** The first reading of a test: late in a minute it waits for the next, so the test's readings share one window. */
    const remainingOf = async (secret: string) => {
      const second = new Date().getUTCSeconds()
      if (second >= 45) await new Promise((wake) => setTimeout(wake, (61 - second) * 1000))
      return remainingNow(secret)
    }
    const remainingNow = async (secret: string) =>
      Number((await call(server, "GET", "/api/v1/me", { key: secret })).headers.get("x-ratelimit-remaining"))

    it("an HTTP/1.1 request without Host is 400 invalid_request in the envelope, naming Host; with a valid key it counts", async () => {
      const key = await account(server, "pro", "no-host")
      const before = await remainingOf(key.secret)
      const keyed = await rawExchange(server.base, `GET /api/v1/me HTTP/1.1\r\nAuthorization: Bearer ${key.secret}\r\n\r\n`)
      expect(keyed?.status).toBe(400)
      expect(keyed!.headers["content-type"]).toContain("application/json")
      expect(keyed!.headers["access-control-allow-origin"]).toBe("*")
      expect(keyed!.headers.connection).toBe("close")
      const body = JSON.parse(keyed!.text)
      expect(body.error.code).toBe("invalid_request")
      expect(body.error.message).toMatch(/\bHost\b/)
      expect(keyed!.headers["x-ratelimit-limit"]).toBe("60")
      expect(keyed!.headers["x-ratelimit-remaining"]).toBe(String(before - 1))

      const anonymous = await rawExchange(server.base, "GET /healthz HTTP/1.1\r\n\r\n")
      expect(anonymous?.status).toBe(400)
      expect(anonymous!.headers["access-control-allow-origin"]).toBe("*")
      expect(JSON.parse(anonymous!.text).error.code).toBe("invalid_request")
      expect(anonymous!.headers["x-ratelimit-limit"]).toBeUndefined()
      // HTTP/1.0 has no Host requirement.
      const old = await rawExchange(server.base, "GET /healthz HTTP/1.0\r\n\r\n")
      expect(old?.status).toBe(200)

      // The served document describes the answer on both operations, with its headers.
      const spec = (await call(server, "GET", "/api/v1/openapi.json", { key: key.secret })).body as any
      for (const [path, headers] of [["/api/v1/me", ["X-RateLimit-Limit"]], ["/healthz", []]] as const) {
        const described = spec.paths[path].get.responses["400"]
        expect(described?.description, path).toMatch(/without `Host`/)
        expect(described.content["application/json"].schema.$ref).toBe("#/components/schemas/InvalidRequestErrorEncoded")
        expect(Object.keys(described.headers)).toEqual(expect.arrayContaining(["Access-Control-Allow-Origin", ...headers]))
      }
    })

    it("an id longer than the router takes is 404 not_found, counted with the rate-limit headers like any unrouted path", async () => {
      const key = await account(server, "pro", "long-id")
      const before = await remainingOf(key.secret)
      for (const [method, path] of [["GET", `/api/v1/domains/${"x".repeat(1_000)}`], ["DELETE", `/api/v1/holds/${"h".repeat(1_000)}`]] as const) {
        const answer = await call(server, method, path, { key: key.secret })
        expect(answer.status, method).toBe(404)
        expect(answer.body.error.code, method).toBe("not_found")
        expect(answer.headers.get("x-ratelimit-limit"), method).toBe("60")
      }
      expect(await remainingNow(key.secret)).toBe(before - 3)
    })

    it("an OPTIONS with a valid key counts and carries the rate-limit headers; the plain preflight stays uncounted", async () => {
      const key = await account(server, "pro", "keyed-options")
      const before = await remainingOf(key.secret)
      const keyed = await call(server, "OPTIONS", "/api/v1/me", { key: key.secret })
      expect(keyed.status).toBe(204)
      expect(keyed.headers.get("access-control-allow-origin")).toBe("*")
      expect(keyed.headers.get("access-control-allow-methods")).toContain("GET")
      expect(keyed.headers.get("x-ratelimit-limit")).toBe("60")
      expect(keyed.headers.get("x-ratelimit-remaining")).toBe(String(before - 1))
      expect(keyed.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/)
      // Counted, so in the access log like any other request.
      expect(server.logs).toContainEqual(expect.objectContaining({ method: "OPTIONS", path: "/api/v1/me", status: 204, key_prefix: key.prefix }))

      const preflight = await call(server, "OPTIONS", "/api/v1/me", {
        headers: { origin: "https://example.org", "access-control-request-method": "GET", "access-control-request-headers": "authorization" }
      })
      expect(preflight.status).toBe(204)
      expect(preflight.headers.get("x-ratelimit-limit")).toBeNull()
      // An unknown key is not counted either: there is no key to count.
      const unknown = await call(server, "OPTIONS", "/api/v1/me", { key: "ds_live_notakey" })
      expect(unknown.status).toBe(204)
      expect(unknown.headers.get("x-ratelimit-limit")).toBeNull()
      expect(await remainingNow(key.secret)).toBe(before - 2)
    })

    it("a keyed OPTIONS over the limit is the 429 envelope, with CORS", async () => {
      const key = await account(server, "free", "options-429")
      // The window may roll over mid-loop; spend until refused, a window's worth at most twice.
      let answer = await call(server, "OPTIONS", "/api/v1/holds", { key: key.secret })
      for (let sent = 1; answer.status !== 429 && sent < 45; sent++) answer = await call(server, "OPTIONS", "/api/v1/holds", { key: key.secret })
      expect(answer.status).toBe(429)
      expect(answer.body.error.code).toBe("rate_limited")
      expect(answer.headers.get("access-control-allow-origin")).toBe("*")
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      expect(answer.headers.get("x-ratelimit-remaining")).toBe("0")
    })

    it("a client that half-closes before its answer is taken to have gone; a request the half-close cuts short is the 400 envelope", async () => {
      const key = await account(server, "pro", "half-close")
      // No answer is written, as to any client that went away (decision 0200); the request still
      // reached the log. The request and the half-close are two writes: a busy server may read the
      // request alone and answer before the close arrives, which is then a whole exchange (a 200).
      // Of several tries, one must find the server told of the close first (on a loaded machine
      // the server won five races in a row).
      const answers = []
      for (let attempt = 0; attempt < 20 && (answers.length === 0 || answers.at(-1) !== undefined); attempt++) {
        answers.push(await rawExchange(server.base, `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key.secret}\r\n\r\n`, { halfClose: true }))
      }
      expect(answers.at(-1)).toBeUndefined()
      for (const answered of answers.slice(0, -1)) expect(answered?.status).toBe(200)
      await expect.poll(() => server.logs.some((entry) => entry.path === "/api/v1/me" && entry.key_prefix === key.prefix)).toBe(true)
      const cut = await rawExchange(
        server.base,
        `DELETE /api/v1/holds/abc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key.secret}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"outcome"`,
        { halfClose: true }
      )
      expect(cut?.status).toBe(400)
      expect(cut!.headers["access-control-allow-origin"]).toBe("*")
      expect(JSON.parse(cut!.text).error.code).toBe("invalid_request")
    })

    it("CONNECT is 404 not_found in the envelope, not a closed socket", async () => {
      const connect = await rawExchange(server.base, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
      expect(connect?.status).toBe(404)
      expect(connect!.headers["access-control-allow-origin"]).toBe("*")
      expect(JSON.parse(connect!.text).error.code).toBe("not_found")
    })

    it("an Expect other than 100-continue is served as if absent, not Node's bare 417", async () => {
      const key = await account(server, "pro", "expect")
      const expectation = await rawExchange(
        server.base,
        `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nExpect: tea\r\nConnection: close\r\nAuthorization: Bearer ${key.secret}\r\n\r\n`
      )
      expect(expectation?.status).toBe(200)
      expect(expectation!.headers["x-ratelimit-limit"]).toBe("60")
    })
  })
}
