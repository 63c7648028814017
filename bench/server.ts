/**
 * What the benchmarks share: the `dropshelf` CLI on a bench database, a key of a given plan, the
 * real server started with the rate limiter counting but never refusing, and the load
 * generator (`load.ts`) run as its own process.
 *
 * The CLI and server measured are the bundle of `npm run build` (built here, into `dist/`), as a
 * deployment runs them; `startServer(..., { from: "sources" })` starts the TypeScript sources
 * instead, as `npx dropshelf serve` does.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { build, launcherNodeFlags } from "../scripts/build.ts"
import type { Walk } from "./load.ts"
import { databaseUrl } from "./postgres.ts"

const node = process.execPath
const root = join(import.meta.dirname, "..")
/**
 * The CLI from its TypeScript sources, and as the bundle a deployment runs: built on import,
 * unless BENCH_BUNDLE names one built before (to compare two builds, each copied inside the
 * repository so that it finds node_modules: `BENCH_BUNDLE=dist-a/dropshelf.js`).
 */
export const sources = join(root, "apps", "cli", "src", "launch.ts")
const given = process.env.BENCH_BUNDLE
if (given === undefined) await build(join(root, "dist"))
export const cli = given === undefined ? join(root, "dist", "dropshelf.js") : resolve(given)

/** One CLI command on `databaseName`, its `--json` output parsed. */
export const dropshelf = (databaseName: string, args: ReadonlyArray<string>) =>
  JSON.parse(execFileSync(node, [cli, ...args, "--json"], {
    encoding: "utf8",
    env: { ...process.env, DATABASE_URL: databaseUrl(databaseName) },
    maxBuffer: 64 * 1024 * 1024
  }))

/** A new account on `plan` and the secret of a key of its. */
export const keyFor = (databaseName: string, plan: "free" | "pro" | "business" = "business") => {
  const account = dropshelf(databaseName, ["accounts", "create", "--name", `bench-${Date.now()}`, "--plan", plan])
  return dropshelf(databaseName, ["keys", "create", account.id, "--name", "bench"]).key as string
}

/** Resolves once `url` answers 2xx; polls every 100 ms, for at most `timeoutMs`. */
export const waitFor = async (url: string, timeoutMs = 60_000) => {
  for (let i = 0; i < timeoutMs / 100; i++) {
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${url} did not answer`)
}

/** Servers this run started, stopped however the run ends so that none outlives it. */
const children = new Set<ChildProcess>()
process.on("exit", () => {
  for (const child of children) child.kill("SIGTERM")
})

/** The horizon bench servers run with, the largest the server accepts. */
export const BENCH_SINCE_HORIZON_DAYS = 3650

/** Node flags for every server started here, from BENCH_NODE_ARGS (`--cpu-prof`, `--trace-gc`, …). */
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter((arg) => arg.length > 0)

/** `dropshelf serve` on `databaseName`, counting every request and refusing none; resolves once it answers. */
export const startServer = async (
  databaseName: string,
  port: number,
  options: { readonly from: "bundle" | "sources"; readonly env?: Record<string, string> } = { from: "bundle" }
): Promise<ChildProcess> => {
  // node started by hand, so the flags the launcher's first line gives a server run as a program.
  const child = spawn(node, [...launcherNodeFlags, ...nodeArgs, options.from === "bundle" ? cli : sources, "serve", "--port", String(port)], {
    // The longest since horizon: the since pull reaches every seeded row, and no start prunes the
    // tombstones of a database kept between runs.
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl(databaseName),
      DROPSHELF_RATE_LIMIT: "count-only",
      DROPSHELF_SINCE_HORIZON_DAYS: String(BENCH_SINCE_HORIZON_DAYS),
      ...options.env
    },
    // With flags that report (--trace-gc), the server's standard output is shown, access log and all.
    stdio: ["ignore", nodeArgs.length > 0 ? "inherit" : "ignore", "inherit"]
  })
  children.add(child)
  child.once("exit", () => children.delete(child))
  await waitFor(`http://127.0.0.1:${port}/healthz`)
  if (child.exitCode !== null) throw new Error(`the server on port ${port} exited at start (is the port taken?)`)
  return child
}

export const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

export interface LoadResult {
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly total: number
  readonly non2xx: number
  readonly errors: number
  /** Responses of the measured run by status code. */
  readonly statuses: Readonly<Record<string, number>>
  /** The first few answers that were not 200 (warm-up included): status and the start of the body. */
  readonly failures: ReadonlyArray<string>
  /** Later pages of a walk asked for when the page before had no next one. */
  readonly walksCutShort: number
  /** For walks: the 2xx latencies of pages and of single reads apart. */
  readonly kinds?: Readonly<Record<"pages" | "reads", { readonly count: number; readonly p50: number; readonly p99: number }>>
}

type LoadOptions = { readonly connections: number; readonly warmupSeconds?: number } & (
  | { readonly durationSeconds: number }
  | { readonly amount: number }
)

/** bench/load.ts in its own process, its config on standard input (a walk's thousands of paths exceed one argument's limit). */
const runLoad = (config: object): LoadResult =>
  JSON.parse(execFileSync(node, [join(import.meta.dirname, "load.ts")], {
    encoding: "utf8",
    input: JSON.stringify(config),
    maxBuffer: 16 * 1024 * 1024
  }))

/** autocannon from its own process, for `durationSeconds` or `amount` requests. */
export const load = (
  port: number,
  key: string,
  requests: ReadonlyArray<{ method?: string; path: string }>,
  options: LoadOptions
): LoadResult => runLoad({ url: `http://127.0.0.1:${port}`, headers: { authorization: `Bearer ${key}` }, requests, ...options })

/**
 * As `load`, but every connection follows `walks` (bench/load.ts), each from its own starting
 * point; given several keys, the connections take them in turn, as callers of several accounts.
 */
export const loadWalks = (
  port: number,
  key: string | ReadonlyArray<string>,
  walks: ReadonlyArray<Walk>,
  options: LoadOptions
): LoadResult => {
  const keys = typeof key === "string" ? [key] : key
  return runLoad({ url: `http://127.0.0.1:${port}`, headers: { authorization: `Bearer ${keys[0]}` }, keys, walks, ...options })
}

/** The machine's ceiling (`ceiling.ts`): a bare node:http server answering `bodyFile`'s bytes. */
export const startCeiling = async (bodyFile: string): Promise<{ readonly port: number; readonly child: ChildProcess }> => {
  const child = spawn(node, [join(import.meta.dirname, "ceiling.ts"), bodyFile], { stdio: ["ignore", "pipe", "inherit"] })
  children.add(child)
  child.once("exit", () => children.delete(child))
  const port = Number(await new Promise<string>((resolve) => child.stdout!.once("data", (data) => resolve(String(data)))))
  return { port, child }
}

/**
 * An OTLP/HTTP receiver that reads each export and answers 200, counting the bytes: what a
 * collector costs the server, without a collector's own work. A process of its own
 * (bench/otlp-sink.ts): a load run blocks this one's event loop.
 */
export const startOtlpSink = async () => {
  const counts = join(mkdtempSync(join(tmpdir(), "dropshelf-otlp-")), "counts.json")
  const child = spawn(node, [join(root, "bench", "otlp-sink.ts"), counts], { stdio: ["ignore", "pipe", "inherit"] })
  children.add(child)
  child.once("exit", () => children.delete(child))
  const port = await new Promise<number>((resolvePort) => child.stdout!.once("data", (chunk: Buffer) => resolvePort(Number(String(chunk).trim()))))
  return {
    url: `http://127.0.0.1:${port}`,
    received: (): { bytes: number; exports: number } =>
      existsSync(counts) ? JSON.parse(readFileSync(counts, "utf8")) : { bytes: 0, exports: 0 },
    close: () => stop(child)
  }
}
