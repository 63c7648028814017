import { execFileSync } from "node:child_process"
import { existsSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { embeddedTarget, expectOneLineFailure, killStragglers, run, runJson, type RunOptions, serve, serverTarget, type Target } from "./support.ts"

/*
 * Backups that restore: a directory in use (seeded, a listing delisted, reveals and a hold made
 * through the API), backed up while it serves, wiped, restored; everything reads the same
 * afterwards, and a `since` run continues from the watermark it had. Embedded: `dropshelf backup`
 * beside the server, `dropshelf restore`. Server PostgreSQL: the pg_dump/pg_restore commands of
 * docs/operations.md, which `dropshelf backup` names when it refuses.
 */

const TIMEOUT = { timeout: 300_000 }
const adminUrl = process.env.DATABASE_URL?.trim()
const hasPgTools = (() => {
  try {
    execFileSync("pg_dump", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

interface Observed {
  readonly me: unknown
  readonly holds: unknown
  readonly sinceFromWatermark: unknown
  readonly fullFeed: unknown
  readonly accounts: unknown
  readonly keys: unknown
  readonly heldList: unknown
  readonly reveals: unknown
  readonly listing: unknown
}

/** A directory in use: a business account, a seeded directory with a tombstone, two reveals and a hold. */
/** Before every row of the test's directory, and well inside the since feed's horizon: the whole feed, tombstones included. */
const dayAgo = new Date(Date.now() - 86_400_000).toISOString()

const prepare = async (on: RunOptions, base: string) => {
  const account = await runJson(["accounts", "create", "--name", "backed-up", "--plan", "business"], on)
  const { key } = await runJson(["keys", "create", account.id, "--name", "main"], on)
  await runJson(["seed", "--listings", "120", "--seed", "3"], on)
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } })
  const page = await (await api("/api/v1/domains?limit=5")).json() as { data: Array<{ id: string }> }
  const [held, revealed, delisted] = page.data.map((row) => row.id)
  expect((await api(`/api/v1/domains/${held}/reveal`, { method: "POST" })).status).toBe(200)
  expect((await api(`/api/v1/domains/${revealed}/reveal`, { method: "POST" })).status).toBe(200)
  expect((await api(`/api/v1/domains/${held}/hold`, { method: "POST" })).status).toBe(200)
  expect(await runJson(["delist", delisted!, "--reason", "sold"], on)).toEqual({ delisted: [delisted] })
  // A since consumer's state: the whole feed read once, its watermark kept.
  const first = await (await api(`/api/v1/domains?since=${encodeURIComponent(dayAgo)}&limit=250`)).json() as { synced_at: string }
  return { account, key, api, watermark: first.synced_at, listingId: held! }
}

/** What an operator and a client read of the directory; the same before the backup and after the restore. */
const observe = async (
  on: RunOptions,
  state: { readonly account: { id: string }; readonly api: (path: string) => Promise<Response>; readonly watermark: string; readonly listingId: string }
): Promise<Observed> => {
  const json = async (path: string) => {
    const response = await state.api(path)
    expect(response.status).toBe(200)
    const body = await response.json() as Record<string, unknown>
    // The feed's own watermark is the clock's, not the data's.
    delete body.synced_at
    return body
  }
  return {
    // A key's last use is written at most once a minute: two readings a minute apart may differ.
    me: await json("/api/v1/me").then(({ rate_limit: _, key, ...rest }) => {
      const { last_used_at: __, ...keyRest } = key as Record<string, unknown>
      return { ...rest, key: keyRest }
    }),
    holds: await json("/api/v1/holds"),
    sinceFromWatermark: await json(`/api/v1/domains?since=${encodeURIComponent(state.watermark)}&limit=250`),
    fullFeed: await json(`/api/v1/domains?since=${encodeURIComponent(dayAgo)}&limit=250`),
    accounts: await runJson(["accounts", "list", "--limit", "1000"], on),
    keys: await runJson(["keys", "list", state.account.id], on).then((keys) =>
      keys.data.map(({ last_used_at: _, ...key }: Record<string, unknown>) => key)
    ),
    heldList: await runJson(["holds", "list", "--account", state.account.id], on),
    reveals: await runJson(["reveals", "list", state.account.id], on),
    listing: await runJson(["listings", "show", state.listingId], on)
  }
}

const serving = async (on: RunOptions) => {
  const { server, base } = await serve(on)
  return { server, base }
}

describe("backup and restore", TIMEOUT, () => {
  const targets: Array<Target> = []
  afterEach(() => killStragglers())
  afterAll(async () => {
    for (const target of targets) await target.dispose()
  })

  it("embedded: a backup taken while serving restores into an empty data directory, and reads the same", async () => {
    const target = embeddedTarget({ migrated: true })
    targets.push(target)
    const on = { env: target.env }
    const file = join(tmpdir(), `dropshelf-backup-${process.pid}-${Date.now()}.tar.gz`)

    const first = await serving(on)
    let before: Observed
    let state: Awaited<ReturnType<typeof prepare>>
    try {
      state = await prepare(on, first.base)
      before = await observe(on, state)
      const report = await runJson(["backup", file], on)
      expect(report).toEqual({ file, bytes: expect.any(Number) })
      expect(report.bytes).toBeGreaterThan(0)
    } finally {
      expect(await first.server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    }

    // Into a directory that holds a database: refused, nothing changed.
    expectOneLineFailure(await run(["restore", file, "--json"], on), 1, /already holds a database/)
    rmSync(target.env.DROPSHELF_DATA_DIR!, { recursive: true, force: true })
    expect(await runJson(["restore", file], on)).toEqual({ restored: file, dataDir: target.env.DROPSHELF_DATA_DIR })

    const second = await serving(on)
    try {
      const after = await observe(on, { ...state!, api: (path) => fetch(`${second.base}${path}`, { headers: { authorization: `Bearer ${state.key}` } }) })
      expect(after).toEqual(before!)
    } finally {
      expect(await second.server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
      rmSync(file, { force: true })
    }
    expectOneLineFailure(await run(["restore", join(tmpdir(), "no-such-backup.tar.gz"), "--json"], on), 2, /cannot read the backup/)
    // A file that is no backup: refused, and the empty directory stays without a database.
    const garbage = join(tmpdir(), `dropshelf-not-a-backup-${process.pid}.tar.gz`)
    writeFileSync(garbage, "not a backup\n")
    const fresh = { env: { DROPSHELF_DATA_DIR: join(target.env.DROPSHELF_DATA_DIR!, "..", "fresh") } }
    expectOneLineFailure(await run(["restore", garbage, "--json"], fresh), 1, /not a dropshelf backup/)
    expect(existsSync(join(fresh.env.DROPSHELF_DATA_DIR, "pgdata"))).toBe(false)
    rmSync(garbage, { force: true })
  })

  const serverSkip = adminUrl === undefined || adminUrl === "" ? "DATABASE_URL is not set" : hasPgTools ? undefined : "pg_dump is not on PATH"
  it.skipIf(serverSkip !== undefined)(
    `server PostgreSQL: dropshelf refuses and names pg_dump; the documented pg_dump and pg_restore restore into an empty database that reads the same${serverSkip === undefined ? "" : ` (skipped: ${serverSkip})`}`,
    async () => {
      const source = await serverTarget(adminUrl!)
      const empty = await serverTarget(adminUrl!)
      targets.push(source, empty)
      const on = { env: source.env }
      const file = join(tmpdir(), `dropshelf-pgdump-${process.pid}-${Date.now()}.dump`)
      expect((await run(["migrate", "--json"], on)).code).toBe(0)

      expectOneLineFailure(await run(["backup", file, "--json"], on), 1, /pg_dump --format=custom/)
      expectOneLineFailure(await run(["restore", file, "--json"], on), 1, /pg_restore/)

      const first = await serving(on)
      let before: Observed
      let state: Awaited<ReturnType<typeof prepare>>
      try {
        state = await prepare(on, first.base)
        before = await observe(on, state)
        // docs/operations.md, "Backup and restore", word for word.
        execFileSync("pg_dump", ["--format=custom", `--file=${file}`, source.env.DATABASE_URL!])
      } finally {
        expect(await first.server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
      }
      execFileSync("pg_restore", ["--no-owner", `--dbname=${empty.env.DATABASE_URL!}`, file])

      const restored = { env: empty.env }
      const second = await serving(restored)
      try {
        const after = await observe(restored, { ...state!, api: (path) => fetch(`${second.base}${path}`, { headers: { authorization: `Bearer ${state.key}` } }) })
        expect(after).toEqual(before!)
      } finally {
        expect(await second.server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
        rmSync(file, { force: true })
      }
    }
  )
})
