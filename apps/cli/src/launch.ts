import { resolve } from "node:path"
import { type BuildRecord, staleWarning } from "./Staleness.ts"

/*
 * The entry of the `dropshelf` binary (bin/dropshelf.js) and of the bundle (`npm run build`): a
 * bundle older than its checkout says so before the CLI loads, then the CLI (main.ts) runs. The
 * tests run main.ts directly. Node's flags come from the launcher's first line, not from here.
 */

/** Set by `npm run build` in the bundle only; the sources leave it undeclared. */
declare const DROPSHELF_BUILD: BuildRecord | undefined

if (typeof DROPSHELF_BUILD !== "undefined") {
  const warning = staleWarning(resolve(import.meta.dirname, DROPSHELF_BUILD.root), DROPSHELF_BUILD)
  if (warning !== undefined) process.stderr.write(`${warning}\n`)
}

await import("./main.ts")
