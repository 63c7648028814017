import { AccountStore } from "@dropshelf/core"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { copyPgliteTemplate } from "../../../scripts/PgliteTemplate.ts"
import * as DataDirLock from "../src/DataDirLock.ts"
import { StoreSql } from "../src/index.ts"
import { DATABASE_URL } from "./support.ts"

/*
 * The embedded deployment: a persisted PGlite directory that one process at a time may open.
 * Children are real processes on the repo's Node 24.
 */

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const node = join(repoRoot, "node_modules/.bin/node")
const child = fileURLToPath(new URL("./fixtures/open-data-dir.ts", import.meta.url))

/** What a new data directory applies, in order: the migrations as released, written out so that a dropped or renamed one fails. */
const EVERY_MIGRATION = [
  "0001_initial", "0002_row_version_and_auth_notify", "0003_reshape_invented_names", "0004_idempotency_keys",
  "0005_since_horizon", "0006_watches", "0007_key_expiry", "0010_read_indexes", "0011_search_statistics",
  "0012_running_holds", "0013_tld_latest", "0014_running_holds_by_end", "0015_watch_event_versions",
  "0016_account_email", "0017_sessions", "0019_passkeys", "0020_security_events", "0021_authorizations",
  "0022_linked_in_indexes"
]

const freshDir = () => mkdtempSync(join(tmpdir(), "dropshelf-embedded-"))

/** For the tests of the lock: a directory whose database initdb has made already (a copy of it, scripts/PgliteTemplate.ts). */
const initialisedDir = () => {
  const dataDir = freshDir()
  copyPgliteTemplate(join(dataDir, "pgdata"))
  return dataDir
}

interface Running {
  readonly process: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<number | null>
}

const start = (dataDir: string): Running => {
  const proc = spawn(node, [child, dataDir], { stdio: ["pipe", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  proc.stdout!.on("data", (chunk) => (stdout += String(chunk)))
  proc.stderr!.on("data", (chunk) => (stderr += String(chunk)))
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)))
  return { process: proc, stdout: () => stdout, stderr: () => stderr, exited }
}

const waitFor = async (predicate: () => boolean, what: string, ms = 45_000) => {
  const until = Date.now() + ms
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const open = (dataDir: string) => Layer.fresh(StoreSql.layerPglite({ dataDir }))

describe("sql (pglite) embedded data directory", () => {
  it.skipIf(process.platform === "win32")("a data directory it makes is its owner's alone (mode 0700)", () => {
    const parent = freshDir()
    const dataDir = join(parent, "made", "here")
    const lock = DataDirLock.acquire(dataDir)
    try {
      assert.strictEqual(lock._tag, "Acquired")
      assert.strictEqual(statSync(dataDir).mode & 0o777, 0o700)
      assert.strictEqual(statSync(join(parent, "made")).mode & 0o777, 0o700)
    } finally {
      if (lock._tag === "Acquired") lock.release()
      rmSync(parent, { recursive: true, force: true })
    }
  })

  it.live("persists across reopening; migrations apply once; the cursor secret is kept", () =>
    Effect.gen(function*() {
      const dataDir = freshDir()
      const first = yield* Effect.gen(function*() {
        const applied = yield* StoreSql.migrate
        const again = yield* StoreSql.migrate
        const accounts = yield* AccountStore.AccountStore
        const account = yield* accounts.create({ name: "Persisted", plan: "pro", at: Date.UTC(2026, 0, 1) })
        return { applied, again, account, secret: yield* StoreSql.cursorSecret }
      }).pipe(Effect.provide(open(dataDir)))
      assert.deepStrictEqual(first.applied, EVERY_MIGRATION)
      assert.deepStrictEqual(first.again, [])
      assert.strictEqual(first.secret.length, 32)

      const second = yield* Effect.gen(function*() {
        const applied = yield* StoreSql.migrate
        const accounts = yield* AccountStore.AccountStore
        return { applied, account: yield* accounts.find(first.account.id), secret: yield* StoreSql.cursorSecret }
      }).pipe(Effect.provide(open(dataDir)))
      assert.deepStrictEqual(second.applied, [])
      assert.deepStrictEqual(second.account, first.account)
      assert.deepStrictEqual(second.secret, first.secret)
      rmSync(dataDir, { recursive: true, force: true })
    }))

  it.live("a second process is refused with one line naming the holder's pid", () =>
    Effect.gen(function*() {
      const dataDir = initialisedDir()
      yield* Effect.gen(function*() {
        yield* StoreSql.migrate
        const second = start(dataDir)
        const code = yield* Effect.promise(() => second.exited)
        assert.strictEqual(code, 1)
        const lines = second.stderr().trimEnd().split("\n")
        assert.lengthOf(lines, 1, second.stderr())
        assert.include(lines[0], `in use by process ${process.pid}`)
        assert.include(lines[0], dataDir)
        assert.strictEqual(second.stdout(), "")
      }).pipe(Effect.provide(open(dataDir)))
      rmSync(dataDir, { recursive: true, force: true })
    }))

  it.live("this process is refused while a child holds the directory, and takes over once it dies", () =>
    Effect.gen(function*() {
      const dataDir = initialisedDir()
      const holder = start(dataDir)
      yield* Effect.promise(() => waitFor(() => holder.stdout().includes("opened"), "the child to open the store"))
      const refused = yield* Effect.flip(Effect.provide(StoreSql.migrate, open(dataDir)))
      assert.strictEqual(refused.reason, "DataDirInUse")
      assert.include(refused.message, `in use by process ${holder.process.pid}`)
      assert.notInclude(refused.message, "\n")

      holder.process.kill("SIGKILL")
      yield* Effect.promise(() => holder.exited)
      // The dead child's lock is stale now; its migrations are in the directory.
      const applied = yield* Effect.provide(StoreSql.migrate, open(dataDir))
      assert.deepStrictEqual(applied, [])
      rmSync(dataDir, { recursive: true, force: true })
    }))

  it.live("one process cannot open one directory twice; a garbage lock file counts as stale", () =>
    Effect.gen(function*() {
      const dataDir = initialisedDir()
      yield* Effect.gen(function*() {
        const refused = yield* Effect.flip(Effect.provide(StoreSql.migrate, open(dataDir)))
        assert.strictEqual(refused.reason, "DataDirInUse")
        assert.include(refused.message, `process ${process.pid}`)
      }).pipe(Effect.provide(open(dataDir)))
      writeFileSync(join(dataDir, "dropshelf.lock"), "not a pid")
      const applied = yield* Effect.provide(StoreSql.migrate, open(dataDir))
      assert.deepStrictEqual(applied, EVERY_MIGRATION)
      rmSync(dataDir, { recursive: true, force: true })
    }))

  it.live("layerFromEnv: no DATABASE_URL means PGlite in DROPSHELF_DATA_DIR", () =>
    Effect.gen(function*() {
      const dataDir = freshDir()
      const env = ConfigProvider.layer(ConfigProvider.fromEnvRecord({ DATABASE_URL: "", DROPSHELF_DATA_DIR: dataDir }))
      const driver = yield* Effect.gen(function*() {
        yield* StoreSql.migrate
        assert.isTrue(existsSync(join(dataDir, "dropshelf.lock")))
        return (yield* SqlClient.SqlClient).driver
      }).pipe(Effect.provide(StoreSql.layerFromEnv.pipe(Layer.fresh, Layer.provide(env))))
      assert.strictEqual(driver, "pglite")
      assert.isTrue(existsSync(join(dataDir, "pgdata", "PG_VERSION")))
      assert.isFalse(existsSync(join(dataDir, "dropshelf.lock")))
      rmSync(dataDir, { recursive: true, force: true })
    }))

  it.live.skipIf(DATABASE_URL === undefined)(
    `layerFromEnv: DATABASE_URL means the server${DATABASE_URL === undefined ? " (skipped: DATABASE_URL not set)" : ""}`,
    () =>
      Effect.gen(function*() {
        const env = ConfigProvider.layer(ConfigProvider.fromEnvRecord({ DATABASE_URL: DATABASE_URL! }))
        const rows = yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ one: number }>`SELECT 1 AS one`
        }).pipe(Effect.provide(StoreSql.layerFromEnv.pipe(Layer.fresh, Layer.provide(env))), Effect.orDie)
        assert.deepStrictEqual(rows, [{ one: 1 }])
      })
  )

  it.live("a pool too small to share with the key-change listener, or pipelining fewer than one statement, is refused, not left waiting", () =>
    Effect.gen(function*() {
      const refusedFor = (options: Omit<StoreSql.ServerPoolOptions, "url">) =>
        Effect.flip(
          Effect.provide(StoreSql.migrate, Layer.fresh(StoreSql.layerServer({ url: "postgres://nobody@127.0.0.1:1/none", ...options })))
        )
      for (const maxConnections of [1, 0, 1.5]) {
        const refused = yield* refusedFor({ maxConnections })
        assert.strictEqual(refused.reason, "OpenFailed")
        assert.include(refused.message, "maxConnections")
      }
      for (const statementsPerConnection of [0, -1, 2.5]) {
        const refused = yield* refusedFor({ statementsPerConnection })
        assert.strictEqual(refused.reason, "OpenFailed")
        assert.include(refused.message, "statementsPerConnection")
      }
    }))

  it.live.skipIf(DATABASE_URL === undefined)(
    `layerServer: a pool of two answers statements beside the listener${DATABASE_URL === undefined ? " (skipped: DATABASE_URL not set)" : ""}`,
    () =>
      Effect.gen(function*() {
        const rows = yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ one: number }>`SELECT 1 AS one`
        }).pipe(Effect.provide(Layer.fresh(StoreSql.layerServer({ url: DATABASE_URL!, maxConnections: 2 }))), Effect.timeout("20 seconds"), Effect.orDie)
        assert.deepStrictEqual(rows, [{ one: 1 }])
      })
  )

  it.live("a server that cannot be reached is a one-line StoreOpenError", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(
        Effect.provide(StoreSql.migrate, Layer.fresh(StoreSql.layerServer({ url: "postgres://nobody@127.0.0.1:1/none" })))
      )
      assert.strictEqual(refused.reason, "ConnectionFailed")
      assert.notInclude(refused.message, "\n")
    }))
})
