import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll } from "vitest"
import { copyPgliteTemplate } from "../../../scripts/PgliteTemplate.ts"
import { freePort, SERVING_LINE } from "../../server/test/processes.ts"

export { freePort }

/*
 * The CLI as an operator's script sees it: a child process, its stdout, stderr and exit code,
 * against a fresh embedded data directory, or a fresh database on the server of DATABASE_URL.
 */

const here = dirname(fileURLToPath(import.meta.url))
export const repoRoot = resolve(here, "..", "..", "..")
export const mainScript = join(repoRoot, "apps", "cli", "src", "main.ts")
export const binScript = join(repoRoot, "apps", "cli", "bin", "dropshelf.js")
/** The Node 24 the repo pins: the CLI runs on type stripping. */
export const node24 = join(repoRoot, "node_modules", "node", "bin", "node")

export interface Outcome {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Strips the environment of anything that would point the CLI somewhere else. */
const baseEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const name of ["DATABASE_URL", "DROPSHELF_DATA_DIR", "PORT", "HOST", "REDIS_URL"]) delete env[name]
  return env
}

export interface Target {
  readonly name: string
  readonly env: Record<string, string>
  readonly embedded: boolean
  readonly dispose: () => Promise<void>
}

/**
 * A data directory of its own. By default it holds a copy of the empty PGlite database
 * (scripts/PgliteTemplate.ts), as a directory does once its first process has opened it: the
 * first command then skips initdb, and still applies every migration itself. `migrated`: a copy
 * of the same database migrated, as a directory is once any command has run, for the tests that
 * do not watch migrations. `empty`: a directory that does not exist yet, as on a new machine.
 */
export interface TargetOptions {
  readonly empty?: boolean
  readonly migrated?: boolean
}

export const embeddedTarget = (options: TargetOptions = {}): Target => {
  const dir = mkdtempSync(join(tmpdir(), "dropshelf-cli-"))
  if (options.empty !== true) copyPgliteTemplate(join(dir, "data", "pgdata"), { migrated: options.migrated === true })
  return {
    name: "embedded",
    embedded: true,
    env: { DROPSHELF_DATA_DIR: join(dir, "data") },
    dispose: async () => rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * For a describe block: a maker of fresh embedded targets, each disposed after the block.
 * Call it in the block's body, where vitest registers the `afterAll`.
 */
export const embeddedTargets = (options: TargetOptions = {}): (() => Target) => {
  const made: Array<Target> = []
  afterAll(async () => {
    for (const target of made) await target.dispose()
  })
  return () => {
    const target = embeddedTarget(options)
    made.push(target)
    return target
  }
}

const adminRun = (url: string, statements: ReadonlyArray<string>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const sql = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 1 })
        for (const statement of statements) yield* sql.unsafe(statement)
      })
    ).pipe(Effect.provide(Reactivity.layer), Effect.orDie)
  )

/** A database of its own on the server of `adminUrl`, dropped by `dispose`. */
export const serverTarget = async (adminUrl: string): Promise<Target> => {
  const name = `dropshelf_cli_${process.pid}_${Date.now().toString(36)}`
  await adminRun(adminUrl, [`CREATE DATABASE ${name}`])
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    name: "server",
    embedded: false,
    env: { DATABASE_URL: url.toString() },
    dispose: () => adminRun(adminUrl, [`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`])
  }
}

/** Children still running; a test that timed out must not leave one holding the data directory. */
const running = new Set<ChildProcess>()

const track = (child: ChildProcess) => {
  running.add(child)
  child.on("close", () => running.delete(child))
}

/** Kills what a failed or timed-out test left running (call in afterEach), but for the children in `keep`. */
export const killStragglers = async (keep: ReadonlyArray<ChildProcess> = []) => {
  const left = [...running].filter((child) => !keep.includes(child))
  for (const child of left) child.kill("SIGKILL")
  await Promise.all(left.map((child) => child.exitCode !== null || child.signalCode !== null
    ? undefined
    : new Promise((resolveClose) => child.once("close", resolveClose))))
}

export interface RunOptions {
  readonly env?: Record<string, string>
  readonly input?: string
  /**
   * Run through this executable and script instead of Node 24 on the launcher, bin/dropshelf.js
   * (which runs its bundle of the current sources, as `npx dropshelf` does); without a script,
   * the executable is the CLI itself, started through its `#!` line.
   */
  readonly via?: { readonly executable: string; readonly script?: string; readonly path?: string }
}

const commandOf = (args: ReadonlyArray<string>, via: RunOptions["via"]): [string, Array<string>] =>
  via === undefined
    ? [node24, [binScript, ...args]]
    : [via.executable, via.script === undefined ? [...args] : [via.script, ...args]]

/** Runs `dropshelf <args>` to completion. */
export const run = (args: ReadonlyArray<string>, options: RunOptions = {}): Promise<Outcome> =>
  new Promise((resolvePromise, reject) => {
    const env = { ...baseEnv(), ...options.env }
    if (options.via?.path !== undefined) env.PATH = options.via.path
    const [executable, argv] = commandOf(args, options.via)
    const child = spawn(executable, argv, {
      cwd: repoRoot,
      env,
      stdio: ["pipe", "pipe", "pipe"]
    })
    track(child)
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code, signal) => resolvePromise({ code, signal, stdout, stderr }))
    child.stdin.end(options.input ?? "")
  })

/** Runs a command that must succeed with `--json`, and returns its one JSON document. */
export const runJson = async (args: ReadonlyArray<string>, options: RunOptions = {}): Promise<any> => {
  const outcome = await run([...args, "--json"], options)
  if (outcome.code !== 0) {
    throw new Error(`dropshelf ${args.join(" ")} exited ${outcome.code}: ${outcome.stderr}`)
  }
  return JSON.parse(outcome.stdout)
}

/** A long-running command (serve, demo), with a way to wait for a line on stderr and to stop it. */
export interface Running {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>
  readonly stop: (signal?: NodeJS.Signals) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

export const start = (args: ReadonlyArray<string>, options: RunOptions = {}): Running => {
  const env = { ...baseEnv(), ...options.env }
  if (options.via?.path !== undefined) env.PATH = options.via.path
  const [executable, argv] = commandOf(args, options.via)
  const child = spawn(executable, argv, {
    cwd: repoRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  track(child)
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
    child.on("close", (code, signal) => resolveExit({ code, signal }))
  )
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor: async (pattern, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const match = stderr.match(pattern) ?? stdout.match(pattern)
        if (match !== null) return match
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode} before ${pattern}: ${stderr}`)
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; stderr: ${stderr}`)
        await new Promise((wake) => setTimeout(wake, 100))
      }
    },
    stop: (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    }
  }
}

/** A process's command line, as the kernel has it (Linux). */
export const commandLine = (pid: number): Array<string> =>
  readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((arg) => arg !== "")

/** The pids whose parent is `pid` (Linux: read from every /proc/<pid>/stat). */
export const childrenOf = (pid: number): Array<number> =>
  readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8")
      // pid (comm) state ppid …; comm may hold spaces and parentheses, so read after the last ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      return ppid === pid ? [Number(name)] : []
    } catch {
      return [] // exited while we looked
    }
  })

/**
 * `dropshelf serve` on a port the system picks (`--port 0`), once it listens, with that port: a
 * port found free beforehand can be taken by another process before the server binds it.
 */
export const serve = async (options: RunOptions = {}): Promise<{ readonly server: Running; readonly port: number; readonly base: string }> => {
  const server = start(["serve", "--port", "0"], options)
  const port = Number((await server.waitFor(SERVING_LINE))[1])
  return { server, port, base: `http://127.0.0.1:${port}` }
}

/** A failure as the contract wants it: non-zero, nothing on stdout, exactly one line on stderr. */
export const expectOneLineFailure = (outcome: Outcome, code: number, pattern: RegExp) => {
  const lines = outcome.stderr.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("npm warn"))
  if (outcome.code !== code || lines.length !== 1 || !pattern.test(lines[0]!) || outcome.stdout !== "") {
    throw new Error(
      `expected exit ${code} with one stderr line matching ${pattern}; got exit ${outcome.code}, stdout ${JSON.stringify(outcome.stdout)}, stderr ${JSON.stringify(outcome.stderr)}`
    )
  }
}

/** What a `serve` started through `via` is, read from /proc while it serves. */
export interface ServingProcess {
  /** The command line of the pid that was spawned. */
  readonly commandLine: ReadonlyArray<string>
  /** The command lines of that pid's children (none when it serves in the pid it was started as). */
  readonly children: ReadonlyArray<ReadonlyArray<string>>
}

/** Starts `serve` through `via` on a fresh embedded directory, reads its process once it answers, and stops it. */
export const inspectServing = async (via: NonNullable<RunOptions["via"]>): Promise<ServingProcess> => {
  const target = embeddedTarget()
  try {
    const { server, port } = await serve({ env: target.env, via })
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).status !== 200) throw new Error("healthz did not answer 200")
      const pid = server.child.pid!
      return { commandLine: commandLine(pid), children: childrenOf(pid).map(commandLine) }
    } finally {
      const exit = await server.stop("SIGTERM")
      if (exit.code !== 0) throw new Error(`serve exited ${JSON.stringify(exit)}: ${server.stderr()}`)
    }
  } finally {
    await target.dispose()
  }
}
