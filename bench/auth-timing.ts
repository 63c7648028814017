/**
 * Whether a 401 tells a revoked key from one that never existed by its time: the median time of
 * a 401 for an unknown key and for a revoked one, 1 000 requests each, alternated, over HTTP to
 * the bundle of `npm run build` (docs/decisions/0009-keys-and-refused-requests.md). Each request
 * comes from an address of its own through `X-Forwarded-For` (198.18.0.0/15, the benchmarking
 * range; the server trusts 127.0.0.1 as a proxy), so none reaches the per-address ceiling. Not
 * part of `npm test`: the figures move with the machine, and nothing here asserts them.
 *
 * Usage: node bench/auth-timing.ts
 *   embedded: a fresh data directory;
 *   server:   a fresh database on DATABASE_URL's server (skipped, with a line, when it is unset).
 * BENCH_AUTH_REQUESTS (1000) sets the requests of each kind.
 */
import { ApiKey } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Effect } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { launcherNodeFlags } from "../scripts/build.ts"
import { cli, stop, waitFor } from "./server.ts"

const REQUESTS = Number(process.env.BENCH_AUTH_REQUESTS ?? 1000)
const WARMUP = 100

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** One storage: the environment that points the CLI and the server at it. */
interface Storage {
  readonly name: string
  readonly env: NodeJS.ProcessEnv
  readonly dispose: () => void
}

const storageEnv = (storage: Record<string, string>): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const name of ["DATABASE_URL", "DROPSHELF_DATA_DIR", "REDIS_URL", "PORT", "HOST"]) delete env[name]
  return { ...env, ...storage }
}

const embedded = (): Storage => {
  const dir = mkdtempSync(join(tmpdir(), "dropshelf-auth-timing-"))
  return { name: "embedded PGlite", env: storageEnv({ DROPSHELF_DATA_DIR: join(dir, "data") }), dispose: () => rmSync(dir, { recursive: true, force: true }) }
}

const server = (adminUrl: string): Storage => {
  const name = `dropshelf_auth_timing_${process.pid}`
  const psql = (sql: string) => execFileSync("psql", [adminUrl, "-Atqc", sql])
  psql(`CREATE DATABASE ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    name: "server PostgreSQL",
    env: storageEnv({ DATABASE_URL: url.toString() }),
    dispose: () => psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
}

/** One CLI command on the storage (beside its running server), its `--json` output parsed. */
const dropshelf = (storage: Storage, args: ReadonlyArray<string>) =>
  JSON.parse(execFileSync(process.execPath, [cli, ...args, "--json"], { encoding: "utf8", env: storage.env }))

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const measure = async (storage: Storage) => {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, [...launcherNodeFlags, cli, "serve", "--port", String(port)], {
    env: { ...storage.env, DROPSHELF_TRUSTED_PROXIES: "127.0.0.1/32" },
    stdio: ["ignore", "ignore", "inherit"]
  })
  try {
    await waitFor(`http://127.0.0.1:${port}/healthz`)
    const account = dropshelf(storage, ["accounts", "create", "--name", "auth-timing", "--plan", "pro"])
    const revoked = dropshelf(storage, ["keys", "create", account.id, "--name", "revoked"])
    dropshelf(storage, ["keys", "revoke", revoked.prefix])
    const keys = {
      unknown: await Effect.runPromise(ApiKey.generateSecret.pipe(Effect.provide(StoreMemory.layerCrypto))),
      revoked: revoked.key as string
    }
    let sent = 0
    const timed = async (name: keyof typeof keys) => {
      sent++
      const headers = { authorization: `Bearer ${keys[name]}`, "x-forwarded-for": `198.18.${(sent >> 8) & 255}.${sent & 255}` }
      const started = performance.now()
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/me`, { headers })
      await response.arrayBuffer()
      const elapsed = performance.now() - started
      if (response.status !== 401) throw new Error(`a ${name} key got ${response.status}, not 401`)
      return elapsed
    }
    for (let n = 0; n < WARMUP; n++) await timed(n % 2 === 0 ? "unknown" : "revoked")
    const samples = { unknown: [] as Array<number>, revoked: [] as Array<number> }
    for (let n = 0; n < REQUESTS; n++) {
      for (const name of n % 2 === 0 ? ["unknown", "revoked"] as const : ["revoked", "unknown"] as const) samples[name].push(await timed(name))
    }
    console.log(`| ${storage.name} | ${median(samples.unknown).toFixed(3)} ms | ${median(samples.revoked).toFixed(3)} ms |`)
  } finally {
    await stop(child)
    storage.dispose()
  }
}

console.log(`median time of a 401 over ${REQUESTS} requests each, alternated (${cli})\n`)
console.log("| storage | unknown key | revoked key |")
console.log("| --- | ---: | ---: |")
await measure(embedded())
if (process.env.DATABASE_URL === undefined) console.log("server PostgreSQL: skipped, DATABASE_URL is not set")
else await measure(server(process.env.DATABASE_URL))
