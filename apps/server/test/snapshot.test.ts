/**
 * Black-box tests of the bulk snapshot (`GET /api/v1/domains/snapshot`) on every storage
 * adapter: what it carries and how it ends, gzip, plan gating, the hourly allowance, and that a
 * write made while it streams is seen whole or not at all, and reaches the since feed from the
 * snapshot's watermark.
 */
import { gunzipSync } from "node:zlib"
import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Dropshelf, DropshelfError } from "@dropshelf/client"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, addListings, call, listing, type Running, start } from "./harness.ts"

const SNAPSHOT = "/api/v1/domains/snapshot"

/** The body of GET `path` as raw bytes, undecoded, with its status and headers. */
const rawGet = (server: Running, path: string, headers: Record<string, string>) =>
  new Promise<{ status: number; headers: Record<string, string | Array<string> | undefined>; body: Buffer }>((resolve, reject) => {
    const req = request(`${server.base}${path}`, { headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end()
  })

const linesOf = (text: string) => text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line))

for (const adapter of adapters) {
  describe.skipIf(adapter.skip !== undefined)(`bulk snapshot on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let server: Running
    const rows = Array.from({ length: 2_300 }, (_, i) => listing({ domain: `snapshot-${i}-${Math.random().toString(36).slice(2, 8)}.com` }))
    const drafts = [listing({ domain: "snapshot-draft.com", status: "draft" })]

    beforeAll(async () => {
      server = await start(adapter)
      await addListings(server, [...rows, ...drafts])
    }, 120_000)

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    it("streams every listing the key can read, as a page shows it, then the watermark and the count", async () => {
      const key = await account(server, "business", "snapshot-all")
      const response = await rawGet(server, SNAPSHOT, { authorization: `Bearer ${key.secret}` })
      expect(response.status).toBe(200)
      expect(response.headers["content-type"]).toMatch(/^application\/x-ndjson/)
      expect(response.headers["content-encoding"]).toBeUndefined()
      const lines = linesOf(response.body.toString("utf8"))
      const end = lines.pop()
      expect(Object.keys(end).sort()).toEqual(["listings", "synced_at"])
      expect(end.listings).toBe(rows.length)
      expect(Date.parse(end.synced_at)).toBeLessThanOrEqual(Date.now())
      expect(lines.map((line) => line.id).sort()).toEqual(rows.map((row) => row.id).sort())
      // The same JSON as the single read gives the same key.
      for (const line of lines.slice(0, 5)) {
        const single = await call(server, "GET", `/api/v1/domains/${line.id}`, { key: key.secret })
        expect(line).toEqual(single.body)
      }
    })

    it("is gzip-compressed when Accept-Encoding asks, with the same lines", async () => {
      const key = await account(server, "business", "snapshot-gzip")
      const plain = await rawGet(server, SNAPSHOT, { authorization: `Bearer ${key.secret}` })
      const zipped = await rawGet(server, SNAPSHOT, { authorization: `Bearer ${key.secret}`, "accept-encoding": "br;q=1, gzip;q=0.8" })
      expect(zipped.status).toBe(200)
      expect(zipped.headers["content-encoding"]).toBe("gzip")
      expect(zipped.body.length).toBeLessThan(plain.body.length / 3)
      const sorted = (text: string) => linesOf(text).slice(0, -1).sort((a, b) => (a.id < b.id ? -1 : 1))
      expect(sorted(gunzipSync(zipped.body).toString("utf8"))).toEqual(sorted(plain.body.toString("utf8")))
      const refused = await rawGet(server, SNAPSHOT, { authorization: `Bearer ${key.secret}`, "accept-encoding": "gzip;q=0, identity" })
      expect(refused.headers["content-encoding"]).toBeUndefined()
    })

    it("the typed client iterates the snapshot, then knows its synced_at; a refusal rejects with the envelope", async () => {
      const key = await account(server, "business", "snapshot-client")
      const client = new Dropshelf({ baseUrl: server.base, apiKey: key.secret })
      const snapshot = client.listings.snapshot()
      const ids: Array<string> = []
      for await (const listing of snapshot) ids.push(listing.id)
      expect(ids.sort()).toEqual(rows.map((row) => row.id).sort())
      expect(snapshot.syncedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/)
      const pro = await account(server, "pro", "snapshot-client-pro")
      const refused = new Dropshelf({ baseUrl: server.base, apiKey: pro.secret }).listings.snapshot()
      const error = await (async () => {
        try {
          for await (const _ of refused) return undefined
        } catch (error) {
          return error
        }
      })()
      expect(error).toBeInstanceOf(DropshelfError)
      expect((error as DropshelfError).status).toBe(402)
    })

    it("is for the business plan: free and pro get 402 upgrade_required naming snapshot", async () => {
      for (const plan of ["free", "pro"] as const) {
        const key = await account(server, plan, `snapshot-${plan}`)
        const response = await call(server, "GET", SNAPSHOT, { key: key.secret })
        expect(response.status, plan).toBe(402)
        expect(response.body.error).toMatchObject({ code: "upgrade_required", parameter: "snapshot" })
      }
    })

    it("allows 4 snapshots per account and hour, then 429 snapshot_limit_reached with Retry-After", async () => {
      const key = await account(server, "business", "snapshot-limit")
      // Another key of the same account shares the allowance.
      const second = await server.run(
        (await import("@dropshelf/core")).Operators.Operators.use((operators) => operators.createKey(key.accountId as never, "second"))
      )
      for (let i = 0; i < 4; i++) {
        const response = await rawGet(server, SNAPSHOT, { authorization: `Bearer ${i % 2 === 0 ? key.secret : second.secret}` })
        expect(response.status, `snapshot ${i + 1}`).toBe(200)
      }
      const refused = await call(server, "GET", SNAPSHOT, { key: second.secret })
      expect(refused.status).toBe(429)
      expect(refused.body.error).toMatchObject({ code: "snapshot_limit_reached", limit: 4 })
      const retryAfter = Number(refused.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(3600)
      expect(refused.body.error.retry_after).toBe(retryAfter)
      // The per-minute limit still counts it as one request, and other reads go on.
      expect(refused.headers.get("x-ratelimit-limit")).toBe("120")
      expect((await call(server, "GET", "/api/v1/domains?limit=1", { key: key.secret })).status).toBe(200)
    })

    it("shows a write made while it streams whole or not at all; the since feed from its watermark carries it", async () => {
      const key = await account(server, "business", "snapshot-consistent")
      const changed = [rows[0]!, rows[1_200]!, rows[2_299]!]
      const response = await fetch(`${server.base}${SNAPSHOT}`, { headers: { authorization: `Bearer ${key.secret}` } })
      expect(response.status).toBe(200)
      const reader = response.body!.getReader()
      let text = new TextDecoder().decode((await reader.read()).value)
      // The snapshot is open now; the write is not awaited, since on the embedded database it waits for the snapshot.
      const write = addListings(server, changed.map((row) => ({ ...row, category: "rewritten" })))
      for (let part = await reader.read(); !part.done; part = await reader.read()) {
        text += new TextDecoder().decode(part.value)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      await write
      const lines = linesOf(text)
      const end = lines.pop()
      const seen = lines.filter((line) => changed.some((row) => row.id === line.id)).map((line) => line.category)
      expect(seen).toHaveLength(3)
      expect(new Set(seen).size, `seen half: ${seen.join(" | ")}`).toBe(1)
      // The watermark trails the clock by 120 s, so the run also repeats rows the snapshot showed.
      const fed: Array<any> = []
      let path: string | undefined = `/api/v1/domains?since=${encodeURIComponent(end.synced_at)}&limit=250`
      while (path !== undefined) {
        const page = await call(server, "GET", path, { key: key.secret })
        expect(page.status).toBe(200)
        fed.push(...page.body.data.filter((line: any) => changed.some((row) => row.id === line.id)))
        path = page.body.next_cursor === null ? undefined
          : `/api/v1/domains?since=${encodeURIComponent(end.synced_at)}&limit=250&cursor=${encodeURIComponent(page.body.next_cursor)}`
      }
      expect(fed.map((line: any) => line.category)).toEqual(["rewritten", "rewritten", "rewritten"])
    })
  })
}
