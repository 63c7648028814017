/**
 * `dropshelf` as real processes, for the tests that need what only a process shows (several
 * instances on one database, a server killed with SIGKILL): the CLI as `npx dropshelf` runs it
 * (the launcher on the pinned Node 24), `serve` on a port, and a fresh database on the server of
 * DATABASE_URL.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const node = join(repoRoot, "node_modules", "node", "bin", "node")
const launcher = join(repoRoot, "apps", "cli", "bin", "dropshelf.js")

/** The environment of a child: only what the test sets decides where it stores and counts. */
const childEnv = (env: Record<string, string>): NodeJS.ProcessEnv => {
  const base = { ...process.env }
  for (const name of ["DATABASE_URL", "DROPSHELF_DATA_DIR", "PORT", "HOST", "REDIS_URL", "DROPSHELF_RDAP_URL"]) delete base[name]
  return { ...base, ...env }
}

/** Runs `dropshelf <args> --json`; its JSON document, or a rejection with its stderr. */
export const cli = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<any> =>
  new Promise((resolveRun, reject) => {
    const child = spawn(node, [launcher, ...args, "--json"], { cwd: repoRoot, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) =>
      code === 0 ? resolveRun(JSON.parse(stdout)) : reject(new Error(`dropshelf ${args.join(" ")} exited ${code}: ${stderr}`)))
  })

/** The line `dropshelf serve` writes once it listens, with the port it bound. */
export const SERVING_LINE = /dropshelf: serving .* on http:\/\/127\.0\.0\.1:(\d+)/

/** A free TCP port on the loopback interface. */
export const freePort = (): Promise<number> =>
  new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolvePort(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

export interface Instance {
  readonly base: string
  readonly child: ChildProcess
  /** Its stdout and stderr so far, interleaved. */
  readonly output: () => string
  /** Settles when the process has exited, however it ended. */
  readonly exited: Promise<void>
  /** SIGTERM unless it has already ended, then waits for the exit. */
  readonly stop: () => Promise<void>
}

/**
 * `dropshelf serve --port <port>`, resolved once it says it is serving. By default on a port the
 * system picks (`--port 0`), read from that line: a port found free beforehand can be taken by
 * another process before the server binds it.
 */
export const serve = async (env: Record<string, string>, port = 0): Promise<Instance> => {
  const child = spawn(node, [launcher, "serve", "--port", String(port)], { cwd: repoRoot, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
  const exited = new Promise<void>((resolveExit) => child.on("close", () => resolveExit()))
  const deadline = Date.now() + 60_000
  let serving: RegExpMatchArray | null
  while ((serving = SERVING_LINE.exec(output)) === null) {
    if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}: ${output}`)
    if (Date.now() > deadline) throw new Error(`serve did not start: ${output}`)
    await new Promise((wake) => setTimeout(wake, 100))
  }
  return {
    base: `http://127.0.0.1:${serving[1]}`,
    child,
    output: () => output,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      await exited
    }
  }
}

/** A fresh database named after `tag` on the server of `adminUrl`, and a way to drop it. */
export const freshDatabase = async (adminUrl: string, tag: string) => {
  const { StoreSql } = await import("@dropshelf/store-sql")
  const onAdmin = (statement: string) =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(StoreSql.layerServerClient({ url: adminUrl }))
      yield* Context.get(context, SqlClient.SqlClient).unsafe(statement)
    })))
  const name = `dropshelf_${tag}_${process.pid}_${Date.now().toString(36)}`
  await onAdmin(`CREATE DATABASE ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => onAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}
