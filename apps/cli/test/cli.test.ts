import { describe, expect, it } from "vitest"
import { expectOneLineFailure, freePort, run } from "./support.ts"

/** What needs no storage: help, version, and failures before any storage is opened. */

describe("dropshelf without storage", () => {
  it("--help and --version succeed", async () => {
    const help = await run(["--help"])
    expect(help.code).toBe(0)
    for (const command of ["migrate", "serve", "worker", "import", "delist", "accounts", "keys", "masks", "watches", "seed"]) {
      expect(help.stdout).toContain(command)
    }
    expect((await run(["--version"])).code).toBe(0)
    expect((await run(["serve", "--help"])).stdout).toContain("DROPSHELF_WEBHOOKS_ALLOW_PRIVATE")
  })

  it("help is readable: serve's settings one per line, the defaults and the import's exit code named", async () => {
    const serve = await run(["serve", "--help"])
    const description = serve.stdout.slice(0, serve.stdout.indexOf("USAGE")).split("\n")
    expect(description.length).toBeGreaterThan(10)
    for (const line of description) expect(line.length).toBeLessThanOrEqual(100)
    expect(description.filter((line) => /^\s+DROPSHELF_WEBHOOKS_ALLOW_PRIVATE\b/.test(line))).toHaveLength(1)
    const root = await run(["--help"])
    expect(root.stdout.split("\n").filter((line) => line.includes("DROPSHELF_"))).toEqual([])
    expect((await run(["holds", "list", "--help"])).stdout).toMatch(/--state.*\(default: any\)/)
    expect((await run(["import", "--help"])).stdout).toMatch(/1 when any line was rejected/)
  })

  it("an unknown command or a bad environment is one line on stderr", async () => {
    expectOneLineFailure(await run(["frobnicate", "--json"]), 2, /frobnicate/)
    expectOneLineFailure(await run(["migrate", "--json"], { env: { PORT: "not-a-port" } }), 2, /configuration/)
  })

  it("an unreachable PostgreSQL is one line and exit 3", async () => {
    const port = await freePort()
    expectOneLineFailure(
      await run(["migrate", "--json"], { env: { DATABASE_URL: `postgres://nobody@127.0.0.1:${port}/none` } }),
      3,
      /DATABASE_URL/
    )
  })
})
