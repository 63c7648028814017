import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { embeddedTargets, expectOneLineFailure, killStragglers, node24, repoRoot, run, runJson, serve } from "./support.ts"

/*
 * The CLI from its TypeScript sources on Node's type stripping, as the launcher runs it when it
 * cannot build its bundle (no esbuild, or a failed build). Every other suite starts the bundle,
 * which loads in a fraction of the time: this one keeps the sources' own path tested end to end,
 * a server included, since that loads the modules no short command does.
 */

const sources = { executable: node24, script: join(repoRoot, "apps", "cli", "src", "launch.ts") }

describe("dropshelf from its sources", () => {
  const target = embeddedTargets()
  afterEach(() => killStragglers())

  it("migrates, serves until SIGTERM and exits 0; a refusal is one line", async () => {
    const on = { env: target().env, via: sources }
    const migrated = await runJson(["migrate"], on)
    expect(migrated.applied.length).toBeGreaterThan(0)
    expectOneLineFailure(await run(["accounts", "set-plan", "acct_nope", "free", "--json"], on), 1, /^dropshelf: no account with id "acct_nope"$/)
    const { server, port } = await serve(on)
    try {
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
    } finally {
      expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    }
  }, 120_000)
})
