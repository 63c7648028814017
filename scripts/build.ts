/**
 * `npm run build`: the `dropshelf` CLI bundled for deployment into `dist/` (`dist/dropshelf.js
 * serve`). Development and the tests run the TypeScript sources directly; a bundle is what a
 * server should run (docs/decisions/0506-memory.md):
 * - no type stripping at run time (Node's stripper is a WebAssembly module held in memory);
 * - only the modules the CLI uses, not every module behind a barrel import (`effect` alone is
 *   ~400 modules; the server uses a fraction);
 * - code reached only through `import()` (the MCP SDK, the Redis client, the API reference
 *   pages) stays in chunks of its own, read the first time it is needed.
 * The idle memory of each is in docs/performance.md.
 *
 * Usage: node scripts/build.ts [outdir]   (default `dist`; what an earlier build wrote there is
 * removed first, and nothing else: the tests build into folders of their own inside `dist/`)
 */
import * as esbuild from "esbuild"
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { minimumOf } from "../apps/cli/src/NodeSupport.ts"
import { type BuildRecord, headCommit } from "../apps/cli/src/Staleness.ts"

const root = join(import.meta.dirname, "..")

/**
 * Node's flags for a server, as the binary `apps/cli/bin/dropshelf` (a shell script) writes them,
 * the one place they are written: its `flags="…"` (every command) and `server_flags="…"` (the
 * commands that serve). Also for whoever starts a bundle with `node` itself (the benchmarks).
 */
export const launcherNodeFlags: ReadonlyArray<string> = (() => {
  const bin = readFileSync(join(root, "apps/cli/bin/dropshelf"), "utf8")
  return ["flags", "server_flags"].flatMap((name) => {
    const value = new RegExp(`^${name}="([^"$\`\\\\]*)"$`, "m").exec(bin)?.[1]
    if (value === undefined) throw new Error(`apps/cli/bin/dropshelf has no ${name}="…" line to read node's flags from`)
    return value.split(/\s+/).filter((flag) => flag !== "")
  })
})()

/**
 * The bundle's first line: run as a program (`dist/dropshelf.js serve`), it starts node with the
 * flags the binary gives a server (a `#!` line cannot choose by command).
 */
export const shebang = `#!/usr/bin/env -S node ${launcherNodeFlags.join(" ")}`

/**
 * Left to Node at run time, so the bundle needs the repo's node_modules beside it:
 * - PGlite finds its WebAssembly and data files next to its own module;
 * - wordsninja's word list is JSON that Node parses faster, and into less memory, than the same
 *   list as a JavaScript literal.
 */
const external = ["@electric-sql/pglite", "@electric-sql/pglite/*", "wordsninja/*"]

/**
 * The core reads the word list through `dictionaryWords()`; the bundle's version requires it on
 * the first call, so the ~55 ms of parsing and its garbage fall only on a process that masks
 * (an import, a seed), not on every command's or server's start.
 */
const lazyDictionary: esbuild.Plugin = {
  name: "lazy-dictionary",
  setup: (build) => {
    build.onLoad({ filter: /[\\/]packages[\\/]core[\\/]src[\\/]domain[\\/]Dictionary\.ts$/ }, () => ({
      loader: "js",
      contents: [
        `import { createRequire } from "node:module"`,
        `let words`,
        `export const dictionaryWords = () => words ??= createRequire(import.meta.url)("wordsninja/words-en.json")`
      ].join("\n")
    }))
  }
}

/** package.json's `engines.node`, which the bundle enforces at start: a `>=` range it can read. */
const engines: string = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines.node
if (minimumOf(engines) === undefined) throw new Error(`package.json engines.node ${JSON.stringify(engines)} is not a >= range the bundle can check`)

/**
 * Builds the bundle into `outdir`. `commit` overrides the commit recorded as the one built (the
 * tests use it to make a bundle that looks built from another commit).
 */
export const build = async (outdir: string, options: { readonly commit?: string } = {}) => {
  for (const earlier of ["chunks", "dropshelf.js", "dropshelf.js.map"]) rmSync(join(outdir, earlier), { recursive: true, force: true })
  const record: BuildRecord = {
    root: relative(outdir, root),
    commit: options.commit ?? headCommit(root) ?? null
  }
  const result = await esbuild.build({
    entryPoints: { dropshelf: join(root, "apps/cli/src/launch.ts") },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node24",
    chunkNames: "chunks/[name]-[hash]",
    external,
    plugins: [lazyDictionary],
    // Not minified: the gain in memory was nil (measured) and stack traces stay readable.
    sourcemap: "linked",
    // CommonJS dependencies (ws, redis) call `require`, which an ES module does not have.
    banner: { js: `${shebang}\nimport { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);` },
    // What the bundle checks its checkout (apps/cli/src/Staleness.ts) and its Node
    // (apps/cli/src/NodeSupport.ts) against at start.
    define: {
      DROPSHELF_BUILD: JSON.stringify(record),
      DROPSHELF_ENGINES: JSON.stringify(engines)
    },
    logLevel: "warning"
  })
  chmodSync(join(outdir, "dropshelf.js"), 0o755)
  // Its own package scope: wherever it is put, Node then reads each chunk as an ES module at once
  // rather than first trying it as CommonJS.
  writeFileSync(join(outdir, "package.json"), `${JSON.stringify({ type: "module" })}\n`)
  return result
}

if (import.meta.main) {
  const outdir = resolve(process.argv[2] ?? join(root, "dist"))
  await build(outdir)
  console.log(`build: ${join(outdir, "dropshelf.js")} (run: ${join(outdir, "dropshelf.js")} serve)`)
}
