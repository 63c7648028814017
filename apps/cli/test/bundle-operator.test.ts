import { rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"
import { build } from "../../../scripts/build.ts"
import { operatorSuite } from "./operatorSuite.ts"
import { embeddedTarget, node24, repoRoot } from "./support.ts"

/*
 * The whole operator contract through the bundle of `npm run build`, the way a deployment runs
 * it: `serve` from the bundle holding the data directory, and every command a second process of
 * the same bundle beside it. (embedded.test.ts runs the contract with no server, each command
 * opening the directory itself; beside.test.ts beside a server of the launcher's bundle.) A file
 * of its own (bundle.test.ts checks the rest of the bundle), so the two run side by side.
 */

const outdir = join(repoRoot, "dist", `test-operator-${process.pid}-${Date.now().toString(36)}`)

beforeAll(() => build(outdir), 120_000)
afterAll(() => rmSync(outdir, { recursive: true, force: true }))

operatorSuite("embedded", async () => embeddedTarget(), { executable: node24, script: join(outdir, "dropshelf.js"), through: "the bundle" }, {
  besideServer: true
})
