/**
 * Several instances behind one load balancer: three real `dropshelf serve` processes on one
 * PostgreSQL database and one Redis share one rate-limit counter per key. And with Redis
 * unreachable a server still starts, limits in its own process and says so once; with a Redis
 * of the test's own stopped and started again under load, it goes back to Redis by itself.
 *
 * The three-instance test needs DATABASE_URL (a fresh database is created on that server and
 * dropped afterwards) and REDIS_URL; without them it is skipped, and its name says why.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { copyPgliteTemplate } from "../../../scripts/PgliteTemplate.ts"
import { cli, freePort, freshDatabase, type Instance, serve } from "./processes.ts"

const databaseUrl = process.env.DATABASE_URL?.trim() || undefined
const redisUrl = process.env.REDIS_URL?.trim() || undefined
const skipScaleOut = databaseUrl === undefined || redisUrl === undefined
  ? `needs ${[databaseUrl === undefined ? "DATABASE_URL" : "", redisUrl === undefined ? "REDIS_URL" : ""].filter(Boolean).join(" and ")}`
  : undefined
if (skipScaleOut !== undefined) {
  // vitest's default reporter does not print skipped suites' names: say it here too.
  console.info(`scaleout: the three-instance test is skipped: it ${skipScaleOut}`)
}

/** Waits out the last `seconds` of a wall-clock minute, so a burst stays inside one window. */
const awayFromMinuteEdge = async (seconds = 10) => {
  const second = new Date().getUTCSeconds()
  if (second >= 60 - seconds) await new Promise((wake) => setTimeout(wake, (61 - second) * 1000))
}

/** An account on `plan` with one key, made through the CLI as an operator would. */
const accountWithKey = async (env: Record<string, string>, plan: string, name: string) => {
  const created = await cli(["accounts", "create", "--name", name, "--plan", plan], env)
  const key = await cli(["keys", "create", created.id, "--name", `${name}-key`], env)
  return { accountId: created.id as string, key: key.key as string }
}

describe.skipIf(skipScaleOut !== undefined)(
  `three instances, one PostgreSQL, one Redis${skipScaleOut !== undefined ? ` (skipped: ${skipScaleOut})` : ""}`,
  () => {
    let database: { url: string; drop: () => Promise<void> } | undefined
    const instances: Array<Instance> = []

    beforeAll(async () => {
      database = await freshDatabase(databaseUrl!, "scaleout")
      const env = { DATABASE_URL: database.url, REDIS_URL: redisUrl! }
      await cli(["migrate"], env)
      instances.push(...await Promise.all([serve(env), serve(env), serve(env)]))
    }, 180_000)

    afterAll(async () => {
      await Promise.all(instances.map((instance) => instance.stop()))
      await database?.drop()
    }, 60_000)

    it("200 concurrent requests from one pro key, round-robin over three instances: exactly 60 succeed", async () => {
      const env = { DATABASE_URL: database!.url, REDIS_URL: redisUrl! }
      // Warm every instance (connections, Redis client) with a key of its own, so the burst
      // measures the shared counter and not start-up.
      const warm = await accountWithKey(env, "pro", "scaleout-warm")
      for (const instance of instances) {
        const response = await fetch(`${instance.base}/api/v1/me`, { headers: { authorization: `Bearer ${warm.key}` } })
        expect(response.status).toBe(200)
      }
      const fallbackLines = () =>
        instances.flatMap((instance) => instance.output().split("\n").filter((line) => /Redis unreachable/.test(line)))

      /*
       * The Redis limiter waits 2 s for Redis and then counts in-process, logging the switch
       * (RateLimitRedis.REDIS_TIMEOUT_MS). On a starved machine (two cores running the whole
       * suite next to three servers) a burst can make an answer late, and then that instance
       * lets requests through on its own count. That is the documented degradation, not the
       * shared counter under test: an attempt during which an instance logged the switch is
       * discarded (and said so), and the burst is repeated with a fresh key, at most 3 times.
       */
      let responses: Array<{ status: number; headers: Headers; body: any }> = []
      for (let attempt = 1; ; attempt++) {
        const { key } = await accountWithKey(env, "pro", `scaleout-${attempt}`)
        await awayFromMinuteEdge(10)
        const fallbacksBefore = fallbackLines().length
        const minute = Math.floor(Date.now() / 60_000)
        responses = await Promise.all(Array.from({ length: 200 }, async (_, i) => {
          const response = await fetch(`${instances[i % 3]!.base}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })
          const body = await response.json() as any
          return { status: response.status, headers: response.headers, body }
        }))
        expect(Math.floor(Date.now() / 60_000), "the burst stayed inside one wall-clock minute").toBe(minute)
        const fellBack = fallbackLines().slice(fallbacksBefore)
        if (fellBack.length === 0) break
        console.warn(`scaleout: attempt ${attempt} discarded, an instance fell back to in-process counting: ${fellBack.join(" | ")}`)
        expect(attempt, `every attempt saw Redis answer later than 2 s: ${fellBack.join(" | ")}`).toBeLessThan(3)
        await new Promise((wake) => setTimeout(wake, 1_000))
      }

      const ok = responses.filter((response) => response.status === 200)
      const limited = responses.filter((response) => response.status === 429)
      // Each instance got 66 or 67 of the requests: counting in-process would have let 180 through.
      expect(ok).toHaveLength(60)
      expect(limited).toHaveLength(140)
      const remaining = ok.map((response) => Number(response.headers.get("x-ratelimit-remaining")))
      expect(new Set(remaining).size).toBe(60)
      expect([...remaining].sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i))
      const reset = new Set(responses.map((response) => response.headers.get("x-ratelimit-reset")))
      expect(reset.size).toBe(1)
      for (const response of limited) {
        expect(response.body.error.code).toBe("rate_limited")
        const retryAfter = Number(response.headers.get("retry-after"))
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(retryAfter).toBeLessThanOrEqual(60)
        expect(response.headers.get("x-ratelimit-remaining")).toBe("0")
      }
    }, 240_000)
  }
)

describe("Redis unreachable", () => {
  let dir: string | undefined
  let instance: Instance | undefined

  afterAll(async () => {
    await instance?.stop()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  }, 60_000)

  it("a server still starts, limits in its own process, and logs the fallback once", async () => {
    dir = mkdtempSync(join(tmpdir(), "dropshelf-scaleout-"))
    // Embedded storage, so this runs everywhere; the storage plays no part in the fallback.
    const storage = { DROPSHELF_DATA_DIR: join(dir, "data") }
    copyPgliteTemplate(join(storage.DROPSHELF_DATA_DIR, "pgdata"), { migrated: true })
    const { key } = await accountWithKey(storage, "pro", "no-redis")
    instance = await serve({ ...storage, REDIS_URL: "redis://127.0.0.1:1" })

    await awayFromMinuteEdge(15)
    const statuses: Array<number> = []
    const remaining: Array<string | null> = []
    for (let i = 0; i < 61; i++) {
      const response = await fetch(`${instance.base}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })
      statuses.push(response.status)
      remaining.push(response.headers.get("x-ratelimit-remaining"))
      await response.arrayBuffer()
    }
    expect(statuses.slice(0, 60).every((status) => status === 200)).toBe(true)
    expect(statuses[60]).toBe(429)
    expect(remaining.slice(0, 60)).toEqual(Array.from({ length: 60 }, (_, i) => String(59 - i)))
    const fallbackLines = instance.output().split("\n").filter((line) => /Redis unreachable/.test(line))
    expect(fallbackLines, instance.output().slice(0, 2000)).toHaveLength(1)
  }, 120_000)
})

/** An executable on PATH, or undefined. */
const onPath = (name: string) =>
  (process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, name)).find((file) => existsSync(file))

const redisServerBinary = onPath("redis-server")
const redisCliBinary = onPath("redis-cli")
const skipOutage = redisServerBinary === undefined || redisCliBinary === undefined
  ? "needs redis-server and redis-cli on PATH (a private Redis is started and killed)"
  : undefined
if (skipOutage !== undefined) console.info(`scaleout: the Redis outage test is skipped: it ${skipOutage}`)

/** A Redis of the test's own on `port` (never the machine's shared one), nothing persisted. */
const startRedis = async (port: number, dir: string) => {
  const child = spawn(redisServerBinary!, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
  const exited = new Promise<void>((resolveExit) => child.on("close", () => resolveExit()))
  const deadline = Date.now() + 15_000
  while (!/Ready to accept connections/.test(output)) {
    if (child.exitCode !== null) throw new Error(`redis-server exited ${child.exitCode}: ${output}`)
    if (Date.now() > deadline) throw new Error(`redis-server did not start: ${output}`)
    await new Promise((wake) => setTimeout(wake, 50))
  }
  return {
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      await exited
    }
  }
}

/** The rate-limit counters a Redis holds: key name → count. */
const countersIn = (port: number): Promise<Record<string, number>> =>
  new Promise((resolveCounters, reject) => {
    const script = "local out = {} for _, k in ipairs(redis.call('KEYS', ARGV[1])) do table.insert(out, k) table.insert(out, redis.call('GET', k)) end return out"
    const child = spawn(redisCliBinary!, ["-p", String(port), "--raw", "EVAL", script, "0", "dropshelf:ratelimit:*"], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.on("error", reject)
    child.on("close", () => {
      const lines = stdout.split("\n").filter((line) => line !== "")
      const counters: Record<string, number> = {}
      for (let i = 0; i + 1 < lines.length; i += 2) counters[lines[i]!] = Number(lines[i + 1])
      resolveCounters(counters)
    })
  })

describe.skipIf(skipOutage !== undefined)(`Redis stopped and started again under load${skipOutage !== undefined ? ` (skipped: ${skipOutage})` : ""}`, () => {
  let dir: string | undefined
  let instance: Instance | undefined
  let redis: { kill: () => Promise<void> } | undefined

  afterAll(async () => {
    await instance?.stop()
    await redis?.kill()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  }, 60_000)

  it("Redis down at start-up, then killed and restarted under load: no 5xx, no crash, limits per instance meanwhile, shared counting whenever it answers, without a restart", async () => {
    dir = mkdtempSync(join(tmpdir(), "dropshelf-redis-outage-"))
    // Embedded storage, so this runs everywhere; the storage plays no part in the counting.
    const storage = { DROPSHELF_DATA_DIR: join(dir, "data") }
    copyPgliteTemplate(join(storage.DROPSHELF_DATA_DIR, "pgdata"), { migrated: true })
    const created = await cli(["accounts", "create", "--name", "outage", "--plan", "pro"], storage)
    const keyOf = async (name: string) => (await cli(["keys", "create", created.id, "--name", name], storage)).key as string
    // `shared` is measured before the outage and then carries the load; `during` is spent while Redis is down.
    const keys = { shared: await keyOf("shared"), during: await keyOf("during") }
    const redisPort = await freePort()
    // Nothing listens on the port yet: the server starts counting in its own process.
    instance = await serve({ ...storage, REDIS_URL: `redis://127.0.0.1:${redisPort}` })
    const get = async (key: string) => {
      const response = await fetch(`${instance!.base}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })
      await response.arrayBuffer()
      return { status: response.status, remaining: response.headers.get("x-ratelimit-remaining"), reset: response.headers.get("x-ratelimit-reset") }
    }
    const logged = (pattern: RegExp) => instance!.output().split("\n").filter((line) => pattern.test(line))
    const until = async (what: string, done: () => boolean) => {
      const deadline = Date.now() + 30_000
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`${what} did not happen: ${instance!.output().slice(-2000)}`)
        await new Promise((wake) => setTimeout(wake, 100))
      }
    }
    /** Requests of `key` that reached Redis's counters: the counters' growth while only `key` is used. */
    const countedInRedis = async (key: string, requests: number) => {
      const before = await countersIn(redisPort)
      for (let i = 0; i < requests; i++) expect((await get(key)).status).toBe(200)
      const after = await countersIn(redisPort)
      return Object.entries(after).reduce((sum, [name, count]) => sum + count - (before[name] ?? 0), 0)
    }
    expect(logged(/Redis unreachable at start-up/)).toHaveLength(1)
    expect((await get(keys.shared)).status).toBe(200)

    redis = await startRedis(redisPort, dir)
    await until("the switch to Redis once it is up", () => logged(/Redis answers again/).length === 1)
    expect(await countedInRedis(keys.shared, 3)).toBe(3)

    // Load throughout: four clients, one request after another.
    const statuses: Array<number> = []
    const failures: Array<string> = []
    let loading = true
    const load = Promise.all(Array.from({ length: 4 }, async () => {
      while (loading) {
        try {
          statuses.push((await get(keys.shared)).status)
        } catch (error) {
          failures.push(String(error))
        }
        await new Promise((wake) => setTimeout(wake, 10))
      }
    }))

    await redis.kill()
    await until("the switch to in-process counting", () => logged(/Redis unreachable: counting/).length === 1)
    // Limits still hold, per instance: one window's worth, then 429.
    await awayFromMinuteEdge(10)
    const during = []
    for (let i = 0; i < 61; i++) during.push(await get(keys.during))
    expect(new Set(during.map((answer) => answer.reset)).size, "the burst stayed inside one window").toBe(1)
    expect(during.map((answer) => answer.status)).toEqual([...Array(60).fill(200), 429])
    expect(during.map((answer) => answer.remaining)).toEqual([...Array.from({ length: 60 }, (_, i) => String(59 - i)), "0"])

    redis = await startRedis(redisPort, dir)
    await until("the switch back to Redis", () => logged(/Redis answers again/).length === 2)
    loading = false
    await load
    // Spent in this process's count, but Redis restarted empty: counted there, it has its window again.
    expect(await countedInRedis(keys.during, 3)).toBe(3)

    expect(failures).toEqual([])
    expect(statuses.length).toBeGreaterThan(0)
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([])
    expect(instance.child.exitCode).toBeNull()
    // Each switch is logged once.
    expect(logged(/Redis unreachable/)).toHaveLength(2)
    expect(logged(/Redis answers again/)).toHaveLength(2)
  }, 180_000)
})
