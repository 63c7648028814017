/**
 * Watches over HTTP, on every storage adapter: the real server with its watch worker, and a
 * real local receiver that checks each delivery with the `standardwebhooks` package, as a
 * receiver in any language would with its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, addListings, call, conformanceProblems, listing, type Running, start } from "./harness.ts"
import { eventually, receiver } from "./receiver.ts"

const json = (body: unknown) => JSON.stringify(body)

for (const adapter of adapters) {
  describe.skipIf(adapter.skip !== undefined)(`Watches on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let server: Running

    beforeAll(async () => {
      server = await start(adapter, { watchWorker: true })
    })

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    it("creates, lists, reads, changes and deletes a watch; the query is refused with GET /domains' own message", async () => {
      const pro = await account(server, "pro", "watch-crud")
      const bad = await call(server, "POST", "/api/v1/watches", { key: pro.secret, body: json({ name: "x", query: { rsMin: "high" } }) })
      const listRefusal = await call(server, "GET", "/api/v1/domains?rsMin=high", { key: pro.secret })
      expect(bad.status).toBe(400)
      expect(bad.body.error).toEqual({ code: "invalid_request", message: listRefusal.body.error.message, parameter: "query.rsMin" })
      const sorted = await call(server, "POST", "/api/v1/watches", { key: pro.secret, body: json({ name: "x", query: { sort: "latest" } }) })
      expect([sorted.status, sorted.body.error.parameter]).toEqual([400, "query.sort"])
      const created = await call(server, "POST", "/api/v1/watches", { key: pro.secret, body: json({ name: "Cheap .com", query: { tld: "com", rsMin: 40 } }) })
      expect(created.status).toBe(201)
      expect(created.body).toMatchObject({ name: "Cheap .com", query: { tld: "com", rsMin: "40" }, webhook: null, paused: false })
      const id = created.body.id
      expect((await call(server, "GET", "/api/v1/watches", { key: pro.secret })).body.data.map((w: any) => w.id)).toEqual([id])
      const patched = await call(server, "PATCH", `/api/v1/watches/${id}`, { key: pro.secret, body: json({ name: "renamed", paused: true }) })
      expect([patched.status, patched.body.name, patched.body.paused, patched.body.query]).toEqual([200, "renamed", true, { tld: "com", rsMin: "40" }])
      const hooked = await call(server, "PATCH", `/api/v1/watches/${id}`, { key: pro.secret, body: json({ webhook_url: "http://127.0.0.1:9/hook" }) })
      expect(hooked.body.webhook_secret).toMatch(/^whsec_/)
      const moved = await call(server, "PATCH", `/api/v1/watches/${id}`, { key: pro.secret, body: json({ webhook_url: "http://127.0.0.1:9/other" }) })
      expect([moved.body.webhook.url, moved.body.webhook_secret]).toEqual(["http://127.0.0.1:9/other", undefined])
      const other = await account(server, "pro", "watch-other")
      expect((await call(server, "GET", `/api/v1/watches/${id}`, { key: other.secret })).status).toBe(404)
      expect((await call(server, "DELETE", `/api/v1/watches/${id}`, { key: other.secret })).status).toBe(404)
      const deleted = await call(server, "DELETE", `/api/v1/watches/${id}`, { key: pro.secret })
      expect([deleted.status, deleted.text]).toEqual([204, ""])
      expect((await call(server, "GET", `/api/v1/watches/${id}`, { key: pro.secret })).status).toBe(404)
    })

    it("a watch body is refused naming the field: unstorable text, unknown keys and query names, wrong types", async () => {
      const pro = await account(server, "pro", "watch-input")
      const refusal = async (method: "POST" | "PATCH", path: string, body: unknown) => {
        const answer = await call(server, method, path, { key: pro.secret, body: json(body) })
        return [answer.status, answer.body.error?.code, answer.body.error?.parameter]
      }
      const refused = (parameter: string) => [400, "invalid_request", parameter]
      const created = await call(server, "POST", "/api/v1/watches", { key: pro.secret, body: json({ name: "input" }) })
      expect(created.status).toBe(201)
      const one = `/api/v1/watches/${created.body.id}`
      for (const [method, path] of [["POST", "/api/v1/watches"], ["PATCH", one]] as const) {
        expect(await refusal(method, path, { name: "nul\u0000name" })).toEqual(refused("name"))
        expect(await refusal(method, path, { name: "lone \ud800" })).toEqual(refused("name"))
        expect(await refusal(method, path, { name: "x", query: { q: "cof\u0000fee" } })).toEqual(refused("query.q"))
        expect(await refusal(method, path, { name: "x", query: { category: ["tech", "\udc00"] } })).toEqual(refused("query.category"))
        expect(await refusal(method, path, { name: "x", webhook_url: "https://hooks.example/\u0000" })).toEqual(refused("webhook_url"))
        expect(await refusal(method, path, { name: "x", query: { tldd: "io" } })).toEqual(refused("query.tldd"))
        expect(await refusal(method, path, { name: "x", query: { checkedDays: 7 } })).toEqual(refused("query.checkedDays"))
        expect(await refusal(method, path, { name: 5 })).toEqual(refused("name"))
        expect(await refusal(method, path, { name: "x", query: [] })).toEqual(refused("query"))
        expect(await refusal(method, path, { name: "x", colour: "red" })).toEqual(refused("colour"))
      }
      expect(await refusal("PATCH", one, { paused: "yes" })).toEqual(refused("paused"))
      expect(await refusal("POST", "/api/v1/watches", { name: "x", paused: true })).toEqual(refused("paused"))
      const notJson = await call(server, "POST", "/api/v1/watches", { key: pro.secret, body: "{name" })
      expect([notJson.status, notJson.body.error?.parameter]).toEqual([400, "body"])
      expect((await call(server, "GET", one, { key: pro.secret })).body).toMatchObject({ name: "input", query: {}, paused: false })
    })

    it("a watch hears nothing of listings it could read before it began when another account reveals them; a new import matches", async () => {
      const business = await account(server, "business", "watch-privacy")
      const pro = await account(server, "pro", "watch-revealer")
      const suffix = Math.random().toString(36).slice(2, 8)
      const old = [1, 2, 3, 4, 5].map((n) => listing({ domain: `weeks-old-${n}-${suffix}.com`, discoveredAt: Date.now() - 21 * 86_400_000 }))
      await addListings(server, old)
      const created = await call(server, "POST", "/api/v1/watches", { key: business.secret, body: json({ name: "everything" }) })
      expect(created.status).toBe(201)
      const matched = async () =>
        (await call(server, "GET", `/api/v1/watches/${created.body.id}/matches`, { key: business.secret })).body.data.map((m: any) => m.listing?.id)
      for (const row of old) expect((await call(server, "POST", `/api/v1/domains/${row.id}/reveal`, { key: pro.secret })).status).toBe(200)
      // The worker polls every 50 ms here: many rounds pass with nothing to record.
      expect(await eventually(async () => (await matched()).length > 0, 1_500)).toBe(false)
      expect(await matched()).toEqual([])
      const fresh = listing({ domain: `imported-after-${suffix}.com` })
      await addListings(server, [fresh])
      expect(await eventually(async () => (await matched()).length > 0)).toBe(true)
      expect(await matched()).toEqual([fresh.id])
    })

    it("over the plan's number of watches is 403 watch_limit_reached with the limit", async () => {
      const free = await account(server, "free", "watch-limit")
      expect((await call(server, "POST", "/api/v1/watches", { key: free.secret, body: json({ name: "one" }) })).status).toBe(201)
      const second = await call(server, "POST", "/api/v1/watches", { key: free.secret, body: json({ name: "two" }) })
      expect(second.status).toBe(403)
      expect(second.body.error).toMatchObject({ code: "watch_limit_reached", limit: 1 })
    })

    it("delivers a match signed per Standard Webhooks to a real receiver, and the pull endpoint has it too", async () => {
      const hook = await receiver()
      try {
        const business = await account(server, "business", "watch-hook")
        const created = await call(server, "POST", "/api/v1/watches", {
          key: business.secret,
          body: json({ name: "open names", query: { tier: "open" }, webhook_url: hook.url })
        })
        expect(created.status).toBe(201)
        const secret: string = created.body.webhook_secret
        expect(secret).toMatch(/^whsec_/)
        expect((await call(server, "GET", `/api/v1/watches/${created.body.id}`, { key: business.secret })).body.webhook_secret).toBeUndefined()
        const row = listing({ domain: `watched-${Math.random().toString(36).slice(2, 8)}.com`, tier: "open" })
        await addListings(server, [row, listing({ domain: "not-open-name.com", tier: "regular" })])
        expect(await eventually(() => hook.received.length >= 1)).toBe(true)
        const delivery = hook.received[0]!
        const event = new StandardWebhook(secret).verify(delivery.body, delivery.headers) as any
        expect(event.type).toBe("watch.match")
        expect(event.data.watch_id).toBe(created.body.id)
        expect(event.data.match.listing).toMatchObject({ id: row.id, domain: row.domain, name_disclosed: true })
        expect(delivery.headers["webhook-id"]).toBe(event.data.match.id)
        expect(delivery.headers["content-type"]).toBe("application/json")
        const matches = await call(server, "GET", `/api/v1/watches/${created.body.id}/matches`, { key: business.secret })
        expect(matches.status).toBe(200)
        expect(matches.body.data.map((m: any) => m.id)).toEqual([event.data.match.id])
        expect(matches.body.has_more).toBe(false)
        // The last page's cursor is kept to ask later for only newer matches.
        const kept: string = matches.body.next_cursor
        expect(kept).toEqual(expect.any(String))
        expect((await call(server, "GET", `/api/v1/watches/${created.body.id}/matches?cursor=${kept}`, { key: business.secret })).body)
          .toEqual({ data: [], next_cursor: null, has_more: false })
        expect(await eventually(() => false, 300)).toBe(false)
        expect(hook.received.length).toBe(1)
        const attempts = await call(server, "GET", `/api/v1/watches/${created.body.id}/deliveries`, { key: business.secret })
        expect(attempts.body.data).toMatchObject([{ event_id: event.data.match.id, attempt: 1, status_code: 204, error: null }])
        // Sent again on request: the same webhook-id, so the receiver can tell it already has it.
        const retried = await call(server, "POST", `/api/v1/watches/${created.body.id}/deliveries/${event.data.match.id}/retry`, { key: business.secret })
        expect([retried.status, retried.body.state]).toEqual([202, "pending"])
        expect(await eventually(() => hook.received.length >= 2)).toBe(true)
        expect(hook.received[1]!.headers["webhook-id"]).toBe(event.data.match.id)
        const missing = await call(server, "POST", `/api/v1/watches/${created.body.id}/deliveries/msg_nosuch/retry`, { key: business.secret })
        expect(missing.status).toBe(404)
      } finally {
        await hook.close()
      }
    })

    it("a delivered match discloses no name the account could not read; once revealed, the pull endpoint shows it", async () => {
      const hook = await receiver()
      try {
        const pro = await account(server, "pro", "watch-disclosure")
        const created = await call(server, "POST", "/api/v1/watches", { key: pro.secret, body: json({ name: "regular", webhook_url: hook.url }) })
        const row = listing({ domain: `hidden-${Math.random().toString(36).slice(2, 8)}.com`, tier: "regular" })
        // Discovered 12 hours ago: inside a pro account's one-day delay, so not yet readable to it.
        const fresh = listing({ domain: `fresh-${Math.random().toString(36).slice(2, 8)}.com`, discoveredAt: Date.now() - 12 * 3_600_000 })
        await addListings(server, [row, fresh])
        expect(await eventually(() => hook.received.length >= 1)).toBe(true)
        expect(await eventually(() => hook.received.length > 1, 300)).toBe(false)
        const event = new StandardWebhook(created.body.webhook_secret).verify(hook.received[0]!.body, hook.received[0]!.headers) as any
        expect(event.data.match.listing).toMatchObject({ id: row.id, domain: null, name_disclosed: false })
        expect(hook.received[0]!.body).not.toContain(row.domain)
        expect((await call(server, "POST", `/api/v1/domains/${row.id}/reveal`, { key: pro.secret })).status).toBe(200)
        const matches = await call(server, "GET", `/api/v1/watches/${created.body.id}/matches`, { key: pro.secret })
        expect(matches.body.data.map((m: any) => [m.listing.id, m.listing.domain])).toEqual([[row.id, row.domain]])
      } finally {
        await hook.close()
      }
    })

    // On one adapter: it waits out the retry schedule, which is the core's and not the storage's.
    if (adapter.name === "memory") it("a receiver that fails then succeeds gets the event again after the schedule's 5 s, with the same webhook-id", async () => {
      const hook = await receiver((_request, index) => (index === 0 ? 503 : 204))
      try {
        const business = await account(server, "business", "watch-retry")
        const created = await call(server, "POST", "/api/v1/watches", { key: business.secret, body: json({ name: "all", webhook_url: hook.url }) })
        await addListings(server, [listing({ domain: `retry-${Math.random().toString(36).slice(2, 8)}.com` })])
        expect(await eventually(() => hook.received.length >= 2, 10_000)).toBe(true)
        const [first, second] = hook.received
        expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"])
        expect(Number(second!.headers["webhook-timestamp"]) - Number(first!.headers["webhook-timestamp"])).toBeGreaterThanOrEqual(4)
        new StandardWebhook(created.body.webhook_secret).verify(second!.body, second!.headers)
        const attempts = await call(server, "GET", `/api/v1/watches/${created.body.id}/deliveries`, { key: business.secret })
        expect(attempts.body.data.map((a: any) => [a.attempt, a.status_code])).toEqual([[2, 204], [1, 503]])
      } finally {
        await hook.close()
      }
    }, 20_000)

    it("a receiver that answers 410 Gone disables the webhook, with a reason the owner reads", async () => {
      const hook = await receiver(() => 410)
      try {
        const business = await account(server, "business", "watch-gone")
        const created = await call(server, "POST", "/api/v1/watches", { key: business.secret, body: json({ name: "all", webhook_url: hook.url }) })
        await addListings(server, [listing({ domain: `gone-${Math.random().toString(36).slice(2, 8)}.com` })])
        expect(await eventually(() => hook.received.length >= 1)).toBe(true)
        let watch: any
        expect(await eventually(() => false, 200)).toBe(false)
        watch = (await call(server, "GET", `/api/v1/watches/${created.body.id}`, { key: business.secret })).body
        expect(watch.webhook.state).toBe("disabled")
        expect(watch.webhook.state_reason).toMatch(/410/)
        await addListings(server, [listing({ domain: `gone-${Math.random().toString(36).slice(2, 8)}.com` })])
        expect(await eventually(() => hook.received.length > 1, 500)).toBe(false)
        const matches = await call(server, "GET", `/api/v1/watches/${created.body.id}/matches`, { key: business.secret })
        expect(matches.body.data.length).toBe(2)
      } finally {
        await hook.close()
      }
    })

    it("rotate-secret: for 24 hours both secrets verify a delivery", async () => {
      const hook = await receiver()
      try {
        const business = await account(server, "business", "watch-rotate")
        const created = await call(server, "POST", "/api/v1/watches", { key: business.secret, body: json({ name: "all", webhook_url: hook.url }) })
        const rotated = await call(server, "POST", `/api/v1/watches/${created.body.id}/rotate-secret`, { key: business.secret })
        expect(rotated.status).toBe(200)
        expect(rotated.body.webhook_secret).not.toBe(created.body.webhook_secret)
        await addListings(server, [listing({ domain: `rotate-${Math.random().toString(36).slice(2, 8)}.com` })])
        expect(await eventually(() => hook.received.length >= 1)).toBe(true)
        const delivery = hook.received[0]!
        new StandardWebhook(created.body.webhook_secret).verify(delivery.body, delivery.headers)
        new StandardWebhook(rotated.body.webhook_secret).verify(delivery.body, delivery.headers)
        const noHook = await call(server, "POST", "/api/v1/watches", { key: business.secret, body: json({ name: "pull only" }) })
        const refused = await call(server, "POST", `/api/v1/watches/${noHook.body.id}/rotate-secret`, { key: business.secret })
        expect([refused.status, refused.body.error.parameter]).toEqual([400, "webhook_url"])
      } finally {
        await hook.close()
      }
    })

    it("the served document describes every watch operation, and every answer here conforms to it", async () => {
      const pro = await account(server, "pro", "watch-openapi")
      const spec = (await call(server, "GET", "/api/v1/openapi.json", { key: pro.secret })).body
      expect(spec.paths["/api/v1/watches"].post.responses["201"]).toBeDefined()
      expect(spec.paths["/api/v1/watches"].post.responses["403"]).toBeDefined()
      expect(spec.paths["/api/v1/watches/{id}"].delete.responses["204"]).toBeDefined()
      expect(conformanceProblems(spec, server.exchanges)).toEqual([])
    })
  })
}
