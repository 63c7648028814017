/**
 * Black-box tests of the REST API: the real server on a random port, plain `fetch`, accounts
 * and keys made through the core's `Operators` on the same layer. Run once per storage adapter.
 * The last test checks every exchange of the run against the served OpenAPI document.
 */
import { Validator } from "@seriousme/openapi-schema-validator"
import * as http from "node:http"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Operators } from "@dropshelf/core"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, addListings, awayFromMinuteEdge, call, conformance, type Exchange, listing, type Running, start } from "./harness.ts"

/** The watch operations (watches.test.ts tests them). */
const WATCH_OPERATIONS = [
  "DELETE /api/v1/watches/{id}",
  "GET /api/v1/watches",
  "GET /api/v1/watches/{id}",
  "GET /api/v1/watches/{id}/deliveries",
  "GET /api/v1/watches/{id}/matches",
  "PATCH /api/v1/watches/{id}",
  "POST /api/v1/watches",
  "POST /api/v1/watches/{id}/deliveries/{event}/retry",
  "POST /api/v1/watches/{id}/rotate-secret"
]

const DAY = 86_400_000
const PATHS = {
  me: ["/api/v1/me", "GET, HEAD, OPTIONS"],
  domains: ["/api/v1/domains", "GET, HEAD, OPTIONS"],
  domain: ["/api/v1/domains/AAAAAAAA", "GET, HEAD, OPTIONS"],
  reveal: ["/api/v1/domains/AAAAAAAA/reveal", "POST, OPTIONS"],
  hold: ["/api/v1/domains/AAAAAAAA/hold", "POST, OPTIONS"],
  holds: ["/api/v1/holds", "GET, HEAD, OPTIONS"],
  extend: ["/api/v1/holds/abc/extend", "POST, OPTIONS"],
  holdById: ["/api/v1/holds/abc", "DELETE, OPTIONS"],
  openapi: ["/api/v1/openapi.json", "GET, HEAD, OPTIONS"],
  index: ["/", "GET, HEAD, OPTIONS"]
} as const

const expectEnvelope = (body: any, code: string) => {
  expect(body).toBeTypeOf("object")
  expect(body.error.code).toBe(code)
  expect(body.error.message).toBeTypeOf("string")
}

/** Waits out the end of a wall-clock minute, so a burst stays inside one rate-limit window. */
/** A GET whose request target is sent exactly as given (fetch would normalise it), and its JSON answer. */
const getAsSent = (server: Running, path: string, secret: string) =>
  new Promise<{ readonly status: number; readonly body: any }>((resolve, reject) => {
    const request = http.get(`${server.base}/`, { path, headers: { authorization: `Bearer ${secret}` } }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => text += chunk)
      response.on("end", () => resolve({ status: response.statusCode!, body: JSON.parse(text) }))
    })
    request.on("error", reject)
  })

for (const adapter of adapters) {
  describe.skipIf(adapter.skip !== undefined)(`REST API on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let server: Running
    const ids = {
      regular: [] as Array<string>,
      open: "",
      featured: "",
      fresh: "",
      nullMetrics: ""
    }

    beforeAll(async () => {
      server = await start(adapter)
      const regular = Array.from({ length: 14 }, (_, i) =>
        listing({ domain: `test-listing-${i}-${Math.random().toString(36).slice(2, 8)}.com`, category: "tech" }))
      const open = listing({ domain: `open-${Math.random().toString(36).slice(2, 8)}.net`, tier: "open" })
      const featured = listing({ domain: `featured-${Math.random().toString(36).slice(2, 8)}.com`, tier: "featured", featuredRank: 1 })
      const fresh = listing({ domain: `fresh-${Math.random().toString(36).slice(2, 8)}.com`, discoveredAt: Date.now() - 2 * DAY })
      const nullMetrics = listing({
        domain: `bare-${Math.random().toString(36).slice(2, 8)}.org`,
        ageYears: null,
        backlinks: null,
        domainAuthority: null,
        category: null
      })
      await addListings(server, [...regular, open, featured, fresh, nullMetrics])
      ids.regular = regular.map((row) => row.id)
      ids.open = open.id
      ids.featured = featured.id
      ids.fresh = fresh.id
      ids.nullMetrics = nullMetrics.id
    })

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    describe("conventions", () => {
      it("GET /healthz needs no key and is not rate limited", async () => {
        const response = await call(server, "GET", "/healthz")
        expect(response.status).toBe(200)
        expect(response.body).toEqual({ status: "ok" })
        expect(response.headers.get("x-ratelimit-limit")).toBeNull()
        expect(response.headers.get("access-control-allow-origin")).toBe("*")
      })

      it("GET / points to the reference, the document and liveness, without a key and without counting", async () => {
        await awayFromMinuteEdge()
        const key = await account(server, "free", "index")
        for (const init of [{}, { key: key.secret }]) {
          const response = await call(server, "GET", "/", init)
          expect(response.status).toBe(200)
          expect(response.headers.get("content-type")).toContain("application/json")
          expect(response.body).toMatchObject({
            name: "dropshelf",
            version: "1.3.0",
            links: { docs: { href: "/docs" }, openapi: { href: "/api/v1/openapi.json" }, health: { href: "/healthz" } }
          })
          expect(response.headers.get("x-ratelimit-limit")).toBeNull()
          expect(response.headers.get("access-control-allow-origin")).toBe("*")
        }
        for (const link of Object.values<{ href: string }>((await call(server, "GET", "/")).body.links)) {
          const followed = await call(server, "GET", link.href, link.href.startsWith("/api/") ? { key: key.secret } : {})
          expect(followed.status, link.href).toBe(200)
        }
        const me = await call(server, "GET", "/api/v1/me", { key: key.secret })
        expect(me.body.rate_limit.remaining).toBe(18)
        const post = await call(server, "POST", "/")
        expect(post.status).toBe(405)
        expect(post.headers.get("allow")).toBe("GET, HEAD, OPTIONS")
      })

      it("GET /docs is readable without a key", async () => {
        const response = await call(server, "GET", "/docs")
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toContain("text/html")
        expect(response.text).toContain("1.3.0")
      })

      it("an unknown route is 404 not_found in the envelope, never HTML", async () => {
        for (const path of ["/nope", "/api/v1/nope", "/api/v2/domains", "/api/v1/domains/AAAAAAAA/unknown"]) {
          const response = await call(server, "GET", path)
          expect(response.status).toBe(404)
          expect(response.headers.get("content-type")).toContain("application/json")
          expectEnvelope(response.body, "not_found")
          expect(response.headers.get("access-control-allow-origin")).toBe("*")
        }
      })

      it("a request Node cannot parse is refused in the envelope too, and the connection closed", async () => {
        const exchange = (request: string) =>
          new Promise<string>((resolve, reject) => {
            const url = new URL(server.base)
            const socket = net.connect(Number(url.port), url.hostname, () => socket.write(request))
            let received = ""
            socket.setEncoding("latin1")
            socket.on("data", (chunk: string) => received += chunk)
            socket.on("close", () => resolve(received))
            socket.on("error", reject)
          })
        const key = await account(server, "pro", "unparsable")
        const broken: Array<[string, string, string]> = [
          ["a broken request line", "400 Bad Request", "NOT HTTP AT ALL\r\n\r\n"],
          [
            "a bad chunk size",
            "400 Bad Request",
            `DELETE /api/v1/holds/abc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key.secret}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`
          ],
          ["headers over 16 KB", "431 Request Header Fields Too Large", `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Padding: ${"p".repeat(17_000)}\r\n\r\n`]
        ]
        for (const [name, status, request] of broken) {
          const response = await exchange(request)
          const [head = "", body = ""] = response.split("\r\n\r\n")
          const [statusLine = "", ...headerLines] = head.split("\r\n")
          expect(statusLine, name).toBe(`HTTP/1.1 ${status}`)
          expect(head.toLowerCase(), name).toContain("content-type: application/json")
          expect(head.toLowerCase(), name).toContain("connection: close")
          expectEnvelope(JSON.parse(body), "invalid_request")
          // Headers too large still name an operation (its request line was read), so the document's
          // last test checks that answer too. A 400 for broken HTTP is no operation's 400: it comes
          // before any key is counted and carries no rate-limit headers (decision 0200).
          const [method, path] = request.split(" ")
          if (status.startsWith("431")) {
            const headers = new Headers(headerLines.map((line) => line.split(/:\s*/, 2) as [string, string]))
            server.exchanges.push({ method: method!, path: path!, status: 431, headers, body: JSON.parse(body) })
          }
        }
      })

      it("every path answers an unimplemented method with 405 and Allow", async () => {
        for (const [path, allow] of Object.values(PATHS)) {
          for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
            if (allow.split(", ").includes(method)) continue
            const response = await call(server, method, path)
            expect(response.status, `${method} ${path}`).toBe(405)
            expect(response.headers.get("allow")).toBe(allow)
            expectEnvelope(response.body, "method_not_allowed")
            expect(response.headers.get("access-control-allow-origin")).toBe("*")
          }
        }
      })

      it("an answer given before any handler (405, 413, no route) still carries a valid key's rate-limit headers and counts", async () => {
        await awayFromMinuteEdge()
        const key = await account(server, "pro", "boundary-counted")
        const first = await call(server, "GET", "/api/v1/me", { key: key.secret })
        const start = Number(first.headers.get("x-ratelimit-remaining"))
        const answers = [
          await call(server, "PUT", "/api/v1/domains", { key: key.secret }),
          await call(server, "POST", "/api/v1/domains", { key: key.secret, body: "x".repeat(20_000), headers: { "content-type": "application/json" } }),
          await call(server, "GET", "/api/v1/nothing-here", { key: key.secret })
        ]
        expect(answers.map((answer) => answer.status)).toEqual([405, 405, 404])
        answers.forEach((answer, index) => {
          expect(answer.headers.get("x-ratelimit-limit"), String(index)).toBe("60")
          expect(answer.headers.get("x-ratelimit-remaining"), String(index)).toBe(String(start - 1 - index))
          expect(answer.headers.get("x-ratelimit-reset"), String(index)).toMatch(/^\d+$/)
        })
        const tooLarge = await call(server, "DELETE", "/api/v1/holds/abc", { key: key.secret, body: "x".repeat(20_000), headers: { "content-type": "application/json" } })
        expect(tooLarge.status).toBe(413)
        expect(tooLarge.headers.get("x-ratelimit-remaining")).toBe(String(start - 4))
        // Without a valid key nothing is counted and no rate-limit header is sent.
        const anonymous = await call(server, "PUT", "/api/v1/domains")
        expect(anonymous.status).toBe(405)
        expect(anonymous.headers.get("x-ratelimit-limit")).toBeNull()
      })

      it("a refusal repeats at most 100 characters of a value, with control characters escaped", async () => {
        const key = await account(server, "business", "echo")
        const long = "x".repeat(12_000)
        const answers = [
          await call(server, "GET", `/api/v1/domains?tld=${long}`, { key: key.secret }),
          await call(server, "GET", `/api/v1/domains?spam=${encodeURIComponent("\u0000\u001b[31mred\n")}`, { key: key.secret }),
          await call(server, "GET", `/api/v1/domains?category=${"a".repeat(60)},${"b".repeat(60)},${"c".repeat(60)}`, { key: key.secret }),
          await call(server, "GET", `/api/v1/${"y".repeat(12_000)}`, { key: key.secret }),
          await call(server, "PUT", `/api/v1/holds/${"z".repeat(12_000)}`, { key: key.secret })
        ]
        expect(answers.map((answer) => answer.status)).toEqual([400, 400, 400, 404, 405])
        for (const answer of answers) {
          const message: string = answer.body.error.message
          expect(message.length, message.slice(0, 80)).toBeLessThan(300)
          expect(message).not.toMatch(/[\u0000-\u001f]/)
        }
      })

      it("one spelling per resource: path parameters, percent-encoding, empty and dot segments, a trailing slash and absolute-form targets are 404", async () => {
        const key = await account(server, "business", "canonical")
        // fetch would normalise some of these, so speak HTTP directly.
        const raw = (path: string) => getAsSent(server, path, key.secret)
        const id = ids.regular[2]!
        expect((await raw("/api/v1/me")).status).toBe(200)
        expect((await raw(`/api/v1/domains/${id}`)).status).toBe(200)
        for (const path of [
          "/api/v1/me;x=1",
          "/api/v1/%6de",
          "//api//v1//me",
          `//api//v1//domains//${id}`,
          "/api/v1/me/",
          "/api/v1/./me",
          "/api/v1/domains/../me",
          `${server.base}/api/v1/me`
        ]) {
          const answer = await raw(path)
          expect(answer.status, path).toBe(404)
          expectEnvelope(answer.body, "not_found")
        }
      })

      it("HEAD answers wherever GET does; paths are case-sensitive", async () => {
        const key = await account(server, "pro", "head")
        const head = await call(server, "HEAD", "/api/v1/me", { key: key.secret })
        expect(head.status).toBe(200)
        expect(head.text).toBe("")
        expect(head.headers.get("x-ratelimit-limit")).toBe("60")
        expect((await call(server, "HEAD", "/healthz")).status).toBe(200)
        const upper = await call(server, "GET", "/API/V1/ME", { key: key.secret })
        expect(upper.status).toBe(404)
        expectEnvelope(upper.body, "not_found")
      })

      it("OPTIONS answers the preflight without a key", async () => {
        for (const [path, allow] of Object.values(PATHS)) {
          const response = await call(server, "OPTIONS", path, {
            headers: { origin: "https://example.org", "access-control-request-method": "GET", "access-control-request-headers": "authorization" }
          })
          expect(response.status).toBe(204)
          expect(response.headers.get("access-control-allow-origin")).toBe("*")
          const methods = (response.headers.get("access-control-allow-methods") ?? "").split(", ")
          for (const method of allow.split(", ")) expect(methods, path).toContain(method)
          expect(response.headers.get("access-control-allow-headers")).toMatch(/Authorization/)
          expect(response.headers.get("access-control-allow-headers")).toMatch(/Content-Type/)
        }
      })

      it("missing, malformed, unknown and revoked keys are 401 unauthorized with WWW-Authenticate, before counting", async () => {
        const revoked = await account(server, "pro", "revoked")
        await server.run(Operators.Operators.use((operators) => operators.revokeKey(revoked.prefix)))
        const cases: Array<Record<string, string>> = [
          {},
          { authorization: "Bearer" },
          { authorization: "Bearer not-a-key" },
          { authorization: "Basic dXNlcjpwYXNz" },
          { authorization: `Bearer ds_live_${"A".repeat(43)}` },
          { authorization: `Bearer ${revoked.secret}` }
        ]
        for (const headers of cases) {
          const response = await call(server, "GET", "/api/v1/me", { headers })
          expect(response.status, JSON.stringify(headers)).toBe(401)
          expect(response.headers.get("www-authenticate")).toBe("Bearer realm=\"dropshelf\"")
          expectEnvelope(response.body, "unauthorized")
          expect(response.body.error.reveal_code).toBeUndefined()
          expect(response.headers.get("x-ratelimit-limit")).toBeNull()
          expect(response.headers.get("access-control-allow-origin")).toBe("*")
        }
      })

      it("a 401 to a key sent without Bearer, or under another scheme, says so, quoting no credential", async () => {
        const key = await account(server, "pro", "no-scheme")
        const cases: Array<[string, string, RegExp]> = [
          ["GET", key.secret, /without its scheme: send Authorization: Bearer <API_KEY>/],
          ["GET", `  ${key.secret}`, /without its scheme/],
          ["GET", `Token ${key.secret}`, /uses the Token scheme; this API takes Authorization: Bearer <API_KEY>/],
          ["GET", "Basic dXNlcjpwYXNz", /uses the Basic scheme/],
          ["GET", `Bearer:${key.secret}`, /no Bearer key: send Authorization: Bearer <API_KEY>/]
        ]
        for (const [method, authorization, message] of cases) {
          for (const path of ["/api/v1/me", "/api/v1/holds"]) {
            const response = await call(server, method, path, { headers: { authorization } })
            expect(response.status, `${path} ${authorization}`).toBe(401)
            expect(response.body.error.message, `${path} ${authorization}`).toMatch(message)
            expect(JSON.stringify(response.body)).not.toContain(key.secret.slice(4, 20))
          }
        }
        // With nothing sent, the message asks for a key.
        expect((await call(server, "GET", "/api/v1/me")).body.error.message).toMatch(/An API key is required/)
      })

      it("reveal and hold endpoints add SIGN_IN_REQUIRED to the 401", async () => {
        const reveal = await call(server, "POST", `/api/v1/domains/${ids.regular[0]}/reveal`)
        expect(reveal.status).toBe(401)
        expect(reveal.body.error.reveal_code).toBe("SIGN_IN_REQUIRED")
        for (const [method, path] of [["POST", `/api/v1/domains/${ids.regular[0]}/hold`], ["POST", "/api/v1/holds/x/extend"], ["DELETE", "/api/v1/holds/x"]] as const) {
          const response = await call(server, method, path)
          expect(response.status).toBe(401)
          expect(response.body.error.hold_code).toBe("SIGN_IN_REQUIRED")
        }
      })

      it("every /api/v1 endpoint needs a key", async () => {
        for (const [method, path] of [
          ["GET", "/api/v1/me"],
          ["GET", "/api/v1/domains"],
          ["GET", `/api/v1/domains/${ids.regular[0]}`],
          ["GET", "/api/v1/holds"],
          ["GET", "/api/v1/openapi.json"]
        ] as const) {
          expect((await call(server, method, path)).status, path).toBe(401)
        }
      })

      it("exposes the rate-limit headers to scripts and never sets a cookie", async () => {
        const key = await account(server, "pro", "cors")
        const response = await call(server, "GET", "/api/v1/me", { key: key.secret, headers: { origin: "https://example.org" } })
        expect(response.headers.get("access-control-allow-origin")).toBe("*")
        const exposed = (response.headers.get("access-control-expose-headers") ?? "").split(/,\s*/)
        for (const name of ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"]) {
          expect(exposed).toContain(name)
        }
        for (const exchange of server.exchanges) expect(exchange.headers.get("set-cookie")).toBeNull()
      })

      it("undocumented query parameters are ignored", async () => {
        const key = await account(server, "business", "ignored")
        const plain = await call(server, "GET", "/api/v1/domains?limit=3", { key: key.secret })
        const extra = await call(server, "GET", "/api/v1/domains?limit=3&foo=bar&utm_source=x&LIMIT=9", { key: key.secret })
        expect(extra.status).toBe(200)
        expect(extra.body.data.map((row: any) => row.id)).toEqual(plain.body.data.map((row: any) => row.id))
        const me = await call(server, "GET", "/api/v1/me?whatever=1", { key: key.secret })
        expect(me.status).toBe(200)
      })
    })

    describe("GET /api/v1/me", () => {
      it("returns the key and plan record, costs one request and reports what is left after it", async () => {
        const pro = await account(server, "pro", "me")
        const first = await call(server, "GET", "/api/v1/me", { key: pro.secret })
        expect(first.status).toBe(200)
        expect(first.body).toMatchObject({
          plan: "pro",
          reveals: { limit: 500, remaining: 500, used: 0 },
          rate_limit: { limit: 60, remaining: 59 },
          sync_feed: false,
          key: { name: "me-key", prefix: pro.prefix }
        })
        expect(first.body.reveals.resets_at).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/)
        expect(first.body.key.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
        expect(JSON.stringify(first.body)).not.toContain(pro.secret)
        expect(first.headers.get("x-ratelimit-limit")).toBe("60")
        expect(first.headers.get("x-ratelimit-remaining")).toBe("59")
        const second = await call(server, "GET", "/api/v1/me", { key: pro.secret })
        if (second.headers.get("x-ratelimit-reset") === first.headers.get("x-ratelimit-reset")) {
          expect(second.body.rate_limit.remaining).toBe(58)
          expect(second.headers.get("x-ratelimit-remaining")).toBe("58")
        }
      })

      it("X-RateLimit-Reset is the Unix second at which the current wall-clock minute ends", async () => {
        const key = await account(server, "free", "reset")
        const before = Date.now()
        const response = await call(server, "GET", "/api/v1/me", { key: key.secret })
        const reset = Number(response.headers.get("x-ratelimit-reset"))
        expect(Number.isInteger(reset)).toBe(true)
        expect(reset % 60).toBe(0)
        expect(reset * 1000).toBeGreaterThan(before)
        expect(reset * 1000 - before).toBeLessThanOrEqual(61_000)
      })

      it("resolves the plan on every request: a change or a lapse applies to the next call", async () => {
        const key = await account(server, "business", "planchange")
        expect((await call(server, "GET", "/api/v1/me", { key: key.secret })).body.plan).toBe("business")
        await server.run(Operators.Operators.use((operators) => operators.setPlan(key.accountId, "lapsed")))
        const lapsed = await call(server, "GET", "/api/v1/me", { key: key.secret })
        expect(lapsed.body.plan).toBe("free")
        expect(lapsed.headers.get("x-ratelimit-limit")).toBe("20")
        const since = await call(server, "GET", "/api/v1/domains?since=2020-01-01T00:00:00Z", { key: key.secret })
        expect(since.status).toBe(402)
      })
    })

    describe("GET /api/v1/domains", () => {
      it("pages in ascending id order and follows next_cursor to the end", async () => {
        const key = await account(server, "business", "paging")
        const seen: Array<string> = []
        let path = "/api/v1/domains?limit=4"
        for (let page = 0; page < 200; page++) {
          const response = await call(server, "GET", path, { key: key.secret })
          expect(response.status).toBe(200)
          expect(response.body.has_more).toBe(response.body.next_cursor !== null)
          expect(response.body.synced_at).toMatch(/Z$/)
          seen.push(...response.body.data.map((row: any) => row.id))
          if (response.body.next_cursor === null) break
          path = `/api/v1/domains?limit=4&cursor=${encodeURIComponent(response.body.next_cursor)}`
        }
        expect([...seen].sort()).toEqual(seen.slice().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
        for (const id of [...ids.regular, ids.open, ids.featured, ids.fresh]) expect(seen).toContain(id)
      })

      it("clamps limit to 1..250 and refuses a non-integer, the empty string included", async () => {
        const key = await account(server, "business", "limits")
        expect((await call(server, "GET", "/api/v1/domains?limit=0", { key: key.secret })).body.data).toHaveLength(1)
        expect((await call(server, "GET", "/api/v1/domains?limit=-5", { key: key.secret })).body.data).toHaveLength(1)
        expect((await call(server, "GET", "/api/v1/domains?limit=100000", { key: key.secret })).status).toBe(200)
        for (const bad of ["abc", "", "1.5", "2e3"]) {
          const response = await call(server, "GET", `/api/v1/domains?limit=${bad}`, { key: key.secret })
          expect(response.status, bad).toBe(400)
          expectEnvelope(response.body, "invalid_request")
          expect(response.body.error.parameter).toBe("limit")
          expect(response.body.error.message).toContain("limit")
          expect(response.headers.get("x-ratelimit-limit")).toBe("120")
        }
      })

      it("names the parameter and what it accepts on every refused value", async () => {
        const key = await account(server, "business", "refusals")
        const cases: Array<[string, string, string]> = [
          ["spam=bad", "spam", "low, moderate"],
          ["sort=newest", "sort", "latest"],
          ["tier=featured", "tier", "open"],
          ["priceRange=cheap", "priceRange", "under-100"],
          ["featured=yes", "featured", "true, false"],
          ["ageMin=old", "ageMin", "integer"],
          ["since=yesterday", "since", "ISO 8601"],
          ["cursor=not-a-cursor", "cursor", "next_cursor"],
          ["category=no-such-category", "category", "no-such-category"],
          ["category=tech,no-such-category", "category", "carry: tech;"],
          ["source=no-such-source", "source", "carry: test;"],
          ["source=test,no-such-source", "source", "no-such-source"],
          ["spam=low&spam=moderate", "spam", "once"],
          ["q=a%00b", "q", "NUL"]
        ]
        for (const [query, parameter, accepts] of cases) {
          const response = await call(server, "GET", `/api/v1/domains?${query}`, { key: key.secret })
          expect(response.status, query).toBe(400)
          expectEnvelope(response.body, "invalid_request")
          expect(response.body.error.message, query).toContain(parameter)
          expect(response.body.error.message, query).toContain(accepts)
          expect(response.body.error.parameter, query).toBe(parameter)
        }
        for (const known of ["category=tech", "source=test"]) {
          const response = await call(server, "GET", `/api/v1/domains?${known}&limit=250`, { key: key.secret })
          expect(response.status, known).toBe(200)
          expect(response.body.data.length, known).toBeGreaterThan(10)
        }
        const both = await call(server, "GET", "/api/v1/domains?sort=latest&since=2026-01-01T00:00:00Z", { key: key.secret })
        expect(both.status).toBe(400)
        expect(both.body.error.message).toContain("sort")
        expect(both.body.error.message).toContain("since")
      })

      it("refuses a value carrying a '#' from the request line by name, as any other", async () => {
        // fetch never sends a fragment; Node's server passes one through, so speak HTTP directly.
        const key = await account(server, "business", "fragment")
        const raw = (path: string) => getAsSent(server, path, key.secret)
        expect((await raw("/api/v1/domains?limit=1&spam=low")).status).toBe(200)
        for (const [path, parameter, accepts] of [
          ["/api/v1/domains?limit=1&spam=low#top", "spam", "low, moderate"],
          ["/api/v1/domains?spam=low&limit=1#spam=bad", "limit", "limit"]
        ] as const) {
          const refused = await raw(path)
          expect(refused.status, path).toBe(400)
          expectEnvelope(refused.body, "invalid_request")
          expect(refused.body.error.parameter, path).toBe(parameter)
          expect(refused.body.error.message, path).toContain(accepts)
        }
      })

      it("refuses an edited cursor and one of another ordering", async () => {
        const key = await account(server, "business", "cursors")
        const page = await call(server, "GET", "/api/v1/domains?limit=2", { key: key.secret })
        const cursor: string = page.body.next_cursor
        expect(cursor).toBeTypeOf("string")
        const lower = await call(server, "GET", `/api/v1/domains?limit=2&cursor=${encodeURIComponent(cursor.toLowerCase())}`, { key: key.secret })
        expect(lower.status).toBe(400)
        expect(lower.body.error.parameter).toBe("cursor")
        const other = await call(server, "GET", `/api/v1/domains?limit=2&sort=latest&cursor=${encodeURIComponent(cursor)}`, { key: key.secret })
        expect(other.status).toBe(400)
        expect(other.body.error.message).toContain("sort")
      })

      it("sort=latest orders by newest discovered_at first", async () => {
        const key = await account(server, "business", "latest")
        const response = await call(server, "GET", "/api/v1/domains?sort=latest&limit=250", { key: key.secret })
        expect(response.status).toBe(200)
        const times = response.body.data.map((row: any) => Date.parse(row.discovered_at))
        expect(times).toEqual([...times].sort((a, b) => b - a))
      })

      it("since is business only: 402 upgrade_required elsewhere; on business it includes tombstones", async () => {
        const pro = await account(server, "pro", "since-pro")
        const refused = await call(server, "GET", "/api/v1/domains?since=2020-01-01T00:00:00Z", { key: pro.secret })
        expect(refused.status).toBe(402)
        expectEnvelope(refused.body, "upgrade_required")

        const gone = listing({ domain: `gone-${Math.random().toString(36).slice(2, 8)}.com` })
        await addListings(server, [gone])
        await server.run(Operators.Operators.use((operators) => operators.delist([gone.id], "sold")))
        const business = await account(server, "business", "since-biz")
        const rows: Array<any> = []
        let path = `/api/v1/domains?since=${encodeURIComponent(new Date(Date.now() - 3600_000).toISOString())}&limit=250`
        for (let page = 0; page < 50; page++) {
          const response = await call(server, "GET", path, { key: business.secret })
          expect(response.status).toBe(200)
          rows.push(...response.body.data)
          if (response.body.next_cursor === null) break
          path = `${path.replace(/&cursor=.*$/, "")}&cursor=${encodeURIComponent(response.body.next_cursor)}`
        }
        expect(rows.find((row) => row.id === gone.id)).toEqual({ id: gone.id, status: "delisted", updated_at: expect.any(String) })
        const withoutSince = await call(server, "GET", "/api/v1/domains?limit=250", { key: business.secret })
        expect(withoutSince.body.data.every((row: any) => row.status === "active")).toBe(true)
      })

      it("publishes bands, names missing metrics and withholds names by plan", async () => {
        const free = await account(server, "free", "bands")
        const response = await call(server, "GET", "/api/v1/domains?limit=250", { key: free.secret })
        const rows: Array<any> = response.body.data
        const regular = rows.find((row) => row.id === ids.regular[0])
        expect(regular.domain).toBeNull()
        expect(regular.name_disclosed).toBe(false)
        expect(regular.backlinks).toMatch(/^\d+(-\d+|\+)$/)
        const open = rows.find((row) => row.id === ids.open)
        expect(open.domain).toMatch(/^open-/)
        expect(open.name_disclosed).toBe(true)
        const bare = rows.find((row) => row.id === ids.nullMetrics)
        expect(bare.metrics_missing).toEqual(expect.arrayContaining(["age_years", "backlinks", "category", "domain_authority"]))
        expect(rows.find((row) => row.id === ids.fresh)).toBeUndefined()
      })
    })

    describe("GET /api/v1/domains/{id}", () => {
      it("returns one listing, and 404 not_found for unknown, lower-cased and delayed ids", async () => {
        const free = await account(server, "free", "get")
        const found = await call(server, "GET", `/api/v1/domains/${ids.regular[1]}`, { key: free.secret })
        expect(found.status).toBe(200)
        expect(found.body.id).toBe(ids.regular[1])
        expect(found.body.status).toBe("active")
        for (const id of ["ZZZZZZZZ", ids.regular[1]!.toLowerCase() === ids.regular[1] ? "zzzzzzzy" : ids.regular[1]!.toLowerCase(), "short", ids.fresh]) {
          const response = await call(server, "GET", `/api/v1/domains/${id}`, { key: free.secret })
          expect(response.status, id).toBe(404)
          expectEnvelope(response.body, "not_found")
          expect(response.body.error.reveal_code).toBeUndefined()
        }
        const business = await account(server, "business", "get-biz")
        expect((await call(server, "GET", `/api/v1/domains/${ids.fresh}`, { key: business.secret })).status).toBe(200)
      })

      it("answers If-None-Match with the current ETag by 304 without a body (the document's last test checks its headers)", async () => {
        const pro = await account(server, "pro", "get-conditional")
        for (const path of [`/api/v1/domains/${ids.regular[1]}`, "/api/v1/domains?limit=2", "/api/v1/me", "/api/v1/holds"]) {
          const found = await call(server, "GET", path, { key: pro.secret })
          const again = await call(server, "GET", path, { key: pro.secret, headers: { "if-none-match": found.headers.get("etag")! } })
          expect(again.status, path).toBe(304)
          expect(again.text, path).toBe("")
        }
      })
    })

    describe("POST /api/v1/domains/{id}/reveal", () => {
      it("reveals, is idempotent, and stamps availability", async () => {
        const pro = await account(server, "pro", "reveal")
        const id = ids.regular[2]!
        const first = await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: pro.secret })
        expect(first.status).toBe(200)
        expect(first.body.domain).toMatch(/^test-listing-2-/)
        expect(first.body.name_disclosed).toBe(true)
        expect(first.body.revealed_at).toMatch(/Z$/)
        expect(Date.parse(first.body.availability_checked_at)).toBeGreaterThan(Date.now() - 60_000)
        const again = await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: pro.secret })
        expect(again.body.revealed_at).toBe(first.body.revealed_at)
        const me = await call(server, "GET", "/api/v1/me", { key: pro.secret })
        expect(me.body.reveals.used).toBe(1)
        const read = await call(server, "GET", `/api/v1/domains/${id}`, { key: pro.secret })
        expect(read.body.domain).toBe(first.body.domain)
      })

      it("a reveal, whoever's and a free repeat included, moves updated_at: the listing comes through since again", async () => {
        const reader = await account(server, "business", "restamp-reader")
        const revealer = await account(server, "pro", "restamp-revealer")
        const row = listing({ domain: `restamp-${Math.random().toString(36).slice(2, 8)}.com` })
        await addListings(server, [row])
        const since = async (after: string) => {
          const found: Array<any> = []
          let path = `/api/v1/domains?limit=250&since=${encodeURIComponent(new Date(Date.parse(after) + 1).toISOString())}`
          for (let page = 0; page < 50; page++) {
            const response = await call(server, "GET", path, { key: reader.secret })
            expect(response.status).toBe(200)
            found.push(...response.body.data.filter((data: any) => data.id === row.id))
            if (response.body.next_cursor === null) return found
            path = `${path.replace(/&cursor=.*$/, "")}&cursor=${encodeURIComponent(response.body.next_cursor)}`
          }
          return found
        }
        let seen = (await call(server, "GET", `/api/v1/domains/${row.id}`, { key: reader.secret })).body
        expect(await since(seen.updated_at)).toEqual([])
        for (const turn of ["first reveal", "free repeat"]) {
          const revealed = await call(server, "POST", `/api/v1/domains/${row.id}/reveal`, { key: revealer.secret })
          expect(revealed.status, turn).toBe(200)
          const [again] = await since(seen.updated_at)
          expect(again, turn).toMatchObject({ id: row.id, availability_checked_at: revealed.body.availability_checked_at, updated_at: revealed.body.updated_at })
          expect(Date.parse(again.updated_at), turn).toBeGreaterThan(Date.parse(seen.updated_at))
          seen = again
        }
      })

      it("ignores a body it does not take, even a malformed one", async () => {
        const business = await account(server, "business", "reveal-body")
        const response = await call(server, "POST", `/api/v1/domains/${ids.open}/reveal`, { key: business.secret, body: "{not json" })
        expect(response.status).toBe(200)
      })

      it("refuses with reveal_code: FEATURED_REQUIRES_PRO, NOT_FOUND, QUOTA_EXHAUSTED", async () => {
        const free = await account(server, "free", "reveal-free")
        const featured = await call(server, "POST", `/api/v1/domains/${ids.featured}/reveal`, { key: free.secret })
        expect(featured.status).toBe(402)
        expectEnvelope(featured.body, "upgrade_required")
        expect(featured.body.error.reveal_code).toBe("FEATURED_REQUIRES_PRO")

        const missing = await call(server, "POST", "/api/v1/domains/ZZZZZZZZ/reveal", { key: free.secret })
        expect(missing.status).toBe(404)
        expectEnvelope(missing.body, "not_found")
        expect(missing.body.error.reveal_code).toBe("NOT_FOUND")

        const open = await call(server, "POST", `/api/v1/domains/${ids.open}/reveal`, { key: free.secret })
        expect(open.status).toBe(200)
        for (let i = 0; i < 10; i++) {
          const response = await call(server, "POST", `/api/v1/domains/${ids.regular[i]}/reveal`, { key: free.secret })
          expect(response.status, `reveal ${i}`).toBe(200)
        }
        const exhausted = await call(server, "POST", `/api/v1/domains/${ids.regular[10]}/reveal`, { key: free.secret })
        expect(exhausted.status).toBe(402)
        expectEnvelope(exhausted.body, "upgrade_required")
        expect(exhausted.body.error.reveal_code).toBe("QUOTA_EXHAUSTED")
        const now = new Date()
        expect(exhausted.body.error.resets_at).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString())
        const repeat = await call(server, "POST", `/api/v1/domains/${ids.regular[0]}/reveal`, { key: free.secret })
        expect(repeat.status).toBe(200)
      })

      it("concurrent reveals of one listing by one account all answer 200 with one revealed_at and charge once, at the last reveal too", async () => {
        for (const spentBefore of [0, 9]) {
          const free = await account(server, "free", `reveal-race-${spentBefore}`)
          for (let i = 0; i < spentBefore; i++) {
            expect((await call(server, "POST", `/api/v1/domains/${ids.regular[i]}/reveal`, { key: free.secret })).status).toBe(200)
          }
          const target = ids.regular[13]!
          const answers = await Promise.all(Array.from({ length: 8 }, () =>
            call(server, "POST", `/api/v1/domains/${target}/reveal`, { key: free.secret })))
          expect(answers.map((answer) => `${answer.status} ${answer.body.error?.reveal_code ?? ""}`), `after ${spentBefore} reveals`).toEqual(answers.map(() => "200 "))
          expect(new Set(answers.map((answer) => answer.body.revealed_at)).size).toBe(1)
          const me = await call(server, "GET", "/api/v1/me", { key: free.secret })
          expect(me.body.reveals.used).toBe(spentBefore + 1)
        }
      })

      it("refuses HELD_BY_OTHER with expires_at while another account holds the listing", async () => {
        const holder = await account(server, "pro", "holder-r")
        const other = await account(server, "pro", "other-r")
        const id = ids.regular[11]!
        expect((await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: holder.secret })).status).toBe(200)
        const held = await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: holder.secret })
        expect(held.status).toBe(200)
        const refused = await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: other.secret })
        expect(refused.status).toBe(403)
        expectEnvelope(refused.body, "forbidden")
        expect(refused.body.error.reveal_code).toBe("HELD_BY_OTHER")
        expect(refused.body.error.expires_at).toBe(held.body.hold.expires_at)
        expect(JSON.stringify(refused.body)).not.toContain(holder.accountId)
        const read = await call(server, "GET", `/api/v1/domains/${id}`, { key: other.secret })
        expect(read.body.hold_state).toBe("other")
        expect(read.body.domain).toBeNull()
        const business = await account(server, "business", "other-biz")
        expect((await call(server, "GET", `/api/v1/domains/${id}`, { key: business.secret })).body.domain).toBeNull()
        await call(server, "DELETE", `/api/v1/holds/${held.body.hold.id}`, { key: holder.secret })
      })
    })

    describe("holds", () => {
      it("a page read again after a reveal, a hold and its end shows each change, to its reader and to others", async () => {
        const pro = await account(server, "pro", "page-changes")
        const other = await account(server, "pro", "page-changes-other")
        const id = ids.regular[9]!
        // The same page each time: the server may answer a page it rendered recently, never a stale one.
        const rowOn = async (secret: string) => {
          const page = await call(server, "GET", "/api/v1/domains?category=tech&limit=250", { key: secret })
          expect(page.status).toBe(200)
          return page.body.data.find((row: { id: string }) => row.id === id)
        }
        for (let read = 0; read < 2; read++) {
          expect(await rowOn(pro.secret)).toMatchObject({ domain: null, name_disclosed: false, hold_state: "none", hold_expires_at: null })
        }
        const revealed = await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: pro.secret })
        expect(await rowOn(pro.secret)).toMatchObject({ domain: revealed.body.domain, name_disclosed: true, hold_state: "none" })
        const held = await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: pro.secret })
        expect(await rowOn(pro.secret)).toMatchObject({ hold_state: "mine", hold_expires_at: held.body.hold.expires_at })
        expect(await rowOn(other.secret)).toMatchObject({ domain: null, hold_state: "other", hold_expires_at: held.body.hold.expires_at })
        await call(server, "DELETE", `/api/v1/holds/${held.body.hold.id}`, { key: pro.secret })
        expect(await rowOn(pro.secret)).toMatchObject({ domain: revealed.body.domain, hold_state: "none", hold_expires_at: null })
        expect(await rowOn(other.secret)).toMatchObject({ domain: null, hold_state: "none", hold_expires_at: null })
      })

      it("hold, hold again, list, extend once, end, cooldown", async () => {
        const pro = await account(server, "pro", "holds")
        const id = ids.regular[12]!
        const required = await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: pro.secret })
        expect(required.status).toBe(403)
        expectEnvelope(required.body, "forbidden")
        expect(required.body.error.hold_code).toBe("REVEAL_REQUIRED")

        await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: pro.secret })
        const held = await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: pro.secret })
        expect(held.status).toBe(200)
        expect(held.body).toMatchObject({
          hold: { listing_id: id, can_extend: true, extend_hours: 24 },
          holds: { active: 1, hold_hours: 48, limit: 3, plan: "pro" }
        })
        expect(Date.parse(held.body.hold.expires_at) - Date.parse(held.body.hold.held_at)).toBe(48 * 3600_000)
        const again = await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: pro.secret })
        expect(again.body.hold).toEqual(held.body.hold)

        const read = await call(server, "GET", `/api/v1/domains/${id}`, { key: pro.secret })
        expect(read.body.hold_state).toBe("mine")
        expect(read.body.hold_expires_at).toBe(held.body.hold.expires_at)

        const list = await call(server, "GET", "/api/v1/holds", { key: pro.secret })
        expect(list.status).toBe(200)
        expect(list.body.data).toHaveLength(1)
        expect(list.body.data[0]).toMatchObject({ id: held.body.hold.id, listing_id: id, state: "running", ended_at: null })

        const holdId = held.body.hold.id
        const extended = await call(server, "POST", `/api/v1/holds/${holdId}/extend`, { key: pro.secret })
        expect(extended.status).toBe(200)
        expect(Date.parse(extended.body.hold.expires_at) - Date.parse(held.body.hold.expires_at)).toBe(24 * 3600_000)
        expect(extended.body.hold.can_extend).toBe(false)
        const twice = await call(server, "POST", `/api/v1/holds/${holdId}/extend`, { key: pro.secret })
        expect(twice.status).toBe(400)
        expect(twice.body.error.code).toBe("invalid_request")
        expect(twice.body.error.hold_code).toBe("ALREADY_EXTENDED")

        const stranger = await account(server, "pro", "stranger")
        for (const [method, path] of [["POST", `/api/v1/holds/${holdId}/extend`], ["DELETE", `/api/v1/holds/${holdId}`], ["POST", "/api/v1/holds/nope/extend"], ["DELETE", "/api/v1/holds/nope"], ["POST", "/api/v1/holds/h_%00/extend"], ["DELETE", "/api/v1/holds/%00"]] as const) {
          const response = await call(server, method, path, { key: stranger.secret })
          expect(response.status, `${method} ${path} ${JSON.stringify(response.body)}`).toBe(404)
          expectEnvelope(response.body, "not_found")
          // A percent-encoded path is no spelling of any resource: no route, so no hold_code.
          expect(response.body.error.hold_code).toBe(path.includes("%") ? undefined : "HOLD_NOT_FOUND")
        }

        const ended = await call(server, "DELETE", `/api/v1/holds/${holdId}`, { key: pro.secret })
        expect(ended.status).toBe(200)
        expect(ended.body.hold.state).toBe("released")
        expect(ended.body.holds.active).toBe(0)
        for (const [method, path] of [["POST", `/api/v1/holds/${holdId}/extend`], ["DELETE", `/api/v1/holds/${holdId}`]] as const) {
          const over = await call(server, method, path, { key: pro.secret })
          expect(over.status).toBe(400)
          expect(over.body.error.hold_code).toBe("HOLD_OVER")
        }
        const cooldown = await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: pro.secret })
        expect(cooldown.status).toBe(403)
        expect(cooldown.body.error.hold_code).toBe("HOLD_COOLDOWN")
        expect(Date.parse(cooldown.body.error.available_at) - Date.parse(ended.body.hold.ended_at)).toBe(30 * DAY)
        const listed = await call(server, "GET", "/api/v1/holds", { key: pro.secret })
        expect(listed.body.data[0].state).toBe("released")
      })

      it("DELETE takes an optional outcome and refuses a malformed body naming it", async () => {
        const business = await account(server, "business", "outcome")
        const id = ids.regular[13]!
        await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: business.secret })
        const held = await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: business.secret })
        expect(held.body.holds).toMatchObject({ hold_hours: 168, limit: 20, plan: "business" })
        const path = `/api/v1/holds/${held.body.hold.id}`
        const malformed = await call(server, "DELETE", path, { key: business.secret, body: "{oops" })
        expect(malformed.status).toBe(400)
        expectEnvelope(malformed.body, "invalid_request")
        expect(malformed.body.error.parameter).toBe("body")
        const badOutcome = await call(server, "DELETE", path, { key: business.secret, body: JSON.stringify({ outcome: "sold" }) })
        expect(badOutcome.status).toBe(400)
        expect(badOutcome.body.error.parameter).toBe("outcome")
        expect(badOutcome.body.error.message).toContain("released, registered")
        const wrongType = await call(server, "DELETE", path, { key: business.secret, body: "outcome=registered", headers: { "content-type": "text/plain" } })
        expect(wrongType.status).toBe(400)
        expectEnvelope(wrongType.body, "invalid_request")
        const registered = await call(server, "DELETE", path, { key: business.secret, body: JSON.stringify({ outcome: "registered" }) })
        expect(registered.status).toBe(200)
        expect(registered.body.hold.state).toBe("registered")
      })

      it("a downgrade to a plan without holds refuses the extension with HOLDS_REQUIRE_PRO; ending still works", async () => {
        const pro = await account(server, "pro", "downgrade")
        const id = ids.regular[8]!
        await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: pro.secret })
        const held = await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: pro.secret })
        expect(held.status).toBe(200)
        await server.run(Operators.Operators.use((operators) => operators.setPlan(pro.accountId, "free")))
        const extend = await call(server, "POST", `/api/v1/holds/${held.body.hold.id}/extend`, { key: pro.secret })
        expect(extend.status).toBe(402)
        expectEnvelope(extend.body, "upgrade_required")
        expect(extend.body.error.hold_code).toBe("HOLDS_REQUIRE_PRO")
        const ended = await call(server, "DELETE", `/api/v1/holds/${held.body.hold.id}`, { key: pro.secret })
        expect(ended.status).toBe(200)
        expect(ended.body.holds.plan).toBe("free")
      })

      it("refuses HOLDS_REQUIRE_PRO, HELD_BY_OTHER, HOLD_CAP_REACHED and NOT_FOUND", async () => {
        const free = await account(server, "free", "holds-free")
        await call(server, "POST", `/api/v1/domains/${ids.open}/reveal`, { key: free.secret })
        const noHolds = await call(server, "POST", `/api/v1/domains/${ids.open}/hold`, { key: free.secret })
        expect(noHolds.status).toBe(402)
        expectEnvelope(noHolds.body, "upgrade_required")
        expect(noHolds.body.error.hold_code).toBe("HOLDS_REQUIRE_PRO")

        const pro = await account(server, "pro", "cap")
        const rival = await account(server, "business", "rival")
        const targets = [ids.regular[3]!, ids.regular[4]!, ids.regular[5]!, ids.regular[6]!]
        for (const id of targets) await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: pro.secret })
        // The rival revealed before the hold: a first reveal is refused while another account holds it.
        await call(server, "POST", `/api/v1/domains/${targets[0]}/reveal`, { key: rival.secret })
        for (const id of targets.slice(0, 3)) {
          expect((await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: pro.secret })).status).toBe(200)
        }
        const cap = await call(server, "POST", `/api/v1/domains/${targets[3]}/hold`, { key: pro.secret })
        expect(cap.status).toBe(403)
        expect(cap.body.error.hold_code).toBe("HOLD_CAP_REACHED")
        expect(cap.body.error.limit).toBe(3)

        const taken = await call(server, "POST", `/api/v1/domains/${targets[0]}/hold`, { key: rival.secret })
        expect(taken.status).toBe(403)
        expect(taken.body.error.hold_code).toBe("HELD_BY_OTHER")
        expect(taken.body.error.expires_at).toMatch(/Z$/)

        const missing = await call(server, "POST", "/api/v1/domains/ZZZZZZZZ/hold", { key: pro.secret })
        expect(missing.status).toBe(404)
        expect(missing.body.error.hold_code).toBe("NOT_FOUND")
        const holds = await call(server, "GET", "/api/v1/holds", { key: pro.secret })
        for (const hold of holds.body.data) await call(server, "DELETE", `/api/v1/holds/${hold.id}`, { key: pro.secret })
      })
    })

    describe("limits", () => {
      it("caps request bodies at 16 KiB with 413 in the envelope", async () => {
        const key = await account(server, "pro", "bodycap")
        const big = JSON.stringify({ outcome: "released", padding: "x".repeat(20_000) })
        const response = await call(server, "DELETE", "/api/v1/holds/whatever", { key: key.secret, body: big })
        expect(response.status).toBe(413)
        expect(response.headers.get("content-type")).toContain("application/json")
        expect(response.body.error.parameter).toBe("body")
        expect(response.headers.get("access-control-allow-origin")).toBe("*")
        const chunk = new TextEncoder().encode("x".repeat(1024))
        const stream = new ReadableStream({
          start(controller) {
            for (let i = 0; i < 40; i++) controller.enqueue(chunk)
            controller.close()
          }
        })
        const chunked = await fetch(`${server.base}/api/v1/holds/whatever`, {
          method: "DELETE",
          headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
          body: stream,
          duplex: "half"
        } as RequestInit)
        expect(chunked.status).toBe(413)
        expect(((await chunked.json()) as any).error.parameter).toBe("body")
      })

      it("counts every keyed request, refused or not, and answers 429 rate_limited with Retry-After", async () => {
        await awayFromMinuteEdge()
        const key = await account(server, "free", "burst")
        const statuses: Array<number> = []
        for (let i = 0; i < 19; i++) {
          statuses.push((await call(server, "GET", i % 2 === 0 ? "/api/v1/me" : "/api/v1/domains?spam=bad", { key: key.secret })).status)
        }
        expect(statuses.filter((status) => status === 429)).toHaveLength(0)
        const last = await call(server, "GET", "/api/v1/me", { key: key.secret })
        expect(last.status).toBe(200)
        expect(last.body.rate_limit.remaining).toBe(0)
        expect(last.headers.get("x-ratelimit-remaining")).toBe("0")
        const over = await call(server, "GET", "/api/v1/me", { key: key.secret })
        expect(over.status).toBe(429)
        expectEnvelope(over.body, "rate_limited")
        const retryAfter = Number(over.headers.get("retry-after"))
        expect(Number.isInteger(retryAfter)).toBe(true)
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(retryAfter).toBeLessThanOrEqual(60)
        expect(over.body.error.retry_after).toBe(retryAfter)
        expect(over.headers.get("x-ratelimit-limit")).toBe("20")
        expect(over.headers.get("x-ratelimit-remaining")).toBe("0")
        expect(over.headers.get("access-control-allow-origin")).toBe("*")
        // Refused before any handler (405, no route), the 429 is the same envelope.
        const tooLarge = { body: "x".repeat(20_000), headers: { "content-type": "application/json" } }
        for (const [method, path, init] of [["DELETE", "/api/v1/holds/abc", tooLarge], ["GET", "/api/v1/nothing-here", {}]] as const) {
          const refused = await call(server, method, path, { key: key.secret, ...init })
          expect(refused.status, `${method} ${path}`).toBe(429)
          expectEnvelope(refused.body, "rate_limited")
          expect(refused.body.error.retry_after).toBe(Number(refused.headers.get("retry-after")))
        }
        const second = await account(server, "free", "burst")
        expect((await call(server, "GET", "/api/v1/me", { key: second.secret })).status).toBe(200)
      })
    })

    describe("logs", () => {
      it("writes one JSON line per request with the key prefix, never the key", async () => {
        const key = await account(server, "pro", "logged")
        const before = server.logs.length
        await call(server, "GET", `/api/v1/domains/${ids.regular[0]}?q=secretword`, { key: key.secret })
        await call(server, "POST", `/api/v1/domains/${ids.regular[7]}/reveal`, { key: key.secret })
        const lines = server.logs.slice(before)
        expect(lines).toHaveLength(2)
        expect(lines[0]).toMatchObject({ method: "GET", path: `/api/v1/domains/${ids.regular[0]}`, status: 200, key_prefix: key.prefix })
        expect(lines[0]!.duration_ms).toBeTypeOf("number")
        const all = JSON.stringify(server.logs)
        expect(all).not.toContain("secretword")
        for (const exchange of server.exchanges) {
          const domain = (exchange.body as any)?.domain
          if (typeof domain === "string" && (exchange.body as any).tier !== "open") expect(all).not.toContain(domain)
        }
        const secrets = all.match(/dsk_[0-9A-Za-z]{49}|ds_live_[A-Za-z0-9_-]{43}/g)
        expect(secrets).toBeNull()
      })
    })

    describe("OpenAPI", () => {
      let spec: any

      it("GET /api/v1/openapi.json is a valid OpenAPI 3.1 document, version 1.3.0", async () => {
        const key = await account(server, "free", "openapi")
        const response = await call(server, "GET", "/api/v1/openapi.json", { key: key.secret })
        expect(response.status).toBe(200)
        spec = response.body
        expect(spec.openapi).toMatch(/^3\.1\./)
        expect(spec.info.version).toBe("1.3.0")
        const result = await new Validator().validate(spec)
        expect(result.errors ?? []).toEqual([])
        expect(result.valid).toBe(true)
        // Lower case, as OpenAPI's own examples: the reference page reads any other spelling as Basic.
        expect(spec.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
        const operations = Object.entries<any>(spec.paths).flatMap(([path, item]) =>
          Object.entries<any>(item).map(([method, operation]) => ({ path, method, operation })))
        expect(operations.map(({ method, path }) => `${method.toUpperCase()} ${path}`).sort()).toEqual([
          "DELETE /api/v1/holds/{id}",
          "GET /",
          "GET /api/v1/domains",
          "GET /api/v1/domains/snapshot",
          "GET /api/v1/domains/{id}",
          "GET /api/v1/holds",
          "GET /api/v1/me",
          "GET /api/v1/openapi.json",
          "GET /healthz",
          "GET /readyz",
          "POST /api/v1/domains/{id}/hold",
          "POST /api/v1/domains/{id}/reveal",
          "POST /api/v1/holds/{id}/extend",
          ...WATCH_OPERATIONS
        ].sort())
        const listParams = operations.find(({ method, path }) => method === "get" && path === "/api/v1/domains")!.operation.parameters
          .filter((parameter: any) => parameter.in === "query")
        expect(listParams.map((parameter: any) => parameter.name).sort()).toEqual([
          "ageMin", "category", "checkedDays", "citabilityMin", "cursor", "featured", "limit", "priceRange", "q", "rd",
          "recommended", "rsMax", "rsMin", "since", "sort", "source", "spam", "tier", "tld"
        ])
        // What each filter keeps, in the field it reads.
        const described = Object.fromEntries(listParams.map((parameter: any) => [parameter.name, parameter.schema.description as string]))
        for (const [name, field] of Object.entries({
          rd: "referring_domains",
          rsMin: "directory_score.low",
          rsMax: "directory_score.high",
          checkedDays: "availability_checked_at",
          recommended: "linked_by",
          category: "lists the codes listings carry",
          source: "lists the codes listings carry"
        })) expect(described[name], name).toContain(field)
        // The since feed's horizon: the parameter says it, the list answers 400 naming since with oldest_since, /me names it.
        expect(described.since).toContain("oldest_since")
        const list = operations.find(({ method, path }) => method === "get" && path === "/api/v1/domains")!.operation
        expect(Object.keys(list.responses)).not.toContain("410")
        const invalid = list.responses["400"].content["application/json"].schema.$ref.replace("#/components/schemas/", "")
        expect(JSON.stringify(spec.components.schemas[invalid])).toContain("oldest_since")
        expect(JSON.stringify(spec)).not.toContain("since_too_old")
        // The spec's endpoints answer only its eight codes; the refusals of an Idempotency-Key (409, 422) need that header.
        const eight = ["invalid_request", "unauthorized", "upgrade_required", "forbidden", "not_found", "method_not_allowed", "rate_limited", "server_error"]
        const specOperations = ["account.me", "domains.list", "domains.get", "domains.reveal", "domains.hold", "holds.list", "holds.extend", "holds.end", "meta.openapi"]
        const resolved = (schema: any): any => schema.$ref === undefined ? schema : resolved(spec.components.schemas[schema.$ref.split("/").pop()])
        const codesOf = (schema: any): Array<string> => {
          const body = resolved(schema)
          const members = body.anyOf ?? body.oneOf
          if (members !== undefined) return members.flatMap(codesOf)
          const code = body.properties?.error?.properties?.code
          return code === undefined ? [] : code.const !== undefined ? [code.const] : code.enum
        }
        const answered = operations.filter(({ operation }) => specOperations.includes(operation.operationId))
        expect(answered).toHaveLength(specOperations.length)
        for (const { operation } of answered) {
          for (const [status, response] of Object.entries<any>(operation.responses)) {
            const schema = response.content?.["application/json"]?.schema
            if (schema === undefined || status.startsWith("2")) continue
            const codes = codesOf(schema)
            expect(codes.length, `${operation.operationId} ${status}`).toBeGreaterThan(0)
            const allowed = status === "409" || status === "422" ? [`idempotency_key_${status === "409" ? "in_use" : "reused"}`] : eight
            for (const code of codes) expect(allowed, `${operation.operationId} ${status}`).toContain(code)
          }
        }
        expect(spec.components.schemas.Me.properties.since_horizon_days).toBeDefined()
        // Outside /api/v1: no key, never counted, so no rate-limit headers.
        const unkeyed = ["/", "/healthz", "/readyz"]
        for (const path of unkeyed) {
          const operation = operations.find((found) => found.path === path)!.operation
          expect(operation.security ?? [], path).toEqual([])
          expect(operation.responses["200"].headers["X-RateLimit-Limit"], path).toBeUndefined()
        }
        const readyz = operations.find(({ path }) => path === "/readyz")!.operation
        expect(Object.keys(readyz.responses)).toContain("503")
        for (const { operation, path } of operations) {
          if (unkeyed.includes(path)) continue
          expect(operation.security).toEqual([{ bearer: [] }])
          for (const status of ["401", "405", "429", "500"]) expect(operation.responses[status]).toBeDefined()
          expect(operation.responses["401"].headers["WWW-Authenticate"]).toBeDefined()
          expect(operation.responses["429"].headers["Retry-After"]).toBeDefined()
          expect(operation.responses["405"].headers.Allow).toBeDefined()
          const conditional = ["account.me", "domains.list", "domains.get", "holds.list"].includes(operation.operationId)
          const headerParameters = operation.parameters.filter((parameter: any) => parameter.in === "header").map((parameter: any) => parameter.name)
          const idempotent = ["domains.reveal", "domains.hold", "holds.extend", "holds.end"].includes(operation.operationId)
          expect(headerParameters).toEqual([...(conditional ? ["If-None-Match"] : []), ...(idempotent ? ["Idempotency-Key"] : []), "X-Request-Id"])
          expect(operation.responses["304"] !== undefined).toBe(conditional)
          if (conditional) {
            expect(operation.responses["304"].content).toBeUndefined()
            expect(Object.keys(operation.responses["304"].headers)).toEqual(expect.arrayContaining(["ETag", "X-RateLimit-Remaining", "RateLimit"]))
            expect(operation.responses["200"].headers.ETag).toBeDefined()
          }
          for (const [status, response] of Object.entries<any>(operation.responses)) {
            expect(response.headers["X-Request-Id"], status).toBeDefined()
            expect(response.headers.RateLimit !== undefined, status).toBe(response.headers["X-RateLimit-Remaining"] !== undefined)
            expect(response.headers["RateLimit-Policy"] !== undefined, status).toBe(response.headers["X-RateLimit-Remaining"] !== undefined)
          }
        }
        const end = operations.find(({ method }) => method === "delete")!.operation
        expect(end.requestBody.required).toBe(false)
        const tooMany = operations.find(({ path }) => path === "/api/v1/me")!.operation.responses["429"].content["application/json"].schema
        const tooManyBody = tooMany.$ref === undefined ? tooMany : spec.components.schemas[tooMany.$ref.split("/").pop()]
        expect(tooManyBody.properties.error.required).toContain("retry_after")
        expect(tooManyBody.properties.error.properties.retry_after).toMatchObject({ type: "integer", minimum: 1, maximum: 60 })
      })

      it("every integer of a response carries its real range", () => {
        expect(spec).toBeDefined()
        const integers: Array<[string, any]> = []
        const walk = (value: any, path: string) => {
          if (typeof value !== "object" || value === null) return
          if (value.type === "integer") integers.push([path, value])
          for (const [key, inner] of Object.entries(value)) walk(inner, `${path}/${key}`)
        }
        walk(spec.components, "#/components")
        expect(integers.length).toBeGreaterThan(20)
        for (const [path, schema] of integers) {
          expect(schema.minimum, path).toBeGreaterThanOrEqual(0)
        }
        const listing = spec.components.schemas.Listing.properties
        for (const field of ["estimated_value_cents", "word_count"]) expect(listing[field].minimum, field).toBe(0)
        expect(listing.age_years.anyOf[0].minimum).toBe(0)
        for (const end of ["low", "high"]) expect(listing.directory_score.properties[end]).toMatchObject({ minimum: 0, maximum: 100 })
        const me = spec.components.schemas.Me.properties
        expect(me.rate_limit.properties.limit.minimum).toBe(1)
        expect(me.rate_limit.properties.remaining.minimum).toBe(0)
        expect(me.reveals.properties.used.minimum).toBe(0)
        const holds = spec.components.schemas.HoldResponse.properties.holds.properties
        for (const field of ["active", "hold_hours", "limit"]) expect(holds[field].minimum, field).toBe(0)
      })

      it("every response the tests received conforms to the document", () => {
        expect(spec).toBeDefined()
        const { checked, problems } = conformance(spec, server.exchanges as Array<Exchange>)
        expect(problems).toEqual([])
        expect(checked).toBeGreaterThan(100)
      })
    })
  })
}

