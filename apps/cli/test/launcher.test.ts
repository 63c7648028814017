import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { binScript, embeddedTarget, freePort, inspectServing, node24, repoRoot, run, start } from "./support.ts"

/*
 * `npx dropshelf` must work whichever node is first on PATH: the launcher runs the CLI itself on
 * Node >= 22.19, and re-runs it with the repo's pinned Node 24 otherwise (a stock Node 20). Run as
 * a program (npx, npm start, a shell), its `#!` line starts node with the flags a server wants.
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
        [node24, SEMI_SPACE, "--no-allocation-site-pretenuring", join(repoRoot, "apps", "cli", "src", "launch.ts"), "serve", "--port", expect.any(String)]
      ])
    },
    60_000
  )

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
