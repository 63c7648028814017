/**
 * Black-box tests of conditional reads (`ETag`, `If-None-Match`, 304) and the standard headers
 * (`RateLimit-Policy` and `RateLimit`, `Link`, `X-Request-Id`), on every storage adapter.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Operators } from "@dropshelf/core"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, addListings, awayFromMinuteEdge, call, listing, type Running, start } from "./harness.ts"
import { rawExchange } from "./rawHttp.ts"

const DAY = 86_400_000
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const remainingOf = (response: { readonly headers: Headers }) => Number(response.headers.get("x-ratelimit-remaining"))

for (const adapter of adapters) {
  describe.skipIf(adapter.skip !== undefined)(`conditional reads and standard headers on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let server: Running
    /** A word only this run's listings carry, so that a page holds only them. */
    const word = `cond${Math.random().toString(36).slice(2, 8)}`
    const rows = Array.from({ length: 5 }, (_, i) =>
      listing({ domain: `conditional-${i}-${Math.random().toString(36).slice(2, 8)}.com`, tags: [word] }))
    const page = `/api/v1/domains?q=${word}&limit=10`

    beforeAll(async () => {
      server = await start(adapter)
      await addListings(server, rows)
    })

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    const get = (path: string, key: string, headers: Record<string, string> = {}) => call(server, "GET", path, { key, headers })

    /** The tag of `path` for `key` now. */
    const tagOf = async (path: string, key: string) => {
      const response = await get(path, key)
      expect(response.status, path).toBe(200)
      const tag = response.headers.get("etag")
      expect(tag, path).toMatch(/^(W\/)?"[A-Za-z0-9_-]+"$/)
      return tag!
    }

    describe("ETag and If-None-Match", () => {
      it("the four reads carry an ETag; a matching If-None-Match is 304 without a body, and is not counted", async () => {
        await awayFromMinuteEdge(15)
        const key = await account(server, "pro", "conditional")
        for (const path of [page, `/api/v1/domains/${rows[0]!.id}`, "/api/v1/holds", "/api/v1/me"]) {
          const first = await get(path, key.secret)
          expect(first.status, path).toBe(200)
          const tag = first.headers.get("etag")!
          expect(tag, path).toMatch(path === page ? /^W\/"[A-Za-z0-9_-]{43}"$/ : /^"[A-Za-z0-9_-]{43}"$/)
          const again = await get(path, key.secret, { "if-none-match": tag })
          expect(again.status, path).toBe(304)
          expect(again.text, path).toBe("")
          expect(again.headers.get("etag"), path).toBe(tag)
          expect(again.headers.get("content-type"), path).toBeNull()
          // Not counted: the same rate-limit headers as the answer before it, in both spellings.
          for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit-policy"]) {
            expect(again.headers.get(name), `${path} ${name}`).toBe(first.headers.get(name))
          }
          expect(again.headers.get("ratelimit"), path).toMatch(new RegExp(`^"per-minute";r=${remainingOf(first)};t=\\d+$`))
          expect(again.headers.get("access-control-allow-origin")).toBe("*")
          // The next counted request is the next one down.
          const counted = await get(path, key.secret)
          expect(counted.status, path).toBe(200)
          expect(remainingOf(counted), path).toBe(remainingOf(first) - 1)
        }
      })

      it("a stale tag is answered 200 as usual, with the current tag, and counted", async () => {
        await awayFromMinuteEdge(15)
        const key = await account(server, "pro", "stale")
        const path = `/api/v1/domains/${rows[1]!.id}`
        const first = await get(path, key.secret)
        const stale = await get(path, key.secret, { "if-none-match": "\"not-the-tag\"" })
        expect(stale.status).toBe(200)
        expect(stale.body.id).toBe(rows[1]!.id)
        expect(stale.headers.get("etag")).toBe(first.headers.get("etag"))
        expect(remainingOf(stale)).toBe(remainingOf(first) - 1)
      })

      it("reads If-None-Match as RFC 9110 section 13.1.2 says: *, lists, weak comparison, whitespace", async () => {
        const key = await account(server, "business", "forms")
        const path = `/api/v1/domains/${rows[2]!.id}`
        const strong = await tagOf(path, key.secret)
        const weak = await tagOf(page, key.secret)
        const opaque = (tag: string) => tag.replace(/^W\//, "")
        const cases: Array<[string, string, string, number]> = [
          ["*", path, "*", 304],
          ["the tag alone", path, strong, 304],
          ["the strong tag sent weak", path, `W/${strong}`, 304],
          ["the weak page tag sent strong", page, opaque(weak), 304],
          ["a list holding the tag", path, `"a", ${strong}, "b"`, 304],
          ["a list without spaces", path, `"a",${strong}`, 304],
          ["a list with tabs and spaces", path, `"a" ,\t ${strong}\t`, 304],
          ["a list of other tags", path, `"a", W/"b", "${opaque(strong).slice(1, -2)}"`, 200],
          ["the tag unquoted", path, opaque(strong).slice(1, -1), 200],
          ["another resource's tag", path, weak, 200],
          ["an empty value", path, "", 200]
        ]
        for (const [name, target, ifNoneMatch, status] of cases) {
          const response = await get(target, key.secret, { "if-none-match": ifNoneMatch })
          expect(response.status, name).toBe(status)
          if (status === 200) expect(response.body, name).toBeTypeOf("object")
        }
        // `*` matches only a current representation: a listing the caller cannot read is still 404.
        expect((await get("/api/v1/domains/ZZZZZZZZ", key.secret, { "if-none-match": "*" })).status).toBe(404)
      })

      it("HEAD answers as GET does, without a body, counts, and is 304 on a matching tag", async () => {
        await awayFromMinuteEdge(15)
        const key = await account(server, "pro", "head")
        const path = `/api/v1/domains/${rows[3]!.id}`
        const got = await get(path, key.secret)
        const head = await call(server, "HEAD", path, { key: key.secret })
        expect(head.status).toBe(200)
        expect(head.text).toBe("")
        expect(head.headers.get("etag")).toBe(got.headers.get("etag"))
        expect(head.headers.get("content-type")).toBe(got.headers.get("content-type"))
        expect(remainingOf(head)).toBe(remainingOf(got) - 1)
        const conditional = await call(server, "HEAD", path, { key: key.secret, headers: { "if-none-match": got.headers.get("etag")! } })
        expect(conditional.status).toBe(304)
        expect(remainingOf(conditional)).toBe(remainingOf(head))
      })

      it("a key whose window is spent gets the 429, conditional or not", async () => {
        await awayFromMinuteEdge(15)
        const key = await account(server, "free", "spent")
        const path = `/api/v1/domains/${rows[4]!.id}`
        const tag = await tagOf(path, key.secret)
        for (let i = 1; i < 20; i++) await get("/api/v1/holds", key.secret)
        const over = await get(path, key.secret, { "if-none-match": tag })
        expect(over.status).toBe(429)
        expect(over.body.error.code).toBe("rate_limited")
        expect(over.headers.get("retry-after")).toMatch(/^\d+$/)
        expect(over.headers.get("ratelimit")).toBe(`"per-minute";r=0;t=${over.headers.get("retry-after")}`)
      })
    })

    describe("each change to what a caller reads moves its tag, and only its own", () => {
      it("a reveal moves the tags of the page, the listing and /me", async () => {
        const key = await account(server, "pro", "reveal-moves")
        const path = `/api/v1/domains/${rows[0]!.id}`
        const before = await Promise.all([tagOf(page, key.secret), tagOf(path, key.secret)])
        const me = await get("/api/v1/me", key.secret)
        const revealed = await call(server, "POST", `${path}/reveal`, { key: key.secret })
        expect(revealed.status).toBe(200)
        expect((await get(page, key.secret, { "if-none-match": before[0] })).status).toBe(200)
        expect((await get(path, key.secret, { "if-none-match": before[1] })).status).toBe(200)
        // /me tells the reveals used (and what this request left): another body, another tag.
        expect((await get("/api/v1/me", key.secret, { "if-none-match": me.headers.get("etag")! })).status).toBe(200)
      })

      it("a hold moves the holder's tags and another reader's, and an end moves them again", async () => {
        const holder = await account(server, "pro", "holder")
        const other = await account(server, "pro", "other-reader")
        const path = `/api/v1/domains/${rows[1]!.id}`
        await call(server, "POST", `${path}/reveal`, { key: holder.secret })
        await call(server, "POST", `${path}/reveal`, { key: other.secret })
        const tags = async () => ({
          holderPage: await tagOf(page, holder.secret),
          holderListing: await tagOf(path, holder.secret),
          holds: await tagOf("/api/v1/holds", holder.secret),
          otherPage: await tagOf(page, other.secret),
          otherListing: await tagOf(path, other.secret)
        })
        const before = await tags()
        const held = await call(server, "POST", `${path}/hold`, { key: holder.secret })
        expect(held.status).toBe(200)
        const during = await tags()
        for (const name of Object.keys(before) as Array<keyof typeof before>) expect(during[name], name).not.toBe(before[name])
        // Nothing changed since: the same tags, and 304s.
        expect((await get(path, other.secret, { "if-none-match": during.otherListing })).status).toBe(304)
        expect((await call(server, "DELETE", `/api/v1/holds/${held.body.hold.id}`, { key: holder.secret })).status).toBe(200)
        const after = await tags()
        for (const name of Object.keys(before) as Array<keyof typeof before>) expect(after[name], name).not.toBe(during[name])
      })

      it("a plan change moves /me's tag and, where it discloses names, the listing's", async () => {
        const key = await account(server, "pro", "plan-moves")
        const path = `/api/v1/domains/${rows[2]!.id}`
        const [me, one] = [await get("/api/v1/me", key.secret), await tagOf(path, key.secret)]
        await server.run(Operators.Operators.use((operators) => operators.setPlan(key.accountId, "business")))
        const meAfter = await get("/api/v1/me", key.secret, { "if-none-match": me.headers.get("etag")! })
        expect(meAfter.status).toBe(200)
        expect(meAfter.body.plan).toBe("business")
        const oneAfter = await get(path, key.secret, { "if-none-match": one })
        expect(oneAfter.status).toBe(200)
        expect(oneAfter.body.name_disclosed).toBe(true)
      })

      it("a listing update moves the tags of the listing and of the page holding it", async () => {
        const key = await account(server, "pro", "update-moves")
        const path = `/api/v1/domains/${rows[3]!.id}`
        const [pageTag, listingTag] = [await tagOf(page, key.secret), await tagOf(path, key.secret)]
        await addListings(server, [{ ...rows[3]!, estimatedValueCents: 987_600 }])
        expect((await get(page, key.secret, { "if-none-match": pageTag })).status).toBe(200)
        const updated = await get(path, key.secret, { "if-none-match": listingTag })
        expect(updated.status).toBe(200)
        expect(updated.body.estimated_value_cents).toBe(987_600)
      })

      it("a listing passing the plan's access delay moves the tag of the page it joins", async () => {
        const horizon = `hz${Math.random().toString(36).slice(2, 8)}`
        const visible = listing({ domain: `horizon-a-${horizon}.com`, tags: [horizon] })
        // A pro plan sees listings a day old: this one, in about a second and a half.
        const soon = listing({ domain: `horizon-b-${horizon}.com`, tags: [horizon], discoveredAt: Date.now() - DAY + 1_500 })
        await addListings(server, [visible, soon])
        const key = await account(server, "pro", "horizon")
        const path = `/api/v1/domains?q=${horizon}`
        const before = await get(path, key.secret)
        expect(before.body.data.map((row: any) => row.id)).toEqual([visible.id])
        await new Promise((resolve) => setTimeout(resolve, 2_000))
        const after = await get(path, key.secret, { "if-none-match": before.headers.get("etag")! })
        expect(after.status).toBe(200)
        expect(after.body.data.map((row: any) => row.id).sort()).toEqual([visible.id, soon.id].sort())
      })

      it("a counted request moves /me's tag: its body tells what is left", async () => {
        await awayFromMinuteEdge(15)
        const key = await account(server, "pro", "me-moves")
        const me = await get("/api/v1/me", key.secret)
        expect((await get("/api/v1/me", key.secret, { "if-none-match": me.headers.get("etag")! })).status).toBe(304)
        await get("/api/v1/holds", key.secret)
        const after = await get("/api/v1/me", key.secret, { "if-none-match": me.headers.get("etag")! })
        expect(after.status).toBe(200)
        // Counted, and the body says so.
        expect(after.body.rate_limit.remaining).toBe(me.body.rate_limit.remaining - 2)
        expect(remainingOf(after)).toBe(after.body.rate_limit.remaining)
        // The tag sent back with it matches the next read while nothing else is counted.
        expect((await get("/api/v1/me", key.secret, { "if-none-match": after.headers.get("etag")! })).status).toBe(304)
      })

      it("two accounts reading different bodies of one listing get different tags, and neither's tag is the other's 304", async () => {
        const revealer = await account(server, "pro", "reads-name")
        const masked = await account(server, "pro", "reads-mask")
        const path = `/api/v1/domains/${rows[4]!.id}`
        await call(server, "POST", `${path}/reveal`, { key: revealer.secret })
        const [named, hidden] = [await get(path, revealer.secret), await get(path, masked.secret)]
        expect(named.body.name_disclosed).toBe(true)
        expect(hidden.body.name_disclosed).toBe(false)
        expect(named.headers.get("etag")).not.toBe(hidden.headers.get("etag"))
        expect((await get(path, masked.secret, { "if-none-match": named.headers.get("etag")! })).status).toBe(200)
        expect((await get(path, revealer.secret, { "if-none-match": hidden.headers.get("etag")! })).status).toBe(200)
        const [namedPage, hiddenPage] = [await tagOf(page, revealer.secret), await tagOf(page, masked.secret)]
        expect(namedPage).not.toBe(hiddenPage)
      })
    })

    describe("standard headers", () => {
      it("RateLimit-Policy and RateLimit say what X-RateLimit-* say, as IETF structured fields", async () => {
        await awayFromMinuteEdge(15)
        const key = await account(server, "pro", "ietf")
        const response = await get("/api/v1/me", key.secret)
        expect(response.headers.get("ratelimit-policy")).toBe("\"per-minute\";q=60;w=60")
        const [, remaining, seconds] = /^"per-minute";r=(\d+);t=(\d+)$/.exec(response.headers.get("ratelimit") ?? "") ?? []
        expect(Number(remaining)).toBe(remainingOf(response))
        const reset = Number(response.headers.get("x-ratelimit-reset"))
        expect(Number(seconds)).toBeGreaterThanOrEqual(1)
        expect(Number(seconds)).toBeLessThanOrEqual(60)
        expect(Math.abs(Date.now() / 1000 + Number(seconds) - reset)).toBeLessThanOrEqual(2)
        // The answers given before any handler carry them too.
        const refused = await call(server, "PUT", "/api/v1/me", { key: key.secret })
        expect(refused.status).toBe(405)
        expect(refused.headers.get("ratelimit")).toMatch(/^"per-minute";r=\d+;t=\d+$/)
        expect(refused.headers.get("ratelimit-policy")).toBe("\"per-minute\";q=60;w=60")
      })

      it("Link points to the next page with the same query, and is absent on the last", async () => {
        const key = await account(server, "business", "link")
        const base = `/api/v1/domains?q=${word}&limit=2&utm=x%20y`
        const seen: Array<string> = []
        let target: string | undefined = base
        let pages = 0
        while (target !== undefined) {
          const response = await get(target, key.secret)
          expect(response.status, target).toBe(200)
          seen.push(...response.body.data.map((row: any) => row.id))
          const link = response.headers.get("link")
          if (response.body.next_cursor === null) {
            expect(link, target).toBeNull()
            target = undefined
          } else {
            const [, reference] = /^<([^>]+)>; rel="next"$/.exec(link ?? "") ?? []
            expect(reference, String(link)).toBeDefined()
            const next: URL = new URL(reference!, `${server.base}${target}`)
            expect(next.origin).toBe(server.base)
            expect(next.pathname).toBe("/api/v1/domains")
            expect(next.searchParams.get("cursor")).toBe(response.body.next_cursor)
            expect(next.searchParams.getAll("cursor")).toHaveLength(1)
            expect(next.searchParams.get("q")).toBe(word)
            expect(next.searchParams.get("limit")).toBe("2")
            expect(next.searchParams.get("utm")).toBe("x y")
            target = `${next.pathname}${next.search}`
          }
          pages++
        }
        expect(pages).toBe(3)
        expect(seen.sort()).toEqual(rows.map((row) => row.id).sort())
      })

      it("X-Request-Id is on every response: the caller's when sane, else a new one, and in the log line", async () => {
        const key = await account(server, "pro", "request-id")
        const sane = `trace-${Math.random().toString(36).slice(2)}:A/b+c=`
        const answers = [
          await call(server, "GET", "/api/v1/me", { key: key.secret, headers: { "x-request-id": sane } }),
          await call(server, "GET", "/api/v1/nowhere", { key: key.secret, headers: { "x-request-id": sane } }),
          await call(server, "PUT", "/api/v1/me", { key: key.secret, headers: { "x-request-id": sane } }),
          await call(server, "GET", "/api/v1/me", { headers: { "x-request-id": sane } }),
          await call(server, "DELETE", "/api/v1/holds/x", { key: key.secret, body: "x".repeat(20_000), headers: { "x-request-id": sane } }),
          await call(server, "GET", "/healthz", { headers: { "x-request-id": sane } }),
          await call(server, "OPTIONS", "/api/v1/me", {
            headers: { "x-request-id": sane, origin: "https://example.org", "access-control-request-method": "GET" }
          })
        ]
        expect(answers.map((answer) => answer.status)).toEqual([200, 404, 405, 401, 413, 200, 204])
        for (const answer of answers) expect(answer.headers.get("x-request-id")).toBe(sane)
        const logged = server.logs.filter((entry) => entry.request_id === sane).map((entry) => `${entry.method} ${entry.status}`)
        expect(logged).toEqual(["GET 200", "GET 404", "PUT 405", "GET 401", "DELETE 413", "GET 200"])
        for (const insane of ["", "x".repeat(129), "has space", "semi;colon", "é"]) {
          const response = await rawExchange(
            server.base,
            `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${key.secret}\r\nX-Request-Id: ${insane}\r\n\r\n`
          )
          expect(response?.status, insane).toBe(200)
          expect(response?.headers["x-request-id"], insane).toMatch(UUID)
        }
        const generated = [await call(server, "GET", "/api/v1/me", { key: key.secret }), await call(server, "GET", "/api/v1/me", { key: key.secret })]
          .map((answer) => answer.headers.get("x-request-id"))
        expect(generated[0]).toMatch(UUID)
        expect(generated[1]).toMatch(UUID)
        expect(generated[0]).not.toBe(generated[1])
        expect(server.logs.some((entry) => entry.request_id === generated[0])).toBe(true)
      })

      it("X-Request-Id is also on the 429 of a spent window, /docs, /mcp and the answer to broken HTTP", async () => {
        await awayFromMinuteEdge(15)
        const key = await account(server, "free", "request-id-more")
        for (let i = 0; i < 20; i++) await get("/api/v1/holds", key.secret)
        const limited = await call(server, "GET", "/api/v1/holds", { key: key.secret, headers: { "x-request-id": "limited-1" } })
        expect(limited.status).toBe(429)
        expect(limited.headers.get("x-request-id")).toBe("limited-1")
        expect((await call(server, "GET", "/docs", { headers: { "x-request-id": "docs-1" } })).headers.get("x-request-id")).toBe("docs-1")
        const mcp = await call(server, "POST", "/mcp", {
          key: (await account(server, "pro", "request-id-mcp")).secret,
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
          headers: { accept: "application/json, text/event-stream", "x-request-id": "mcp-1" }
        })
        expect(mcp.status).toBe(200)
        expect(mcp.headers.get("x-request-id")).toBe("mcp-1")
        expect(mcp.headers.get("ratelimit")).toMatch(/^"per-minute";r=\d+;t=\d+$/)
        expect(mcp.headers.get("ratelimit-policy")).toBe("\"per-minute\";q=60;w=60")
        const broken = await rawExchange(server.base, "NOT HTTP AT ALL\r\n\r\n")
        expect(broken?.status).toBe(400)
        expect(broken?.headers["x-request-id"]).toMatch(UUID)
        const connect = await rawExchange(server.base, "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\nX-Request-Id: tunnel-1\r\n\r\n")
        expect(connect?.status).toBe(404)
        expect(connect?.headers["x-request-id"]).toBe("tunnel-1")
      })

      it("a browser may send If-None-Match and X-Request-Id and read every new header", async () => {
        const preflight = await call(server, "OPTIONS", "/api/v1/domains", {
          headers: { origin: "https://example.org", "access-control-request-method": "GET", "access-control-request-headers": "if-none-match, x-request-id" }
        })
        expect(preflight.status).toBe(204)
        const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/,\s*/)
        expect(allowed).toEqual(expect.arrayContaining(["if-none-match", "x-request-id"]))
        const key = await account(server, "pro", "expose")
        const response = await get(page, key.secret, { origin: "https://example.org" })
        const exposed = (response.headers.get("access-control-expose-headers") ?? "").split(/,\s*/)
        expect(exposed).toEqual(expect.arrayContaining(["RateLimit-Policy", "RateLimit", "ETag", "Link", "X-Request-Id"]))
      })
    })
  })
}
