import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, statSync, utimesSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { binScript, embeddedTarget, freePort, inspectServing, node24, repoRoot, run, start } from "./support.ts"

/*
 * `npx dropshelf` must work whichever node is first on PATH: the launcher runs the CLI itself on
 * Node >= 22.19, and re-runs itself with the repo's pinned Node 24 otherwise (a stock Node 20).
 * Run as a program (npx, npm start, a shell), its `#!` line starts node with the flags a server
 * wants. On Node 24 it runs a bundle of the current sources, rebuilt when one changes.
 */

/** The young-generation cap the server is measured with (docs/operations.md, Memory). */
const SEMI_SPACE = "--max-semi-space-size=16"

/** PATH as a shell outside npm sees it: npm and npx put the pinned Node 24 first, so drop those entries. */
const plainPath = (process.env.PATH ?? "").split(delimiter).filter((dir) => !dir.includes("node_modules")).join(delimiter)

const nodeOnPath = (() => {
  try {
    return execFileSync("node", ["--version"], { encoding: "utf8", env: { ...process.env, PATH: plainPath } }).trim()
  } catch {
    return undefined
  }
})()

/** PATH with the pinned Node 24 first, as npx and npm scripts have it. */
const pinnedPath = [dirname(node24), plainPath].join(delimiter)

describe("bin/dropshelf.js", () => {
  it.skipIf(!existsSync("/proc/self/cmdline"))("started as a program, serves in the pid it was started as, node running with its flags", async () => {
    const serving = await inspectServing({ executable: binScript, path: pinnedPath })
    expect(serving.commandLine).toEqual(["node", SEMI_SPACE, "--no-allocation-site-pretenuring", binScript, "serve", "--port", expect.any(String)])
    expect(serving.children).toEqual([])
  }, 60_000)

  it.skipIf(nodeOnPath === undefined || Number(nodeOnPath.slice(1).split(".")[0]) >= 24 || !existsSync("/proc/self/cmdline"))(
    `started under the node on PATH (${nodeOnPath ?? "none"}), passes its node flags on to the Node 24 it re-runs the CLI with`,
    async () => {
      const serving = await inspectServing({ executable: binScript, path: plainPath })
      expect(serving.commandLine).toEqual(["node", SEMI_SPACE, "--no-allocation-site-pretenuring", binScript, "serve", "--port", expect.any(String)])
      expect(serving.children).toEqual([
        [node24, SEMI_SPACE, "--no-allocation-site-pretenuring", binScript, "serve", "--port", expect.any(String)]
      ])
    },
    60_000
  )

  it("runs a bundle of the sources as they are: a source that changes is built into a new bundle on the next run", async () => {
    const cache = join(repoRoot, "node_modules", ".cache", "dropshelf")
    const bundles = () => (existsSync(cache) ? readdirSync(cache).filter((name) => !name.includes(".")) : [])
    const version = () => run(["--version"], { via: { executable: process.execPath, script: binScript } })
    const first = await version()
    expect(first).toMatchObject({ code: 0, stderr: "" })
    const before = bundles()
    expect(before.length).toBeGreaterThan(0)
    // An edit, as far as the launcher can tell: the file's modification time moves, to an instant
    // no earlier run used (the cache outlives a run, and a bundle for a reused time would be found).
    const source = join(repoRoot, "apps", "cli", "src", "Output.ts")
    const { atime, mtime } = statSync(source)
    utimesSync(source, atime, new Date())
    try {
      const second = await version()
      expect(second).toMatchObject({ code: 0, stderr: "" })
      expect(second.stdout).toBe(first.stdout)
      const added = bundles().filter((name) => !before.includes(name))
      expect(added).toHaveLength(1)
      expect(existsSync(join(cache, added[0]!, "dropshelf.js"))).toBe(true)
    } finally {
      utimesSync(source, atime, mtime)
    }
  }, 120_000)

  it("runs under Node 24 directly", async () => {
    const outcome = await run(["--version"], { via: { executable: process.execPath, script: binScript } })
    expect(outcome.code).toBe(0)
    expect(outcome.stdout).toContain("0.1.0")
  })

  it.skipIf(nodeOnPath === undefined)(`runs under the node on PATH (${nodeOnPath ?? "none"}), re-executing on Node 24 if needed`, async () => {
    const outcome = await run(["accounts", "create", "--plan", "free", "--json"], { via: { executable: "node", script: binScript, path: plainPath } })
    // Reaches the CLI's own argument check: the launcher worked and passed the exit code on.
    expect(outcome.code).toBe(2)
    expect(outcome.stderr.trim().split("\n")).toHaveLength(1)
    expect(outcome.stderr).toMatch(/--name/)
    const version = await run(["--version"], { via: { executable: "node", script: binScript, path: plainPath } })
    expect(version.code).toBe(0)
  })

  it.skipIf(nodeOnPath === undefined)("passes SIGTERM on to the re-run CLI and its exit code back", async () => {
    const target = embeddedTarget()
    try {
      const port = await freePort()
      const server = start(["serve", "--port", String(port)], {
        env: target.env,
        via: { executable: "node", script: binScript, path: plainPath }
      })
      try {
        await server.waitFor(/serving/)
        expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
      } finally {
        expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
      }
    } finally {
      await target.dispose()
    }
  })
})
