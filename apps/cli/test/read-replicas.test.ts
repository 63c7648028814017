/**
 * `dropshelf serve` with a real streaming replica (DATABASE_READ_URL), from outside: a caller
 * sees its own write at once while the replica has not replayed it, another caller is answered
 * by the replica meanwhile; the replica stopped under load costs no request a 5xx, and is used again once restarted;
 * `/readyz` and the metrics name its state. Needs the primary (DATABASE_URL) and the replica
 * scripts/replica.sh makes of it (DATABASE_REPLICA_URL, which .ci/run exports); skipped without.
 * The since watermark under replay lag is checked on the store (packages/store-sql/test/read-replicas.test.ts).
 */
import { execFile, execFileSync } from "node:child_process"
import { promisify } from "node:util"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { holdReplica } from "../../../scripts/ReplicaLock.ts"
import { freePort, killStragglers, repoRoot, runJson, serve, start as startCommand } from "./support.ts"

const adminUrl = process.env.DATABASE_URL?.trim() || undefined
const replicaUrl = process.env.DATABASE_REPLICA_URL?.trim() || undefined
const why = adminUrl === undefined
  ? "DATABASE_URL is not set"
  : replicaUrl === undefined
  ? "DATABASE_REPLICA_URL is not set (scripts/replica.sh makes the replica and prints it)"
  : undefined
if (why !== undefined) console.info(`read-replicas: skipped: ${why}`)

const name = `w_replica_${process.pid}_${Date.now().toString(36)}`
const on = (base: string) => {
  const url = new URL(base)
  url.pathname = `/${name}`
  return url.toString()
}
/** One statement through psql, its rows as text. */
const psql = (url: string, statement: string): string =>
  execFileSync("psql", [url, "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", statement], { encoding: "utf8" }).trim()
const replicaScript = (args: ReadonlyArray<string> = []) =>
  execFileSync(join(repoRoot, "scripts", "replica.sh"), args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms))
/** Generous: other tests' writes on the same cluster can keep the replica seconds behind. */
const until = async <A>(what: string, attempt: () => Promise<A | undefined>, ms = 90_000): Promise<A> => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const found = await attempt().catch(() => undefined)
    if (found !== undefined) return found
    await sleep(100)
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe.skipIf(why !== undefined)("read replicas", () => {
  const env = () => ({ DATABASE_URL: on(adminUrl!) })
  let owner = ""
  let other = ""
  let ids: Array<string> = []

  let release = () => {}
  beforeAll(async () => {
    release = await holdReplica()
    psql(adminUrl!, `CREATE DATABASE ${name}`)
    await runJson(["migrate"], { env: env() })
    await runJson(["seed", "--listings", "40", "--seed", "7"], { env: env() })
    const keyOf = async (label: string) => {
      const account = await runJson(["accounts", "create", "--name", label, "--plan", "business"], { env: env() })
      return (await runJson(["keys", "create", account.id, "--name", "k"], { env: env() })).key as string
    }
    owner = await keyOf("owner")
    other = await keyOf("other")
    ids = psql(on(adminUrl!), "SELECT id FROM listings WHERE status = 'active' ORDER BY id").split("\n")
    // The replica has the database once it has replayed its creation and the seed.
    await until("the replica to hold the seed", async () => psql(on(replicaUrl!), "SELECT count(*) FROM listings") === psql(on(adminUrl!), "SELECT count(*) FROM listings") ? true : undefined)
  }, 900_000)

  afterEach(async () => {
    try {
      psql(replicaUrl!, "SELECT pg_wal_replay_resume()")
    } catch {
      // Stopped by the test itself, or not paused.
    }
    replicaScript()
    await killStragglers()
  })
  afterAll(() => {
    try {
      psql(adminUrl!, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    } finally {
      release()
    }
  })

  const start = async (extra: Record<string, string> = {}) => {
    const metricsPort = await freePort()
    const running = await serve({
      env: { ...env(), DATABASE_READ_URL: on(replicaUrl!), DROPSHELF_METRICS_PORT: String(metricsPort), ...extra }
    })
    const get = (path: string, key = owner) => fetch(`${running.base}${path}`, { headers: { authorization: `Bearer ${key}` } })
    const replicaState = async () =>
      ((await (await fetch(`${running.base}/readyz`)).json()) as { replicas?: Record<string, string> }).replicas?.[`127.0.0.1:${new URL(replicaUrl!).port}/${name}`]
    await until("the replica to stream", async () => (await replicaState()) === "streaming" ? true : undefined)
    return { ...running, get, replicaState, metricsPort }
  }

  it("a caller's reads show its own write while the replica has not replayed it; other callers read the replica", async () => {
    // A bound past the test's length: the paused replica stays in use, so only the caller's write sends its reads to the primary.
    const server = await start({ DROPSHELF_READ_MAX_LAG_MS: "600000" })
    const id = ids[0]!
    const revealed = await fetch(`${server.base}/api/v1/domains/${id}/reveal`, { method: "POST", headers: { authorization: `Bearer ${owner}` } })
    expect(revealed.status, await revealed.clone().text()).toBe(200)
    // A page hands out a synced_at; once the replica has replayed past it (and the sampler has
    // seen that), a snapshot may read from the replica too.
    expect((await server.get("/api/v1/domains?limit=1", other)).status).toBe(200)
    const position = psql(adminUrl!, "SELECT pg_current_wal_lsn()")
    await until("the replica to replay the page's watermark", async () =>
      psql(replicaUrl!, `SELECT pg_last_wal_replay_lsn() >= '${position}'::pg_lsn`) === "t" ? true : undefined)
    await sleep(300)
    psql(replicaUrl!, "SELECT pg_wal_replay_pause()")
    await until("replay to pause", async () => psql(replicaUrl!, "SELECT pg_get_wal_replay_pause_state()") === "paused" ? true : undefined)
    const held = await fetch(`${server.base}/api/v1/domains/${id}/hold`, { method: "POST", headers: { authorization: `Bearer ${owner}` } })
    expect(held.status, await held.clone().text()).toBe(200)
    const mine = await server.get(`/api/v1/domains/${id}`)
    expect(mine.status).toBe(200)
    expect(((await mine.json()) as { hold_state: string }).hold_state).toBe("mine")
    // Another caller is answered by the replica, which has not replayed the hold yet.
    const theirs = await server.get(`/api/v1/domains/${id}`, other)
    expect(((await theirs.json()) as { hold_state: string }).hold_state).toBe("none")
    expect(await server.replicaState()).toBe("streaming")
    // The bulk snapshot the same way: the owner's from the primary, the other's from the replica.
    const snapshotRow = async (key: string) => {
      const body = await (await server.get("/api/v1/domains/snapshot", key)).text()
      const line = body.split("\n").find((candidate) => candidate.includes(`"id":"${id}"`))
      return (JSON.parse(line!) as { hold_state: string }).hold_state
    }
    expect(await snapshotRow(owner)).toBe("mine")
    expect(await snapshotRow(other)).toBe("none")

    psql(replicaUrl!, "SELECT pg_wal_replay_resume()")
    await until("the replica to replay the hold", async () => {
      const seen = await (await server.get(`/api/v1/domains/${id}`, other)).json() as { hold_state: string }
      return seen.hold_state === "other" ? true : undefined
    })
    await server.server.stop("SIGTERM")
  }, 240_000)

  it("dropshelf worker reads the primary only: DATABASE_READ_URL is serve's", async () => {
    const worker = startCommand(["worker"], { env: { ...env(), DATABASE_READ_URL: on("postgres://postgres@127.0.0.1:1/") } })
    await worker.waitFor(/watch worker running/)
    await sleep(1_000)
    expect(worker.stdout() + worker.stderr()).not.toMatch(/read replica/)
    await worker.stop("SIGTERM")
  }, 60_000)

  it("the replica stopped under load costs no request a 5xx; /readyz and the metrics say down, then streaming once it is back", async () => {
    // Counted, never refused: the load is to meet the replica's stop, not the key's limit.
    const server = await start({ DROPSHELF_RATE_LIMIT: "count-only", DROPSHELF_READ_MAX_LAG_MS: "600000" })
    // The replica's pool is measured beside the primary's, by its own name.
    const replicaPool = new RegExp(`db_client_connection_max\\{db_client_connection_pool_name="127\\.0\\.0\\.1:${new URL(replicaUrl!).port}/${name}"\\} 10`)
    await until("the replica pool's metrics", async () =>
      replicaPool.test(await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text()) ? true : undefined)
    // Single reads and /me: the reads most likely to be on the replica's connections when it stops.
    const paths = [`/api/v1/domains/${ids[2]}`, `/api/v1/domains/${ids[3]}`, "/api/v1/me"]
    const statuses: Array<number> = []
    let loading = true
    const load = Promise.all(Array.from({ length: 8 }, async (_, worker) => {
      for (let index = worker; loading; index++) {
        const answer = await server.get(paths[index % paths.length]!)
        statuses.push(answer.status)
        await answer.arrayBuffer()
      }
    }))
    try {
      await sleep(500)
      // Not execFileSync: the load must go on while the replica stops.
      await promisify(execFile)(join(repoRoot, "scripts", "replica.sh"), ["stop"])
      await until("/readyz to say down", async () => (await server.replicaState()) === "down" ? true : undefined)
      await sleep(500)
      const metrics = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text()
      expect(metrics).toMatch(new RegExp(`dropshelf_db_replica_state\\{replica="127\\.0\\.0\\.1:\\d+/${name}",state="down"\\} 1`))
      expect((await fetch(`${server.base}/readyz`)).status).toBe(200)

      replicaScript()
      await until("the replica to stream again", async () => (await server.replicaState()) === "streaming" ? true : undefined)
      await sleep(500)
    } finally {
      loading = false
      await load
    }
    expect(statuses.length).toBeGreaterThan(20)
    expect(statuses.filter((status) => status >= 500)).toEqual([])
    await server.server.stop("SIGTERM")
  }, 240_000)
})
