// The CLI's launcher, started by bin/dropshelf (the binary npm links) on the pinned Node 24 with
// the node flags written there; `node apps/cli/bin/dropshelf.js …` runs it too.
//
// It runs the CLI's TypeScript sources, which Node 24 strips of their types, with Node's compile
// cache kept in node_modules/.cache, so a start after the first skips compiling the modules it
// loads. A server is better run from the bundle of `npm run build` (dist/dropshelf.js), which
// loads faster and in less memory (docs/operations.md, Memory). Plain JavaScript, so that an
// older Node (the machine's own, under npx) can read it and hand over to the pinned Node 24.
import { existsSync } from "node:fs"
import * as Module from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const launcher = fileURLToPath(import.meta.url)
const root = join(dirname(launcher), "..", "..", "..")
const [major, minor] = process.versions.node.split(".").map(Number)

if (major >= 24) {
  try {
    Module.enableCompileCache(join(root, "node_modules", ".cache", "dropshelf-compiled"))
  } catch {
    // an unwritable cache: compile as usual
  }
  await import(pathToFileURL(join(root, "apps", "cli", "src", "launch.ts")).href)
} else {
  // Node 22.19+ strips types too, but warns on stderr; older ones cannot: run on the pinned one.
  const pinned = join(root, "node_modules", "node", "bin", "node")
  if (!existsSync(pinned)) {
    const enough = major > 22 || (major === 22 && minor >= 19)
    process.stderr.write(
      enough
        ? "dropshelf: no pinned Node 24 in node_modules; run npm install\n"
        : `dropshelf: needs Node >= 22.19 (this is ${process.version}) and found no pinned node in node_modules; run npm install\n`
    )
    process.exit(1)
  }
  const { spawn } = await import("node:child_process")
  const child = spawn(pinned, [...process.execArgv, launcher, ...process.argv.slice(2)], { stdio: "inherit" })
  // The child shares our process group, so a terminal's Ctrl-C reaches it directly; a signal sent
  // to this pid alone (kill, a supervisor) is passed on. Either way we wait for its exit.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal))
  child.on("exit", (code, signal) => {
    if (signal === null) process.exit(code ?? 1)
    process.removeAllListeners(signal)
    process.kill(process.pid, signal)
  })
}
