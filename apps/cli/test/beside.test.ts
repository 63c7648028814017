import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { operatorSuite } from "./operatorSuite.ts"
import { embeddedTarget, expectOneLineFailure, killStragglers, run, runJson, serve } from "./support.ts"

/**
 * The operator contract while `dropshelf serve` holds the embedded data directory: every command
 * run from a second process, with the results and exit codes of embedded.test.ts.
 */
operatorSuite("embedded", async () => embeddedTarget(), undefined, { besideServer: true })

describe("beside a server whose data directory's path is too long for a unix socket", { timeout: 240_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), "dropshelf-cli-"))
  const dataDir = join(root, "a-data-directory-with-a-long-name".repeat(3))
  const env = { DROPSHELF_DATA_DIR: dataDir }
  afterEach(() => killStragglers())
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it("still takes the commands, through a socket in the temp directory", async () => {
    expect(Buffer.byteLength(join(dataDir, "dropshelf.sock"))).toBeGreaterThan(108)
    const { server } = await serve({ env })
    try {
      const account = await runJson(["accounts", "create", "--name", "long", "--plan", "pro"], { env })
      expect(account.plan).toBe("pro")
      expectOneLineFailure(await run(["accounts", "set-plan", "acct_nope", "free", "--json"], { env }), 1, /^dropshelf: no account with id "acct_nope"$/)
    } finally {
      expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    }
  })
})
