import fc from "fast-check"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { build } from "../../../scripts/build.ts"
import { root } from "../src/Cli.ts"
import { COMMANDS, restartArguments, SERVING_SEMI_SPACE_MB } from "../src/YoungGeneration.ts"
import { binScript, embeddedTarget, freePort, node24, repoRoot, start } from "./support.ts"

/*
 * Serving commands run with V8's young generation capped (YoungGeneration.ts): the rule that
 * decides when the process restarts itself, and the process a caller actually gets.
 */

const NODE = "/usr/bin/node"
const SCRIPT = "/srv/dropshelf/dist/dropshelf.js"
const FLAG = `--max-semi-space-size=${SERVING_SEMI_SPACE_MB}`

const restart = (args: ReadonlyArray<string>, execArgv: ReadonlyArray<string> = [], nodeOptions?: string) =>
  restartArguments({ argv: [NODE, SCRIPT, ...args], execArgv, nodeOptions })

describe("restartArguments", () => {
  it("knows every command of the CLI, and only those", () => {
    const names = root.subcommands.flatMap((group) => group.commands.map((command) => command.name))
    expect([...COMMANDS].sort()).toEqual([...names].sort())
  })

  it("restarts serve and demo with the flag after node's own options, the rest of the line as it was", () => {
    expect(restart(["serve", "--port", "8080"])).toEqual([NODE, FLAG, SCRIPT, "serve", "--port", "8080"])
    expect(restart(["demo"], ["--enable-source-maps"])).toEqual([NODE, "--enable-source-maps", FLAG, SCRIPT, "demo"])
    expect(restart(["--log-level", "debug", "serve"])).toEqual([NODE, FLAG, SCRIPT, "--log-level", "debug", "serve"])
  })

  it("leaves every other command, and a line naming none, as it is", () => {
    for (const command of COMMANDS.filter((name) => name !== "serve" && name !== "demo")) {
      expect(restart([command, "--json"])).toBeUndefined()
    }
    expect(restart(["import", "serve"])).toBeUndefined() // a file called serve
    expect(restart([])).toBeUndefined()
    expect(restart(["--version"])).toBeUndefined()
    expect(restartArguments({ argv: [NODE], execArgv: [], nodeOptions: undefined })).toBeUndefined()
  })

  it("keeps an operator's own semi-space size, given to node or in NODE_OPTIONS, in either spelling", () => {
    expect(restart(["serve"], ["--max-semi-space-size=64"])).toBeUndefined()
    expect(restart(["serve"], ["--max_semi_space_size", "8"])).toBeUndefined()
    expect(restart(["serve"], [], "--max-old-space-size=512 --max-semi-space-size=32")).toBeUndefined()
    // A look-alike is not the flag.
    expect(restart(["serve"], ["--max-semi-space-sizes=4"])).toEqual([NODE, "--max-semi-space-sizes=4", FLAG, SCRIPT, "serve"])
  })

  it("restarts at most once, and never loses or reorders an argument", () => {
    const word = fc.oneof(fc.constantFrom(...COMMANDS, "--json", "--port", "8080", "-", "--log-level"), fc.string())
    fc.assert(fc.property(
      fc.array(word, { maxLength: 8 }),
      fc.array(fc.constantFrom("--enable-source-maps", "--inspect=0", "--trace-gc"), { maxLength: 3 }),
      (args, execArgv) => {
        const restarted = restart(args, execArgv)
        if (restarted === undefined) return
        expect(restarted).toEqual([NODE, ...execArgv, FLAG, SCRIPT, ...args])
        // The restarted process sees the flag among its own options and runs as it is.
        expect(restartArguments({ argv: [NODE, SCRIPT, ...args], execArgv: [...execArgv, FLAG], nodeOptions: undefined })).toBeUndefined()
      }
    ))
  })
})

/** node's command line of a running process, as the kernel has it. */
const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((arg) => arg !== "")

const outdir = join(repoRoot, "dist", `test-young-${process.pid}-${Date.now().toString(36)}`)

describe.skipIf(!existsSync("/proc/self/cmdline"))("a serving process (read from /proc)", () => {
  beforeAll(() => build(outdir), 120_000)
  afterAll(() => rmSync(outdir, { recursive: true, force: true }))

  const serveAndRead = async (via: { executable: string; script: string }, env: Record<string, string> = {}) => {
    const target = embeddedTarget()
    try {
      const port = await freePort()
      const server = start(["serve", "--port", String(port)], { env: { ...target.env, ...env }, via })
      try {
        await server.waitFor(/serving/)
        // The pid the caller started is the server: the restart replaced the process, it did not spawn one.
        expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
        return commandLine(server.child.pid!)
      } finally {
        expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
      }
    } finally {
      await target.dispose()
    }
  }

  it("serve from the bundle runs in the pid it was started as, with the young generation capped", async () => {
    const script = join(outdir, "dropshelf.js")
    expect(await serveAndRead({ executable: node24, script })).toEqual([node24, FLAG, script, "serve", "--port", expect.any(String)])
  }, 60_000)

  it("serve through bin/dropshelf.js gets the same", async () => {
    expect(await serveAndRead({ executable: node24, script: binScript })).toEqual([node24, FLAG, binScript, "serve", "--port", expect.any(String)])
  }, 60_000)

  it("an operator's NODE_OPTIONS semi-space size is kept, and the process is not restarted", async () => {
    const script = join(outdir, "dropshelf.js")
    expect(await serveAndRead({ executable: node24, script }, { NODE_OPTIONS: "--max-semi-space-size=32" })).toEqual([
      node24,
      script,
      "serve",
      "--port",
      expect.any(String)
    ])
  }, 60_000)
})
