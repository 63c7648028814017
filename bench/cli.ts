/**
 * How long an operator waits for `dropshelf`: whole commands timed from outside, as a person or
 * a script runs them from the repo root, each `BENCH_RUNS` (5) times after one unmeasured run;
 * median, min and max of the wall time, and where GNU time is installed (/usr/bin/time) the
 * median CPU time (user + system, of every process the command waited for) and peak RSS of the
 * largest process. On a shared machine the wall time follows the load (printed first); the CPU
 * time much less. Not part of `npm test`.
 *
 * Usage: node bench/cli.ts
 *   embedded: a fresh data directory, the CLI stopped and beside a running `dropshelf serve`;
 *   server:   a fresh database on DATABASE_URL's server (skipped, with a line, when it is unset).
 * Every command runs two ways: `npx dropshelf` (what the README says) and the binary
 * `node_modules/.bin/dropshelf` (no npm in between). Floors: `npx node -e 0`, what npx and one
 * Node start cost, and `node -e 0` on the pinned Node 24, one Node start. The unmeasured first
 * run fills Node's compile cache, as any earlier use would. BENCH_ONLY=embedded|server picks one
 * backend.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const ONLY = process.env.BENCH_ONLY
const gnuTime = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined
const launcher = join(root, "node_modules", ".bin", "dropshelf")
const node24 = join(root, "node_modules", "node", "bin", "node")

/** The environment of a shell at the repo root, pointed at one storage. */
const envFor = (storage: Record<string, string>): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const name of ["DATABASE_URL", "DROPSHELF_DATA_DIR", "PORT", "HOST", "REDIS_URL"]) delete env[name]
  // npm puts node_modules/.bin first on PATH for this script; a person's shell does not have it.
  env.PATH = (env.PATH ?? "").split(":").filter((dir) => !dir.includes("node_modules")).join(":")
  return { ...env, ...storage }
}

interface Sample {
  readonly seconds: number
  readonly cpuSeconds: number | undefined
  readonly peakMb: number | undefined
  readonly stdout: string
}

/** Runs a command once to its end; fails loudly unless it exits 0. */
const timeOnce = (command: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Sample => {
  const argv = gnuTime === undefined ? command : [gnuTime, "-f", "%M %U %S", ...command]
  const started = performance.now()
  const result = spawnSync(argv[0]!, argv.slice(1), { cwd: root, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  const seconds = (performance.now() - started) / 1000
  if (result.status !== 0) throw new Error(`${command.join(" ")} exited ${result.status}: ${result.stderr}`)
  const [peakKb, user, system] = gnuTime === undefined ? [] : result.stderr.trim().split("\n").at(-1)!.split(" ").map(Number)
  return {
    seconds,
    cpuSeconds: user === undefined || system === undefined ? undefined : user + system,
    peakMb: peakKb === undefined ? undefined : peakKb / 1024,
    stdout: result.stdout
  }
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const rows: Array<Array<string>> = []

const report = (backend: string, label: string, samples: ReadonlyArray<Sample>) => {
  const seconds = samples.map((sample) => sample.seconds)
  const cpu = samples.flatMap((sample) => (sample.cpuSeconds === undefined ? [] : [sample.cpuSeconds]))
  const peaks = samples.flatMap((sample) => (sample.peakMb === undefined ? [] : [sample.peakMb]))
  const row = [
    backend,
    label,
    median(seconds).toFixed(2),
    Math.min(...seconds).toFixed(2),
    Math.max(...seconds).toFixed(2),
    cpu.length === 0 ? "" : median(cpu).toFixed(2),
    peaks.length === 0 ? "" : median(peaks).toFixed(0)
  ]
  rows.push(row)
  console.error(row.join("  "))
}

/** Times `command` RUNS times after one warm-up; `after` runs untimed after each run. */
const measure = (
  backend: string,
  label: string,
  command: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  after?: (sample: Sample) => void
) => {
  const samples: Array<Sample> = []
  try {
    for (let run = 0; run <= RUNS; run++) {
      const sample = timeOnce(command, env)
      after?.(sample)
      if (run > 0) samples.push(sample)
    }
  } catch (error) {
    // A command that fails here (an older build refusing to run beside a server) is a result too.
    const row = [backend, label, `fails: ${String(error instanceof Error ? error.message : error).split("\n")[0]}`, "", "", "", ""]
    rows.push(row)
    console.error(row.join("  "))
    return
  }
  report(backend, label, samples)
}

const dropshelfJson = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): any => {
  const result = spawnSync(launcher, [...args, "--json"], { cwd: root, env, encoding: "utf8" })
  if (result.status !== 0) throw new Error(`dropshelf ${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

/** keys create, each key revoked before the next run so the account stays under its plan's ceiling. */
const keysCreate = (backend: string, via: string, command: ReadonlyArray<string>, env: NodeJS.ProcessEnv) => {
  let account: { id: string }
  try {
    account = dropshelfJson(["accounts", "create", "--name", "bench", "--plan", "business"], env)
  } catch (error) {
    const row = [backend, `${via} keys create`, `fails: ${String(error instanceof Error ? error.message : error).split("\n")[0]}`, "", "", "", ""]
    rows.push(row)
    console.error(row.join("  "))
    return
  }
  measure(backend, `${via} keys create`, [...command, "keys", "create", account.id, "--name", "bench", "--json"], env, (sample) => {
    dropshelfJson(["keys", "revoke", JSON.parse(sample.stdout).prefix], env)
  })
}

const startServer = async (env: NodeJS.ProcessEnv): Promise<ChildProcess> => {
  const server = spawn(launcher, ["serve", "--port", "0"], { cwd: root, env, stdio: ["ignore", "ignore", "pipe"] })
  let stderr = ""
  server.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const deadline = Date.now() + 120_000
  while (!/serving /.test(stderr)) {
    if (server.exitCode !== null || Date.now() > deadline) throw new Error(`serve did not start: ${stderr}`)
    await new Promise((wake) => setTimeout(wake, 100))
  }
  return server
}

const stopServer = (server: ChildProcess) =>
  new Promise<void>((resolveStop) => {
    server.once("close", () => resolveStop())
    server.kill("SIGTERM")
  })

const ways: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["npx dropshelf", ["npx", "dropshelf"]],
  ["bin/dropshelf", [launcher]]
]

const embedded = async () => {
  const dir = mkdtempSync(join(tmpdir(), "dropshelf-bench-cli-"))
  const env = envFor({ DROPSHELF_DATA_DIR: join(dir, "data") })
  try {
    dropshelfJson(["migrate"], env)
    measure("-", "npx node -e 0 (the floor)", ["npx", "node", "-e", "0"], env)
    measure("-", "node -e 0 (Node 24 alone)", [node24, "-e", "0"], env)
    for (const [via, command] of ways) measure("-", `${via} --help`, [...command, "--help"], env)
    for (const [via, command] of ways) keysCreate("embedded", via, command, env)
    const server = await startServer(env)
    try {
      for (const [via, command] of ways) keysCreate("embedded, server running", via, command, env)
    } finally {
      await stopServer(server)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const adminRun = (url: string, statement: string) =>
  Effect.runPromise(
    Effect.scoped(Effect.gen(function*() {
      const sql = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 1 })
      yield* sql.unsafe(statement)
    })).pipe(Effect.provide(Reactivity.layer), Effect.orDie)
  )

const server = async (adminUrl: string) => {
  const name = `dropshelf_bench_cli_${process.pid}`
  await adminRun(adminUrl, `CREATE DATABASE ${name}`)
  try {
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    const env = envFor({ DATABASE_URL: url.toString() })
    dropshelfJson(["migrate"], env)
    for (const [via, command] of ways) keysCreate("server", via, command, env)
  } finally {
    await adminRun(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
}

const load = () => (existsSync("/proc/loadavg") ? readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ") : "unknown")
console.error(`bench/cli.ts: ${RUNS} runs each after one warm-up${gnuTime === undefined ? "; no /usr/bin/time here: CPU and peak not measured" : ""}; load average ${load()}`)
if (ONLY === undefined || ONLY === "embedded") await embedded()
if (ONLY === undefined || ONLY === "server") {
  const url = process.env.DATABASE_URL?.trim()
  if (url === undefined || url === "") console.error("bench/cli.ts: server backend skipped: DATABASE_URL is not set")
  else await server(url)
}

console.error(`bench/cli.ts: load average at the end ${load()}`)
console.log("| backend | command | wall median s | min s | max s | CPU median s | peak MB |")
console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for (const row of rows) console.log(`| ${row.join(" | ")} |`)
