/**
 * The `Dropshelf` client against the real server (apps/server/test/harness.ts), once per storage
 * adapter: every call decodes the contract's types, list pages and the since feed iterate to
 * their end, and refusals arrive as `DropshelfError` with the status and the envelope.
 */
import { Effect, Stream } from "effect"
import { FetchHttpClient } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApiErrors } from "@dropshelf/api"
import { ListQuery, Operators, Watches } from "@dropshelf/core"
import { Dropshelf, DropshelfClient, DropshelfError, Idempotency, type Listing, type Tombstone } from "@dropshelf/client"
import { adapters, cleanupPgliteDirs } from "../../../apps/server/test/adapters.ts"
import { account, addListings, listing, newId, type Running, start } from "../../../apps/server/test/harness.ts"

const DAY = 86_400_000

/** Matching rounds until none is due: the test's server runs no watch worker. */
const drainWatches = Watches.Watches.use(Watches.Watches.drain)

/** A fetch that records the method, path and idempotency key of what it sends, and the JSON it gets back. */
const recordingFetch = () => {
  const sent: Array<{ readonly method: string; readonly path: string; readonly idempotencyKey: string | null }> = []
  const answers: Array<any> = []
  const fetchAndRecord: typeof fetch = async (input, init) => {
    const request = new Request(input, init)
    sent.push({ method: request.method, path: new URL(request.url).pathname, idempotencyKey: request.headers.get("idempotency-key") })
    const response = await fetch(request)
    answers.push(await response.clone().json())
    return response
  }
  return { sent, answers, fetch: fetchAndRecord }
}

const refusalOf = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable("the call was expected to be refused"),
    (error: unknown) => {
      expect(error).toBeInstanceOf(DropshelfError)
      return error as DropshelfError
    }
  )

for (const adapter of adapters) {
  describe.skipIf(adapter.skip !== undefined)(`Dropshelf client on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let server: Running
    const category = `client${Math.random().toString(36).slice(2, 8)}`
    const shelf = Array.from({ length: 7 }, (_, i) => listing({ domain: `client-shelf-${i}-${category}.com`, category }))
    const featured = listing({ domain: `client-featured-${category}.com`, tier: "featured", featuredRank: 1 })
    const client = (secret: string, fetch?: typeof globalThis.fetch) =>
      new Dropshelf({ baseUrl: server.base, apiKey: secret, retry: { maxRetries: 1, baseDelayMs: 10 }, fetch })

    beforeAll(async () => {
      server = await start(adapter)
      await addListings(server, [...shelf, featured])
    })
    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    it("reads the key's record", async () => {
      const key = await account(server, "pro", "client-me")
      const me = await client(key.secret).me()
      expect(me).toMatchObject({ plan: "pro", sync_feed: false, key: { prefix: key.prefix } })
    })

    it("lists one page, and iterates every listing of a query across pages", async () => {
      const key = await account(server, "pro", "client-list")
      const dropshelf = client(key.secret)
      const page = await dropshelf.listings.list({ category: [category], limit: 3 })
      expect(page.data).toHaveLength(3)
      expect(page.has_more).toBe(true)

      const pages = []
      for await (const each of dropshelf.listings.pages({ category: [category], limit: 3 })) pages.push(each.data.length)
      expect(pages).toEqual([3, 3, 1])
      const ids: Array<string> = []
      for await (const row of dropshelf.listings.iterate({ category: [category], limit: 3 })) ids.push(row.id)
      expect(ids).toEqual(shelf.map((row) => row.id).sort())
    })

    it("reads one listing, and a missing one is a 404 not_found", async () => {
      const key = await account(server, "pro", "client-get")
      const dropshelf = client(key.secret)
      const row = await dropshelf.listings.get(shelf[0]!.id)
      expect(row).toMatchObject({ id: shelf[0]!.id, status: "active", name_disclosed: false, domain: null })
      const missing = await refusalOf(dropshelf.listings.get(newId()))
      expect(missing).toMatchObject({ status: 404, code: "not_found" })
      expect(missing.envelope.error.message).toBeTypeOf("string")
    })

    it("reveals, holds, extends and ends, sending an idempotency key on each write only", async () => {
      const key = await account(server, "pro", "client-writes")
      const recorded = recordingFetch()
      const dropshelf = client(key.secret, recorded.fetch)
      const target = shelf[1]!
      const revealed = await dropshelf.reveal(target.id)
      expect(revealed.domain).toBe(target.domain)
      expect(revealed.revealed_at).toMatch(/Z$/)
      const held = await dropshelf.hold(target.id)
      expect(held.hold).toMatchObject({ listing_id: target.id, state: "running", can_extend: true })
      const holds = await dropshelf.holds.list()
      expect(holds.data.map((hold) => hold.id)).toContain(held.hold.id)
      const extended = await dropshelf.holds.extend(held.hold.id)
      expect(extended.hold.can_extend).toBe(false)
      const again = await refusalOf(dropshelf.holds.extend(held.hold.id))
      expect(again).toMatchObject({ status: 400, code: "invalid_request", holdCode: "ALREADY_EXTENDED" })
      const ended = await dropshelf.holds.end(held.hold.id, "registered")
      expect(ended.hold.state).toBe("registered")
      const over = await refusalOf(dropshelf.holds.end(held.hold.id))
      expect(over).toMatchObject({ status: 400, holdCode: "HOLD_OVER" })

      const writes = recorded.sent.filter((request) => request.method !== "GET")
      expect(writes).toHaveLength(6)
      for (const write of writes) expect(write.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/)
      expect(new Set(writes.map((write) => write.idempotencyKey)).size).toBe(6)
      expect(recorded.sent.filter((request) => request.method === "GET").map((request) => request.idempotencyKey)).toEqual([null])
    })

    it("carries the reveal and hold tokens, and their extra fields, on refusals", async () => {
      const free = await account(server, "free", "client-free")
      const onFree = client(free.secret)
      const featuredRefusal = await refusalOf(onFree.reveal(featured.id))
      expect(featuredRefusal).toMatchObject({ status: 402, code: "upgrade_required", revealCode: "FEATURED_REQUIRES_PRO" })
      const holdRefusal = await refusalOf(onFree.hold(shelf[2]!.id))
      expect(holdRefusal).toMatchObject({ status: 402, code: "upgrade_required", holdCode: "HOLDS_REQUIRE_PRO" })

      const holder = await account(server, "pro", "client-holder")
      await client(holder.secret).reveal(shelf[3]!.id)
      const running = await client(holder.secret).hold(shelf[3]!.id)
      const other = await account(server, "pro", "client-other")
      const heldByOther = await refusalOf(client(other.secret).reveal(shelf[3]!.id))
      expect(heldByOther).toMatchObject({ status: 403, code: "forbidden", revealCode: "HELD_BY_OTHER", fields: { expires_at: running.hold.expires_at } })

      const unauthorized = await refusalOf(client("dsk_not-a-key").reveal(shelf[2]!.id))
      expect(unauthorized).toMatchObject({ status: 401, code: "unauthorized", revealCode: "SIGN_IN_REQUIRED" })
    })

    it("refuses a query the contract refuses before sending it, as the server would", async () => {
      const key = await account(server, "pro", "client-bad-query")
      const recorded = recordingFetch()
      const refusal = await refusalOf(client(key.secret, recorded.fetch).listings.list({ spam: "high" as "low" }))
      expect(refusal).toMatchObject({ status: 400, code: "invalid_request", fields: { parameter: "spam" } })
      expect(refusal.message).toContain("low, moderate")
      expect(recorded.sent).toEqual([])
      const fromServer = await fetch(`${server.base}/api/v1/domains?spam=high`, { headers: { authorization: `Bearer ${key.secret}` } })
      expect(((await fromServer.json()) as any).error).toEqual(refusal.fields)
    })

    it("follows the since feed: listings, then tombstones and changes, with the watermark to keep", async () => {
      const feedCategory = `feed${Math.random().toString(36).slice(2, 8)}`
      const rows = Array.from({ length: 5 }, (_, i) => listing({ domain: `client-feed-${i}-${feedCategory}.com`, category: feedCategory }))
      await addListings(server, rows)
      const key = await account(server, "business", "client-feed")
      const recorded = recordingFetch()
      const dropshelf = client(key.secret, recorded.fetch)

      const first = dropshelf.listings.since(null, { category: [feedCategory], limit: 2 })
      expect(first.syncedAt).toBeUndefined()
      const copy = new Map<string, Listing>()
      for await (const row of first) {
        expect(row.status).toBe("active")
        copy.set(row.id, row as Listing)
      }
      expect([...copy.keys()].sort()).toEqual(rows.map((row) => row.id).sort())
      // The watermark to keep is the first page's (the feed's rule 1), not the last one's.
      expect(recorded.answers.map((page) => page.synced_at)).toHaveLength(3)
      expect(first.syncedAt).toBe(recorded.answers[0].synced_at)

      await server.run(Operators.Operators.use((operators) => operators.delist([rows[0]!.id], "sold")))
      await addListings(server, [{ ...rows[1]!, estimatedValueCents: 300_000 }])
      const second = dropshelf.listings.since(first.syncedAt!, { category: [feedCategory], limit: 2 })
      const seen: Array<Listing | Tombstone> = []
      for await (const row of second) seen.push(row)
      expect(seen).toContainEqual({ id: rows[0]!.id, status: "delisted", updated_at: expect.any(String) })
      expect(seen.find((row) => row.id === rows[1]!.id)).toMatchObject({ status: "active", estimated_value_cents: 300_000 })
      expect(second.syncedAt).toMatch(/Z$/)
    })

    it("serves Effect programs: the contract's client, its error classes, pages as a stream, a chosen idempotency key", async () => {
      const key = await account(server, "pro", "client-effect")
      const recorded = recordingFetch()
      const query = Effect.runSync(ListQuery.decode({ category, limit: "3" }))
      const program = Effect.gen(function*() {
        const client = yield* DropshelfClient.DropshelfClient
        const sizes = yield* DropshelfClient.pages(client, query).pipe(
          Stream.map((page) => page.data.length),
          Stream.runCollect
        )
        const missing = yield* Effect.flip(client.domains.get({ params: { id: newId() } }))
        const revealed = yield* client.domains.reveal({ params: { id: shelf[4]!.id } }).pipe(Idempotency.withKey("effect-reveal-1"))
        return { sizes, missing, revealed }
      }).pipe(
        Effect.provide(DropshelfClient.DropshelfClient.layerFetch({ baseUrl: server.base, apiKey: key.secret })),
        Effect.provideService(FetchHttpClient.Fetch, recorded.fetch)
      )
      const { missing, revealed, sizes } = await Effect.runPromise(program)
      expect(sizes).toEqual([3, 3, 1])
      expect(missing).toBeInstanceOf(ApiErrors.NotFoundError)
      expect(revealed.domain).toBe(shelf[4]!.domain)
      expect(recorded.sent.at(-1)).toEqual({ method: "POST", path: `/api/v1/domains/${shelf[4]!.id}/reveal`, idempotencyKey: "effect-reveal-1" })
    })

    it("refuses the since feed below business with 402 naming since", async () => {
      const key = await account(server, "pro", "client-feed-pro")
      const feed = client(key.secret).listings.since(new Date(Date.now() - DAY))
      const refusal = await refusalOf((async () => {
        for await (const _ of feed) break
      })())
      expect(refusal).toMatchObject({ status: 402, code: "upgrade_required", fields: { parameter: "since" } })
      expect(refusal.upgradeUrl).toBeUndefined()
    })

    it("a 402 names where to upgrade when the operator set it (upgradeUrl)", async () => {
      const upgradeUrl = "https://shop.example.com/upgrade?from=client"
      const selling = await start(adapter, { upgradeUrl })
      try {
        const key = await account(selling, "free", "client-upgrade")
        const shelfOf = new Dropshelf({ baseUrl: selling.base, apiKey: key.secret, retry: { maxRetries: 0 } })
        const refusal = await refusalOf((async () => {
          for await (const _ of shelfOf.listings.since(new Date(Date.now() - DAY))) break
        })())
        expect(refusal).toMatchObject({ status: 402, code: "upgrade_required", upgradeUrl, fields: { upgrade_url: upgradeUrl } })
      } finally {
        await selling.close()
      }
    })

    it("refuses a since past the feed's horizon with 400 invalid_request naming since, telling the caller to resynchronise, without retrying", async () => {
      const key = await account(server, "business", "client-feed-old")
      const recorded = recordingFetch()
      const me = await client(key.secret).me()
      expect(me.since_horizon_days).toBe(30)
      const feed = client(key.secret, recorded.fetch).listings.since(new Date(Date.now() - 31 * DAY))
      const refusal = await refusalOf((async () => {
        for await (const _ of feed) break
      })())
      expect(refusal).toMatchObject({ status: 400, code: "invalid_request", resyncRequired: true, fields: { parameter: "since", horizon_days: 30 } })
      expect(refusal.fields.oldest_since).toBeTypeOf("string")
      expect(recorded.sent).toHaveLength(1)
      expect(feed.syncedAt).toBeUndefined()
    })

    it("manages watches: create, list, read, change, pull matches and attempts, and delete, refusals as DropshelfError", async () => {
      const key = await account(server, "business", "client-watches")
      const watches = client(key.secret).watches
      const created = await watches.create({ name: "com names", query: { tld: "com", rsMin: 10 } })
      expect(created).toMatchObject({ name: "com names", query: { tld: "com", rsMin: "10" }, webhook: null })
      expect(created).not.toHaveProperty("webhook_secret")

      expect((await watches.list()).data.map((watch) => watch.id)).toEqual([created.id])
      expect(await watches.get(created.id)).toMatchObject({ id: created.id, name: "com names" })
      const changed = await watches.update(created.id, { name: "paused com names", paused: true })
      expect(changed).toMatchObject({ id: created.id, name: "paused com names", paused: true })

      const page = await watches.matches(created.id, { limit: 10 })
      expect(page).toEqual({ data: [], next_cursor: null, has_more: false })
      expect(await watches.deliveries(created.id)).toEqual({ data: [] })
      // Rotating asks for a webhook to sign for; this watch has none.
      expect(await refusalOf(watches.rotateSecret(created.id))).toMatchObject({ status: 400, code: "invalid_request" })
      expect(await refusalOf(watches.retry(created.id, "no-such-event"))).toMatchObject({ status: 404, code: "not_found" })
      expect(await refusalOf(watches.create({ name: "bad", query: { rsMin: "high" } }))).toMatchObject({
        status: 400,
        code: "invalid_request",
        fields: { parameter: "query.rsMin" }
      })

      expect(await watches.delete(created.id)).toBeUndefined()
      expect(await refusalOf(watches.get(created.id))).toMatchObject({ status: 404, code: "not_found" })
      expect((await watches.list()).data).toEqual([])
    })

    it("pulls a watch's new matches page after page, and a kept cursor later gives only the newer ones", async () => {
      const key = await account(server, "business", "client-matches")
      const watches = client(key.secret).watches
      const watchCategory = `match${Math.random().toString(36).slice(2, 8)}`
      const watch = await watches.create({ name: "category", query: { category: [watchCategory] } })
      const rows = Array.from({ length: 3 }, (_, i) => listing({ domain: `client-match-${i}-${watchCategory}.com`, category: watchCategory }))
      await addListings(server, rows)
      await server.run(drainWatches)

      const first = watches.newMatches(watch.id)
      expect(first.cursor).toBeUndefined()
      const seen: Array<string | undefined> = []
      for await (const match of first) seen.push(match.listing?.id)
      expect(seen.sort()).toEqual(rows.map((row) => row.id).sort())
      expect(first.cursor).toEqual(expect.any(String))

      const nothingYet = watches.newMatches(watch.id, first.cursor)
      for await (const match of nothingYet) expect.unreachable(`no match was recorded since: ${match.id}`)
      expect(nothingYet.cursor).toBe(first.cursor)

      const later = listing({ domain: `client-match-later-${watchCategory}.com`, category: watchCategory })
      await addListings(server, [later])
      await server.run(drainWatches)
      const since = watches.newMatches(watch.id, nothingYet.cursor)
      const newer: Array<string | undefined> = []
      for await (const match of since) newer.push(match.listing?.id)
      expect(newer).toEqual([later.id])
      expect(since.cursor).not.toBe(first.cursor)
    })
  })
}
