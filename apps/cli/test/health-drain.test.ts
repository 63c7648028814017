/**
 * A load balancer's view of `dropshelf serve`, on a real spawned server: `/readyz` asks the
 * database (and Redis with REDIS_URL), turns 503 `draining` as soon as SIGTERM arrives, requests
 * arriving during the drain are still answered, and the process exits 0. Unusable configuration
 * is refused at start with one line and exit 2.
 */
import { afterEach, describe, expect, it } from "vitest"
import { CACHES } from "../src/Caches.ts"
import { embeddedTargets, expectOneLineFailure, killStragglers, run, runJson, serve } from "./support.ts"

const redisUrl = process.env.REDIS_URL?.trim() || undefined
if (redisUrl === undefined) console.info("health-drain: /readyz is checked without Redis: set REDIS_URL to check it with")

describe("health and drain", () => {
  const target = embeddedTargets({ migrated: true })
  afterEach(() => killStragglers())

  it("/readyz is 200 while serving, 503 draining at once on SIGTERM; requests during the drain are answered; exit 0", async () => {
    const { server, base } = await serve({
      env: {
        ...target().env,
        // Long enough to ask a few questions of a draining server; the drain ends when it does.
        DROPSHELF_DRAIN_DELAY_MS: "1500",
        ...(redisUrl !== undefined ? { REDIS_URL: redisUrl } : {})
      }
    })
    const ready = await fetch(`${base}/readyz`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({
      status: "ready",
      checks: redisUrl !== undefined ? { database: "ok", redis: "ok" } : { database: "ok" }
    })

    const exited = server.stop("SIGTERM")
    let draining: Response | undefined
    for (let attempt = 0; attempt < 50 && draining === undefined; attempt++) {
      const answer = await fetch(`${base}/readyz`)
      if (answer.status === 503) draining = answer
      else await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect(draining, "/readyz turned 503").toBeDefined()
    expect(await draining!.json()).toEqual({ status: "draining", failed: [], checks: {} })
    // Still answering everything else, on a new connection, and telling clients to reconnect elsewhere.
    const during = await fetch(`${base}/`)
    expect(during.status).toBe(200)
    expect(during.headers.get("connection")).toBe("close")
    expect((await fetch(`${base}/healthz`)).status).toBe(200)

    expect(await exited).toEqual({ code: 0, signal: null })
    expect(server.stdout()).toMatch(/"message":"draining: \/readyz answers 503/)
  }, 60_000)

  it("refuses unusable configuration at start with one line and exit 2", async () => {
    const env = target().env
    const refusals: Array<[Record<string, string>, RegExp]> = [
      [{ PORT: "99999" }, /PORT/],
      [{ PORT: "eighty" }, /PORT/],
      [{ DATABASE_URL: "not a url" }, /DATABASE_URL is not a URL/],
      [{ DATABASE_URL: "mysql://db.example:3306/x" }, /DATABASE_URL has the scheme mysql/],
      [{ DROPSHELF_LOG_LEVEL: "loud" }, /DROPSHELF_LOG_LEVEL/],
      [{ DROPSHELF_SHUTDOWN_TIMEOUT_MS: "-1" }, /DROPSHELF_SHUTDOWN_TIMEOUT_MS/],
      [{ DROPSHELF_METRICS_PORT: "70000" }, /DROPSHELF_METRICS_PORT/],
      [{ DROPSHELF_WATCH_POLL_MS: "0" }, /DROPSHELF_WATCH_POLL_MS/],
      [{ DROPSHELF_WATCH_LEASE_MS: "500" }, /DROPSHELF_WATCH_LEASE_MS/],
      [{ DROPSHELF_WATCH_RETENTION_DAYS: "0" }, /DROPSHELF_WATCH_RETENTION_DAYS/],
      [{ DROPSHELF_DB_POOL_SIZE: "1" }, /DROPSHELF_DB_POOL_SIZE/],
      [{ DROPSHELF_DB_PIPELINE: "0" }, /DROPSHELF_DB_PIPELINE/],
      [{ DROPSHELF_DB_PIPELINE: "many" }, /DROPSHELF_DB_PIPELINE/],
      [{ DATABASE_READ_URL: "postgres://127.0.0.1:5433/x,mysql://db.example:3306/x" }, /DATABASE_READ_URL has the scheme mysql/],
      [{ DROPSHELF_READ_MAX_LAG_MS: "0" }, /DROPSHELF_READ_MAX_LAG_MS/],
      [{ DROPSHELF_CACHES_OFF: "listing-json,everything" }, /DROPSHELF_CACHES_OFF names no cache everything; the caches are key-lookups, /],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, /OTEL_EXPORTER_OTLP_PROTOCOL/]
    ]
    const outcomes = await Promise.all(refusals.map(([bad]) => run(["serve"], { env: { ...env, ...bad } })))
    outcomes.forEach((outcome, index) => expectOneLineFailure(outcome, 2, refusals[index]![1]))
    // Read once the storage is open: one at a time, or the data directory's lock answers first.
    for (const timeout of ["-5", "9999999999"]) {
      const rdap = { DROPSHELF_RDAP_URL: "https://rdap.example", DROPSHELF_RDAP_TIMEOUT_MS: timeout }
      expectOneLineFailure(await run(["serve"], { env: { ...env, ...rdap } }), 2, /DROPSHELF_RDAP_TIMEOUT_MS/)
    }
  }, 90_000)

  it("answers the same with every cache switched off (DROPSHELF_CACHES_OFF), as measurements run it", async () => {
    const on = { env: target().env }
    await runJson(["seed", "--listings", "30", "--seed", "5"], on)
    const account = await runJson(["accounts", "create", "--name", "uncached", "--plan", "business"], on)
    const { key } = await runJson(["keys", "create", account.id, "--name", "k"], on)
    const read = async (env: Record<string, string>) => {
      const { server, base } = await serve({ env: { ...on.env, ...env } })
      try {
        const get = async (path: string) => {
          const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } })
          expect(response.status, path).toBe(200)
          const { synced_at: _, ...body } = await response.json() as Record<string, unknown>
          return body as { data?: Array<{ id: string }>; next_cursor?: string }
        }
        const first = await get("/api/v1/domains?limit=5&sort=latest")
        const second = await get(`/api/v1/domains?limit=5&sort=latest&cursor=${first.next_cursor}`)
        return [first, second, await get(`/api/v1/domains/${second.data![0]!.id}`), await get("/api/v1/me")]
      } finally {
        await server.stop("SIGTERM")
      }
    }
    const cached = await read({})
    expect(await read({ DROPSHELF_CACHES_OFF: Object.keys(CACHES).join(",") })).toEqual(cached)
  }, 60_000)
})
