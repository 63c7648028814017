import { resolve } from "node:path"
import { type BuildRecord, staleWarning } from "./Staleness.ts"
import { capYoungGenerationOfServer } from "./YoungGeneration.ts"

/*
 * The entry of the `dropshelf` binary (bin/dropshelf.js) and of the bundle (`npm run build`).
 * What must happen before the CLI's modules load happens here: a serving command restarts
 * itself with node flags it needs (YoungGeneration.ts), and only then is anything printed or
 * loaded. The CLI itself (main.ts) is imported afterwards; the tests run main.ts directly.
 */

capYoungGenerationOfServer()

/** Set by `npm run build` in the bundle only; the sources leave it undeclared. */
declare const DROPSHELF_BUILD: BuildRecord | undefined

if (typeof DROPSHELF_BUILD !== "undefined") {
  const warning = staleWarning(resolve(import.meta.dirname, DROPSHELF_BUILD.root), DROPSHELF_BUILD)
  if (warning !== undefined) process.stderr.write(`${warning}\n`)
}

await import("./main.ts")
