/**
 * Webhook delivery under failure and scale-out: two server instances on one PostgreSQL
 * deliver every event once (in-process servers, DATABASE_URL needed), and a `dropshelf serve`
 * killed with SIGKILL in the middle of a delivery delivers it after restarting (embedded
 * PGlite always; server Postgres too when DATABASE_URL is set).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { RateLimiter } from "@dropshelf/core"
import { type Adapter, account, addListings, call, listing, type Ports, type Running, start } from "./harness.ts"
import { copyPgliteTemplate } from "../../../scripts/PgliteTemplate.ts"
import { cli, freePort, freshDatabase, serve } from "./processes.ts"
import { eventually, receiver } from "./receiver.ts"

const databaseUrl = process.env.DATABASE_URL?.trim() || undefined
if (databaseUrl === undefined) console.info("watch-delivery: the two-instance and server kill -9 tests are skipped: DATABASE_URL not set")

/** The SQL stores on one named database, as every instance of a deployment opens it. */
const sharedDatabase = async (url: string): Promise<Adapter> => {
  const { StoreSql } = await import("@dropshelf/store-sql")
  return {
    name: "shared",
    layer: () =>
      Layer.mergeAll(StoreSql.layerStores, RateLimiter.layerInProcess).pipe(
        Layer.provide(Layer.effectDiscard(StoreSql.migrate).pipe(Layer.provideMerge(StoreSql.layerServerClient({ url }))))
      ) as Layer.Layer<Ports, unknown>
  }
}

describe.skipIf(databaseUrl === undefined)(
  `two instances on one PostgreSQL${databaseUrl === undefined ? " (skipped: DATABASE_URL not set)" : ""}`,
  () => {
    let database: Awaited<ReturnType<typeof freshDatabase>> | undefined
    const servers: Array<Running> = []

    afterAll(async () => {
      await Promise.all(servers.map((server) => server.close()))
      await database?.drop()
    }, 60_000)

    it("deliver each event once between them", async () => {
      database = await freshDatabase(databaseUrl!, "watches")
      const adapter = await sharedDatabase(database.url)
      // Small batches and a slow receiver, so both workers are busy at once.
      const settings = { batch: 3, pollMs: 20 }
      servers.push(await start(adapter, { watchWorker: true, watchSettings: settings }))
      servers.push(await start(adapter, { watchWorker: true, watchSettings: settings }))
      const hook = await receiver(async () => {
        await new Promise((wake) => setTimeout(wake, 20))
        return 204
      })
      try {
        const [a] = servers
        const business = await account(a!, "business", "two-instances")
        const created = await call(a!, "POST", "/api/v1/watches", { key: business.secret, body: JSON.stringify({ name: "all", webhook_url: hook.url }) })
        expect(created.status).toBe(201)
        const rows = Array.from({ length: 40 }, (_, i) => listing({ domain: `twice-${i}-${Math.random().toString(36).slice(2, 6)}.com` }))
        for (let i = 0; i < rows.length; i += 5) await addListings(servers[i % 2]!, rows.slice(i, i + 5))
        expect(await eventually(() => hook.received.length >= rows.length, 20_000)).toBe(true)
        await new Promise((wake) => setTimeout(wake, 500))
        const ids = hook.received.map((request) => request.headers["webhook-id"])
        expect(ids.length).toBe(rows.length)
        expect(new Set(ids).size).toBe(rows.length)
        for (const request of hook.received) new StandardWebhook(created.body.webhook_secret).verify(request.body, request.headers)
      } finally {
        await hook.close()
      }
    }, 60_000)
  }
)

// ---------------------------------------------------------------------------------------------
// kill -9

/** What every process here runs with: webhooks to the local receiver, a short poll, no RDAP. */
const deliveryEnv = (env: Record<string, string>): Record<string, string> => ({
  DROPSHELF_WEBHOOKS_ALLOW_PRIVATE: "true",
  DROPSHELF_WATCH_POLL_MS: "100",
  DROPSHELF_RDAP_URL: "http://127.0.0.1:9/",
  ...env
})

const killNine = (storage: string, env: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>, skip?: string) =>
  describe.skipIf(skip !== undefined)(`kill -9 during a delivery, on ${storage}${skip !== undefined ? ` (skipped: ${skip})` : ""}`, () => {
    it("delivers every pending event after the restart, with the same webhook-id", async () => {
      const { cleanup, env: storage } = await env()
      const storageEnv = deliveryEnv(storage)
      let hang = true
      const hook = await receiver(async () => {
        // The first request never gets an answer from this receiver: the server dies waiting.
        while (hang) await new Promise((wake) => setTimeout(wake, 50))
        return 204
      })
      const port = await freePort()
      const base = `http://127.0.0.1:${port}`
      let running: Awaited<ReturnType<typeof serve>> | undefined
      try {
        running = await serve(storageEnv, port)
        const created = await cli(["accounts", "create", "--name", "kill9", "--plan", "business"], storageEnv)
        const { key } = await cli(["keys", "create", created.id, "--name", "kill9-key"], storageEnv)
        const watch = await (await fetch(`${base}/api/v1/watches`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ name: "all", webhook_url: hook.url })
        })).json() as any
        const dir = mkdtempSync(join(tmpdir(), "dropshelf-kill9-"))
        const file = join(dir, "listings.ndjson")
        writeFileSync(file, ["kill-nine-one.com", "kill-nine-two.com"].map((domain) => JSON.stringify({ domain, tier: "open", discovered_at: "2026-01-01T00:00:00Z" })).join("\n"))
        await cli(["import", file], storageEnv)
        rmSync(dir, { recursive: true, force: true })
        expect(await eventually(() => hook.received.length >= 1, 20_000)).toBe(true)
        const inFlight = hook.received[0]!.headers["webhook-id"]
        running.child.kill("SIGKILL")
        await running.exited
        hang = false
        running = await serve(storageEnv, port)
        expect(await eventually(() => new Set(hook.received.map((r) => r.headers["webhook-id"])).size >= 2 && hook.received.filter((r) => r.headers["webhook-id"] === inFlight).length >= 2, 30_000)).toBe(true)
        for (const request of hook.received) new StandardWebhook(watch.webhook_secret).verify(request.body, request.headers)
        // The receiver answers before the server records the attempt: read the record once it is written.
        const receivedIds = [...new Set(hook.received.map((r) => r.headers["webhook-id"]))].sort()
        let acknowledged: Array<string> = []
        await eventually(async () => {
          const attempts = await (await fetch(`${base}/api/v1/watches/${watch.id}/deliveries`, { headers: { authorization: `Bearer ${key}` } })).json() as any
          acknowledged = attempts.data.filter((a: any) => a.status_code === 204).map((a: any) => a.event_id).sort()
          return acknowledged.length >= receivedIds.length
        }, 10_000)
        expect(acknowledged).toEqual(receivedIds)
      } finally {
        hang = false
        await running?.stop()
        await hook.close()
        await cleanup()
      }
    }, 120_000)
  })

killNine("embedded PGlite", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "dropshelf-kill9-data-"))
  copyPgliteTemplate(join(dataDir, "pgdata"), { migrated: true })
  return { env: { DROPSHELF_DATA_DIR: dataDir }, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) }
})

// On a shared server the restarted worker cannot know the lease's holder died: it waits the
// lease out. A lease shorter than a delivery's 15 s deadline is safe here: the receiver answers at once.
killNine(
  "server PostgreSQL",
  async () => {
    const database = await freshDatabase(databaseUrl!, "watches")
    await cli(["migrate"], deliveryEnv({ DATABASE_URL: database.url }))
    return { env: { DATABASE_URL: database.url, DROPSHELF_WATCH_LEASE_MS: "1000" }, cleanup: database.drop }
  },
  databaseUrl === undefined ? "DATABASE_URL not set" : undefined
)
