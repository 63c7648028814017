/**
 * Black-box tests of the bulk snapshot (`GET /api/v1/domains/snapshot`) on every storage
 * adapter: what it carries and how it ends, gzip, plan gating, the hourly allowance, and that a
 * write made while it streams is seen whole or not at all, and reaches the since feed from the
 * snapshot's watermark.
 */
import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Dropshelf, DropshelfError } from "@dropshelf/client"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, addListings, call, listing, memoryAdapter, openGet, readToClose, type Running, start } from "./harness.ts"
import { eventually } from "./receiver.ts"

const SNAPSHOT = "/api/v1/domains/snapshot"

/** The body of GET `path` as raw bytes, undecoded, with its status and headers. */
const rawGet = async (server: Running, path: string, headers: Record<string, string>) => {
  const res = await openGet(server, path, headers)
  const chunks: Array<Buffer> = []
  for await (const chunk of res) chunks.push(chunk)
  return { status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }
}

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

    it("a HEAD spends none of the hourly snapshots, and carries the headers a GET does", async () => {
      const key = await account(server, "business", "snapshot-head")
      const authorization = `Bearer ${key.secret}`
      const same = ["content-type", "content-encoding", "vary", "content-length", "x-ratelimit-limit", "ratelimit-policy"]
      const picked = (headers: Headers) => Object.fromEntries(same.map((name) => [name, headers.get(name)]))
      for (const encoding of ["identity", "gzip"]) {
        for (let i = 0; i < 4; i++) {
          const head = await fetch(`${server.base}${SNAPSHOT}`, { method: "HEAD", headers: { authorization, "accept-encoding": encoding } })
          expect(head.status, `HEAD ${i + 1}`).toBe(200)
          expect(await head.text()).toBe("")
        }
        const head = await fetch(`${server.base}${SNAPSHOT}`, { method: "HEAD", headers: { authorization, "accept-encoding": encoding } })
        const get = await fetch(`${server.base}${SNAPSHOT}`, { headers: { authorization, "accept-encoding": encoding } })
        expect(get.status, encoding).toBe(200)
        await get.arrayBuffer()
        expect(picked(head.headers), encoding).toEqual(picked(get.headers))
      }
      // The two GETs spent two of the four: a HEAD now tells the allowance is left, then spent.
      const heads = async () => (await fetch(`${server.base}${SNAPSHOT}`, { method: "HEAD", headers: { authorization } })).status
      expect(await heads()).toBe(200)
      for (let i = 0; i < 2; i++) await rawGet(server, SNAPSHOT, { authorization })
      expect(await heads()).toBe(429)
      const free = await account(server, "free", "snapshot-head-free")
      expect((await fetch(`${server.base}${SNAPSHOT}`, { method: "HEAD", headers: { authorization: `Bearer ${free.secret}` } })).status).toBe(402)
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

  describe.skipIf(adapter.skip !== undefined)(`a bulk snapshot whose client stops reading, on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    const IDLE_MS = 600
    let server: Running
    // More than the kernel's socket buffers take (a few MB on loopback), so a client that stops
    // reading leaves the server with bytes waiting.
    const many = Array.from({ length: 20_000 }, (_, i) => listing({ domain: `stalled-${i}-${Math.random().toString(36).slice(2, 8)}.com` }))

    beforeAll(async () => {
      server = await start(adapter, { snapshotIdleTimeoutMs: IDLE_MS })
      await addListings(server, many)
    }, 180_000)

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    /**
     * A snapshot whose client reads the head, then nothing more until `resume`, which reads the
     * rest of what reaches it and tells whether the body was whole.
     */
    const stalled = async (secret: string) => {
      const res = await openGet(server, SNAPSHOT, { authorization: `Bearer ${secret}` })
      res.pause()
      return {
        status: res.statusCode!,
        resume: () => {
          const read = readToClose(res)
          res.resume()
          return read
        }
      }
    }

    it("is closed once its client has left bytes unread for the idle timeout, and frees its slot for the next snapshot", async () => {
      const readers = await Promise.all([account(server, "business", "stalled-a"), account(server, "business", "stalled-b")])
      const stuck = await Promise.all(readers.map((reader) => stalled(reader.secret)))
      expect(stuck.map((one) => one.status)).toEqual([200, 200])
      // Both slots a process has for snapshots are taken; a third snapshot waits for one.
      const third = await account(server, "business", "after-the-stalled")
      const started = Date.now()
      const whole = await rawGet(server, SNAPSHOT, { authorization: `Bearer ${third.secret}` })
      expect(whole.status).toBe(200)
      expect(linesOf(whole.body.toString("utf8")).at(-1).listings).toBe(many.length)
      expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS - 100)
      // Each stalled snapshot's idle clock starts when its own socket fills, so the second may be
      // cut a check or two after the first slot freed, and after the third snapshot has ended.
      const cutForIdling = () => server.logs.filter((entry) => String(entry.message).startsWith("snapshot closed: its client took no bytes"))
      await eventually(() => cutForIdling().length >= 2, 4 * IDLE_MS)
      expect(cutForIdling()).toHaveLength(2)
      // The stalled clients learn it once they read again: what the kernel held for them, then a body cut short.
      for (const one of stuck) {
        const { complete, text } = await one.resume()
        expect(complete).toBe(false)
        expect(text.length).toBeGreaterThan(0)
        expect(text).not.toContain("synced_at")
      }
    }, 120_000)
  })
}

// The body's buffers are the HTTP layer's, whatever the storage: one adapter shows them.
describe("a bulk snapshot to a client that keeps falling behind", () => {
  let server: Running
  // More than the kernel's socket buffers take, so the server writes while the socket is behind.
  const many = Array.from({ length: 20_000 }, (_, i) => listing({ domain: `behind-${i}-${Math.random().toString(36).slice(2, 8)}.com` }))

  beforeAll(async () => {
    server = await start(memoryAdapter)
    await addListings(server, many)
  }, 120_000)

  afterAll(async () => {
    await server?.close()
  })

  it("reaches a client that keeps falling behind whole, line for line what a prompt client gets beside it: each snapshot writes from buffers of its own", async () => {
    const [slowKey, promptKey] = await Promise.all([account(server, "business", "slow-reader"), account(server, "business", "prompt-reader")])
    const slow = openGet(server, SNAPSHOT, { authorization: `Bearer ${slowKey.secret}` }).then((res) =>
      readToClose(res, () => {
        res.pause()
        setTimeout(() => res.resume(), 2)
      })
    )
    const prompt = rawGet(server, SNAPSHOT, { authorization: `Bearer ${promptKey.secret}` })
    const [slowBody, promptBody] = await Promise.all([slow, prompt])
    expect(slowBody.complete).toBe(true)
    const slowLines = linesOf(slowBody.text)
    expect(slowLines.at(-1).listings).toBe(many.length)
    const byId = (lines: Array<any>) => lines.slice(0, -1).sort((a, b) => (a.id < b.id ? -1 : 1))
    expect(byId(slowLines)).toEqual(byId(linesOf(promptBody.body.toString("utf8"))))
  }, 120_000)
})

// Its deadline is the HTTP server's, whatever the storage: one adapter shows it.
describe("a bulk snapshot that lasts longer than a snapshot may", () => {
  const MAX_MS = 1_500
  let server: Running
  const many = Array.from({ length: 20_000 }, (_, i) => listing({ domain: `trickled-${i}-${Math.random().toString(36).slice(2, 8)}.com` }))

  beforeAll(async () => {
    server = await start(memoryAdapter, { snapshotMaxMs: MAX_MS, snapshotIdleTimeoutMs: 60_000 })
    await addListings(server, many)
  }, 120_000)

  afterAll(() => server?.close())

  it("is closed at the deadline though its client keeps reading, and the body ends without its closing line", async () => {
    const key = await account(server, "business", "trickling")
    const started = Date.now()
    const res = await openGet(server, SNAPSHOT, { authorization: `Bearer ${key.secret}` })
    // A chunk, then a pause far shorter than the idle timeout: never stalled, never done in
    // time. Past the deadline it reads what the kernel still holds for it at once.
    const outcome = await readToClose(res, () => {
      if (Date.now() - started > MAX_MS + 200) return
      res.pause()
      setTimeout(() => res.resume(), 100)
    })
    expect(outcome.complete).toBe(false)
    expect(outcome.text).not.toContain("synced_at")
    expect(Date.now() - started).toBeGreaterThanOrEqual(MAX_MS - 100)
    expect(server.logs.filter((entry) => String(entry.message).startsWith(`snapshot closed: it lasted ${MAX_MS} ms`))).toHaveLength(1)
  }, 60_000)
})
