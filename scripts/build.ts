/**
 * `npm run build`: the `dropshelf` CLI bundled for deployment into `dist/` (`node dist/dropshelf.js
 * serve`). Development and the tests run the TypeScript sources directly; a bundle is what a
 * server should run (docs/decisions/0506-memory.md):
 * - no type stripping at run time (Node's stripper is a WebAssembly module of ~15 MB);
 * - only the modules the CLI uses, not every module behind a barrel import (`effect` alone is
 *   ~400 modules; the server uses a fraction);
 * - code reached only through `import()` (the MCP SDK, the Redis client, the API reference
 *   pages) stays in chunks of its own, read the first time it is needed.
 * Idle server RSS: ~94 MB bundled, ~137 MB from the sources (docs/performance.md).
 *
 * Usage: node scripts/build.ts [outdir]   (default `dist`; what an earlier build wrote there is
 * removed first, and nothing else: the tests build into folders of their own inside `dist/`)
 */
import * as esbuild from "esbuild"
import { rmSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { type BuildRecord, newestSourceMs } from "../apps/cli/src/Staleness.ts"

const root = join(import.meta.dirname, "..")

/**
 * Left to Node at run time, so the bundle needs the repo's node_modules beside it:
 * - PGlite finds its WebAssembly and data files next to its own module;
 * - wordsninja's word list is JSON that Node parses faster, and into less memory, than the same
 *   list as a JavaScript literal.
 */
const external = ["@electric-sql/pglite", "@electric-sql/pglite/*", "wordsninja/*"]

/**
 * Builds the bundle into `outdir`. `sourcesAsOf` overrides the recorded time of the newest
 * source (the tests use it to make a bundle that looks built before the last change).
 */
export const build = async (outdir: string, options: { readonly sourcesAsOf?: number } = {}) => {
  for (const earlier of ["chunks", "dropshelf.js", "dropshelf.js.map"]) rmSync(join(outdir, earlier), { recursive: true, force: true })
  // Read before bundling, so a source changed while esbuild reads it counts as newer.
  const record: BuildRecord = {
    root: relative(outdir, root),
    newestSourceMs: options.sourcesAsOf ?? newestSourceMs(root) ?? 0
  }
  return esbuild.build({
    entryPoints: { dropshelf: join(root, "apps/cli/src/launch.ts") },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node24",
    chunkNames: "chunks/[name]-[hash]",
    external,
    // Not minified: the gain in memory was nil (measured) and stack traces stay readable.
    sourcemap: "linked",
    // CommonJS dependencies (ws, redis) call `require`, which an ES module does not have.
    banner: { js: "import { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);" },
    // What the bundle checks its sources against at start (apps/cli/src/Staleness.ts).
    define: { DROPSHELF_BUILD: JSON.stringify(record) },
    logLevel: "warning"
  })
}

if (import.meta.main) {
  const outdir = resolve(process.argv[2] ?? join(root, "dist"))
  await build(outdir)
  console.log(`build: ${join(outdir, "dropshelf.js")} (run: node ${join(outdir, "dropshelf.js")} serve)`)
}
