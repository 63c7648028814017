import { execFileSync } from "node:child_process"
import { delimiter } from "node:path"
import { describe, expect, it } from "vitest"
import { binScript, embeddedTarget, freePort, run, start } from "./support.ts"

/*
 * `npx dropshelf` must work whichever node is first on PATH: the launcher runs the CLI itself on
 * Node >= 22.19, and re-runs it with the repo's pinned Node 24 otherwise (a stock Node 20).
 */

/** PATH as a shell outside npm sees it: npm and npx put the pinned Node 24 first, so drop those entries. */
const plainPath = (process.env.PATH ?? "").split(delimiter).filter((dir) => !dir.includes("node_modules")).join(delimiter)

const nodeOnPath = (() => {
  try {
    return execFileSync("node", ["--version"], { encoding: "utf8", env: { ...process.env, PATH: plainPath } }).trim()
  } catch {
    return undefined
  }
})()

describe("bin/dropshelf.js", () => {
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
