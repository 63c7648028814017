import { execFileSync, spawn } from "node:child_process"
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { binScript, embeddedTarget, expectOneLineFailure, inspectServing, mainScript, node24, repoRoot, run, serve } from "./support.ts"

/*
 * `npx dropshelf` must work whichever node is first on PATH (under npx, the machine's Node 20
 * that runs npm). The binary, bin/dropshelf, is a shell script that starts the repo's pinned
 * Node 24 on the launcher, bin/dropshelf.js, with node's flags: the server's flags for the
 * commands that serve, the memory flag alone for the others. The launcher runs the CLI's
 * sources with Node's compile cache. Started by an older node, it re-runs itself on the pinned
 * Node 24.
 */

/** The young-generation cap the server is measured with (docs/operations.md, Memory). */
const SEMI_SPACE = "--max-semi-space-size=16"
/** Allocation sites not pretenured: for the commands that serve alone (docs/operations.md, Memory). */
const NO_PRETENURING = "--no-allocation-site-pretenuring"

const binProgram = join(repoRoot, "apps", "cli", "bin", "dropshelf")

/** PATH as a shell outside npm sees it: npm and npx put the pinned Node 24 first, so drop those entries. */
const plainPath = (process.env.PATH ?? "").split(delimiter).filter((dir) => !dir.includes("node_modules")).join(delimiter)

const nodeOnPath = (() => {
  try {
    return execFileSync("node", ["--version"], { encoding: "utf8", env: { ...process.env, PATH: plainPath } }).trim()
  } catch {
    return undefined
  }
})()
const olderNodeOnPath = nodeOnPath !== undefined && Number(nodeOnPath.slice(1).split(".")[0]) < 24

const scratch = mkdtempSync(join(tmpdir(), "dropshelf-launcher-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** An executable shell script at `path`. */
const script = (path: string, body: string) => {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, `#!/bin/sh\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}

/** A word for `sh -c`. */
const shellWord = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`

interface Answer {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `argv` to its end. */
const ask = (argv: ReadonlyArray<string>, options: { readonly env?: NodeJS.ProcessEnv } = {}) =>
  new Promise<Answer>((resolveAnswer, reject) => {
    const [command, ...args] = argv
    const child = spawn(command!, args, { cwd: repoRoot, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolveAnswer({ code, stdout, stderr }))
  })

describe("bin/dropshelf", () => {
  /**
   * A copy of the binary in a tree laid out as npm lays out this repo (node_modules/.bin/dropshelf
   * → ../@dropshelf/cli/bin/dropshelf, node_modules/@dropshelf/cli → ../../apps/cli), beside a
   * stand-in launcher that reports how it was started, and with a pinned node and a node first on
   * PATH that record which of them ran.
   */
  const tree = () => {
    const root = mkdtempSync(join(scratch, "tree-"))
    const bin = join(root, "apps", "cli", "bin")
    mkdirSync(bin, { recursive: true })
    copyFileSync(binProgram, join(bin, "dropshelf"))
    chmodSync(join(bin, "dropshelf"), 0o755)
    writeFileSync(
      join(bin, "dropshelf.js"),
      `process.stdout.write(JSON.stringify({ pid: process.pid, execArgv: process.execArgv, args: process.argv.slice(2) }))\n` +
        `process.exitCode = Number(process.env.FAKE_EXIT ?? 0)\n`
    )
    const record = join(root, "ran")
    const pinned = script(join(root, "node_modules", "node", "bin", "node"), `echo pinned >> ${shellWord(record)}\nexec ${shellWord(node24)} "$@"`)
    mkdirSync(join(root, "node_modules", "@dropshelf"), { recursive: true })
    symlinkSync(join("..", "..", "apps", "cli"), join(root, "node_modules", "@dropshelf", "cli"))
    mkdirSync(join(root, "node_modules", ".bin"))
    symlinkSync(join("..", "@dropshelf", "cli", "bin", "dropshelf"), join(root, "node_modules", ".bin", "dropshelf"))
    const pathNode = script(join(root, "elsewhere", "node"), `echo path >> ${shellWord(record)}\nexec ${shellWord(node24)} "$@"`)
    const path = [dirname(pathNode), plainPath].join(delimiter)
    const ran = () => (existsSync(record) ? readFileSync(record, "utf8").trim().split("\n") : [])
    const start = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
      new Promise<{ pid: number | undefined; code: number | null; report: { pid: number; execArgv: Array<string>; args: Array<string> } }>(
        (resolveRun, reject) => {
          const child = spawn(join(root, "node_modules", ".bin", "dropshelf"), args, { cwd: root, env: { ...process.env, PATH: path, ...env } })
          let stdout = ""
          child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
          child.on("error", reject)
          child.on("close", (code) => resolveRun({ pid: child.pid, code, report: JSON.parse(stdout) }))
        }
      )
    return { pinned, ran, start }
  }

  it("starts the pinned node, not the one first on PATH, in the pid it was started as, with the arguments as given and the exit code passed back", async () => {
    const { ran, start } = tree()
    const args = ["keys", "create", "acct 1", "", "*", "$HOME", "it's", "--name=a\nb"]
    const outcome = await start(args, { FAKE_EXIT: "7" })
    expect(ran()).toEqual(["pinned"])
    expect(outcome.report.args).toEqual(args)
    expect(outcome.report.pid).toBe(outcome.pid)
    expect(outcome.code).toBe(7)
  })

  it("gives node the memory flag for every command, and the pretenuring flag only to the commands that serve", async () => {
    const { start } = tree()
    expect((await start(["keys", "list", "--json"])).report.execArgv).toEqual([SEMI_SPACE])
    expect((await start(["--help"])).report.execArgv).toEqual([SEMI_SPACE])
    for (const serving of [["serve", "--port", "0"], ["demo"], ["worker"], ["--log-level", "debug", "serve"]]) {
      expect((await start(serving)).report.execArgv).toEqual([SEMI_SPACE, NO_PRETENURING])
    }
  })

  it("without a pinned node, starts the node on PATH", async () => {
    const { pinned, ran, start } = tree()
    rmSync(pinned)
    expect((await start(["--version"])).report.args).toEqual(["--version"])
    expect(ran()).toEqual(["path"])
  })

  it.skipIf(!existsSync("/proc/self/cmdline"))(
    "with another node first on PATH (a shell on a machine with its own node), serves in the pid it was started as: the pinned Node 24 with the server's flags",
    async () => {
      const record = join(scratch, "path-node-ran")
      const other = script(join(scratch, "other", "node"), `echo ran >> ${shellWord(record)}\nexec ${shellWord(node24)} "$@"`)
      const serving = await inspectServing({ executable: binProgram, path: [dirname(other), plainPath].join(delimiter) })
      expect(serving.commandLine).toEqual([node24, SEMI_SPACE, NO_PRETENURING, binScript, "serve", "--port", expect.any(String)])
      expect(serving.children).toEqual([])
      expect(existsSync(record)).toBe(false)
    },
    60_000
  )

  it("a command's failure is the CLI's: its one line and exit code", async () => {
    const outcome = await run(["accounts", "create", "--plan", "free", "--json"], { via: { executable: binProgram, path: plainPath } })
    expectOneLineFailure(outcome, 2, /--name/)
  })
})

describe("bin/dropshelf.js", () => {
  /** Records every module the launcher's process loads (`node --import` it), into the file DROPSHELF_TEST_LOADED names. */
  const probe = join(scratch, "probe.mjs")
  writeFileSync(
    probe,
    `import { registerHooks } from "node:module"\nimport { appendFileSync } from "node:fs"\n` +
      `registerHooks({ load: (url, context, nextLoad) => { appendFileSync(process.env.DROPSHELF_TEST_LOADED, url + "\\n"); return nextLoad(url, context) } })\n`
  )
  let asked = 0

  /** A shell's environment without colour settings or storage: nothing else decides what the CLI prints. */
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ["NO_COLOR", "FORCE_COLOR", "TERM", "DATABASE_URL", "DROPSHELF_DATA_DIR"]) delete env[name]

  /** Asks the launcher, and what it loaded besides Node's own modules. */
  const askLauncher = async (args: ReadonlyArray<string>) => {
    const loaded = join(scratch, `loaded-${asked++}`)
    writeFileSync(loaded, "")
    const answer = await ask([node24, "--import", pathToFileURL(probe).href, binScript, ...args], {
      env: { ...env, DROPSHELF_TEST_LOADED: loaded }
    })
    return { ...answer, loaded: readFileSync(loaded, "utf8").split("\n").filter((url) => url.startsWith("file:")) }
  }

  it("runs the CLI's sources as they are, no copy of them: what it prints is what the sources print", async () => {
    for (const args of [["keys", "create", "--help"], ["--version"]]) {
      const reference = await ask([node24, mainScript, ...args], { env })
      const answer = await askLauncher(args)
      expect(answer).toMatchObject({ code: 0, stderr: "", stdout: reference.stdout })
      expect(answer.loaded).toContain(pathToFileURL(mainScript).href)
      expect(answer.loaded.filter((url) => url.includes("node_modules/.cache"))).toEqual([])
    }
  }, 120_000)

  it("loads the command tree alone for --help and a refused invocation: no core, storage or server", async () => {
    // What Config.ts reads its settings with is all the tree may take from the storage and the server.
    const beyondTheTree = (url: string) =>
      url.includes("/packages/core/") || url.includes("/node_modules/@electric-sql/") ||
      /\/packages\/store-sql\/src\/(?!(DataDirLock|PoolDefaults)\.ts$)/.test(url) || /\/apps\/server\/src\/(?!Settings\.ts$)/.test(url)
    for (const args of [["--help"], ["keys", "create", "--help"], ["accounts", "list", "--limit", "0"]]) {
      const answer = await askLauncher(args)
      expect(answer.loaded).toContain(pathToFileURL(join(repoRoot, "apps", "cli", "src", "Cli.ts")).href)
      expect(answer.loaded.filter(beyondTheTree)).toEqual([])
    }
  }, 120_000)

  it("keeps Node's compiled code in node_modules/.cache, so a later start skips compiling", async () => {
    const compiled = join(repoRoot, "node_modules", ".cache", "dropshelf-compiled")
    rmSync(compiled, { recursive: true, force: true })
    expect(await askLauncher(["--version"])).toMatchObject({ code: 0, stderr: "" })
    expect(readdirSync(compiled, { recursive: true }).length).toBeGreaterThan(0)
  }, 120_000)

  it("runs under Node 24 directly", async () => {
    const outcome = await run(["--version"], { via: { executable: process.execPath, script: binScript } })
    expect(outcome.code).toBe(0)
    expect(outcome.stdout).toContain("0.1.0")
  })

  it.skipIf(nodeOnPath === undefined)(`runs under the node on PATH (${nodeOnPath ?? "none"}), re-executing on Node 24 if needed${nodeOnPath === undefined ? " (skipped: no node on PATH)" : ""}`, async () => {
    const outcome = await run(["accounts", "create", "--plan", "free", "--json"], { via: { executable: "node", script: binScript, path: plainPath } })
    // Reaches the CLI's own argument check: the launcher worked and passed the exit code on.
    expect(outcome.code).toBe(2)
    expect(outcome.stderr.trim().split("\n")).toHaveLength(1)
    expect(outcome.stderr).toMatch(/--name/)
    const version = await run(["--version"], { via: { executable: "node", script: binScript, path: plainPath } })
    expect(version.code).toBe(0)
  })

  it.skipIf(!olderNodeOnPath || !existsSync("/proc/self/cmdline"))(
    `started by the node on PATH (${nodeOnPath ?? "none"}) with node flags, passes them on to the Node 24 it re-runs the CLI with`,
    async () => {
      const withFlags = script(join(scratch, "node-with-flags"), `exec node ${SEMI_SPACE} ${NO_PRETENURING} "$@"`)
      const serving = await inspectServing({ executable: withFlags, script: binScript, path: plainPath })
      expect(serving.commandLine).toEqual(["node", SEMI_SPACE, NO_PRETENURING, binScript, "serve", "--port", expect.any(String)])
      expect(serving.children).toEqual([
        [node24, SEMI_SPACE, NO_PRETENURING, binScript, "serve", "--port", expect.any(String)]
      ])
    },
    60_000
  )

  it.skipIf(nodeOnPath === undefined)(`passes SIGTERM on to the re-run CLI and its exit code back${nodeOnPath === undefined ? " (skipped: no node on PATH)" : ""}`, async () => {
    const target = embeddedTarget({ migrated: true })
    try {
      const { server, port } = await serve({
        env: target.env,
        via: { executable: "node", script: binScript, path: plainPath }
      })
      try {
        expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
      } finally {
        expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
      }
    } finally {
      await target.dispose()
    }
  })
})
