import { existsSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { refusal } from "./NodeSupport.ts"
import { type BuildRecord, staleWarning } from "./Staleness.ts"

/*
 * The entry of the `dropshelf` binary (bin/dropshelf.js) and of the bundle (`npm run build`): a
 * bundle run on a Node older than `engines.node` stops with the command that works, and one older
 * than its checkout says so, before the CLI loads; then the CLI (main.ts) runs. Node's flags
 * come from the launcher's first line, not from here.
 */

/** Set by `npm run build` in the bundle only; the sources leave them undeclared. */
declare const DROPSHELF_BUILD: BuildRecord | undefined
declare const DROPSHELF_ENGINES: string | undefined

if (typeof DROPSHELF_BUILD !== "undefined" && typeof DROPSHELF_ENGINES !== "undefined") {
  // import.meta.dirname is younger than some of the Nodes this has to talk to.
  const pinned = resolve(dirname(fileURLToPath(import.meta.url)), DROPSHELF_BUILD.root, "node_modules", "node", "bin")
  const refused = refusal({
    engines: DROPSHELF_ENGINES,
    running: process.versions.node,
    bundle: process.argv[1] ?? "dist/dropshelf.js",
    args: process.argv.slice(2),
    pinnedNodeDir: existsSync(join(pinned, "node")) ? pinned : undefined
  })
  if (refused !== undefined) {
    process.stderr.write(`${refused}\n`)
    process.exit(1)
  }
}

if (typeof DROPSHELF_BUILD !== "undefined") {
  const warning = staleWarning(resolve(import.meta.dirname, DROPSHELF_BUILD.root), DROPSHELF_BUILD)
  if (warning !== undefined) process.stderr.write(`${warning}\n`)
}

await import("./main.ts")
