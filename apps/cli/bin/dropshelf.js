#!/usr/bin/env -S node --max-semi-space-size=16 --no-allocation-site-pretenuring
// The `dropshelf` binary. The node flags on the line above are the ones the server is measured
// with (docs/operations.md, Memory); the bundle's first line copies this one (scripts/build.ts).
// The CLI is TypeScript run by Node's type stripping. On Node 24+ it runs in this process; under
// an older node (a machine's stock Node 20 on PATH, or a Node 22 that would warn about type
// stripping on stderr) this launcher re-runs it, with the same node flags, on the Node 24 the
// repo pins as its `node` devDependency. Plain JS, so any Node can read it.
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const main = join(here, "..", "src", "launch.ts")

const [major, minor] = process.versions.node.split(".").map(Number)
const stripsTypes = major > 22 || (major === 22 && minor >= 19)
// Node 22 strips types but warns that it is experimental, which would add a line to stderr.
const stripsTypesQuietly = major >= 24

const pinnedNode = () => {
  for (let dir = here; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", "node", "bin", "node")
    if (existsSync(candidate)) return candidate
    if (dirname(dir) === dir) return undefined
  }
}

const node = stripsTypesQuietly ? undefined : pinnedNode()
if (node === undefined && stripsTypes) {
  await import(main)
} else {
  if (node === undefined) {
    process.stderr.write(`dropshelf: needs Node >= 22.19 (this is ${process.version}) and found no pinned node in node_modules; run npm install\n`)
    process.exit(1)
  }
  const child = spawn(node, [...process.execArgv, main, ...process.argv.slice(2)], { stdio: "inherit" })
  // The child is in our process group, so a terminal's Ctrl-C reaches it directly; a signal sent
  // to this pid alone (kill, a supervisor) is passed on. Either way we wait for its exit.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => child.kill(signal))
  }
  child.on("exit", (code, signal) => {
    if (signal !== null) {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
    }
    else process.exit(code ?? 1)
  })
}
