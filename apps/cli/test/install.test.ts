import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "./support.ts"

/*
 * `npm install` on the machine's own Node, older than engines.node (a stock Node 20 runs npm;
 * the scripts then run on the pinned Node 24): our own packages must not warn about it.
 * Third-party packages' engine warnings are theirs.
 */

const rootPackage = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"))

/** Every package of this repository: the root and its workspaces. */
const ours = [
  rootPackage.name as string,
  ...["packages", "apps"].flatMap((dir) =>
    readdirSync(join(repoRoot, dir)).map((name) => JSON.parse(readFileSync(join(repoRoot, dir, name, "package.json"), "utf8")).name as string)
  )
]

/** A node older than engines.node with npm beside it, as a new machine has them. */
const oldNpm = (() => {
  for (const node of [process.env.DROPSHELF_OLD_NODE, "/usr/bin/node", "/usr/local/bin/node"]) {
    if (node === undefined || !existsSync(node) || !existsSync(join(dirname(node), "npm"))) continue
    const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim()
    const [major = 0, minor = 0] = version.slice(1).split(".").map(Number)
    if (major < 22 || (major === 22 && minor < 19)) return { dir: dirname(node), version }
  }
  return undefined
})()

describe.skipIf(oldNpm === undefined)(
  `npm install on an older Node${oldNpm === undefined ? " (skipped: no node older than 22.19 with npm beside it; set DROPSHELF_OLD_NODE)" : ` (${oldNpm.version})`}`,
  () => {
    it("warns about no engine of our own packages", () => {
      const result = spawnSync("npm", ["install", "--dry-run", "--ignore-scripts", "--offline", "--no-audit", "--no-fund"], {
        cwd: repoRoot,
        encoding: "utf8",
        env: { ...process.env, PATH: [oldNpm!.dir, "/usr/bin", "/bin"].join(delimiter) },
        timeout: 120_000
      })
      expect(result.status, result.stderr).toBe(0)
      const warned = [...result.stderr.matchAll(/EBAD(?:DEV)?ENGINES?\s+package: '(.+)@[^@']+'/g)].map((match) => match[1]!)
      expect(warned.filter((name) => ours.includes(name))).toEqual([])
      expect(result.stderr).not.toContain("EBADDEVENGINES")
    }, 150_000)
  }
)
