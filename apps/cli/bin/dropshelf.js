// The CLI's launcher, started by bin/dropshelf (the binary npm links) with the pinned Node 24 and
// the node flags written there; `node apps/cli/bin/dropshelf.js …` runs it too, with whatever
// flags that node is given.
// The CLI is TypeScript. On Node 24+ this launcher runs it in this process, from a bundle of the
// current sources that it builds on first use and again after any source changes (kept in
// node_modules/.cache/dropshelf, an older one removed once no process runs it): loading one
// bundle takes a fraction of the time Node needs to strip and link the several hundred source
// modules. Without esbuild (an install without dev dependencies), or if the build fails, it runs
// the sources by Node's type stripping. Under an older node (a machine's stock Node 20, or a
// Node 22 that would warn about type stripping on stderr) it re-runs itself, with the same node
// flags, on the Node 24 the repo pins as its `node` devDependency.
// Help and the version are answered from a copy of what the bundle printed for the same request,
// kept beside the bundle, without loading the CLI. Plain JS, so any Node can read it.
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
// A namespace: Node 20 (which this file must still start on) has no enableCompileCache to import by name.
import * as Module from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const launcher = fileURLToPath(import.meta.url)
const here = dirname(launcher)
const root = join(here, "..", "..", "..")
const sources = join(here, "..", "src", "launch.ts")
const cache = join(root, "node_modules", ".cache", "dropshelf")

/** An older bundle is removed once no process runs it (a server loads some chunks late) and none chose it this long ago. */
const SETTLED_MS = 60 * 1000

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

/** What the bundle is built from: every workspace's sources, the lock file, the build itself. */
const fingerprint = () => {
  const hash = createHash("sha256")
  const add = (path) => {
    const info = statSync(path)
    if (info.isDirectory()) {
      for (const name of readdirSync(path).sort()) add(join(path, name))
    } else {
      hash.update(`${path}\0${info.size}\0${info.mtimeMs}\n`)
    }
  }
  for (const workspaces of ["apps", "packages"]) {
    for (const name of readdirSync(join(root, workspaces)).sort()) {
      const workspace = join(root, workspaces, name)
      if (existsSync(join(workspace, "src"))) add(join(workspace, "src"))
      if (existsSync(join(workspace, "package.json"))) add(join(workspace, "package.json"))
    }
  }
  const bin = join("apps", "cli", "bin")
  for (const file of ["package.json", "package-lock.json", join("scripts", "build.ts"), join(bin, "dropshelf"), join(bin, "dropshelf.js")]) {
    if (existsSync(join(root, file))) add(join(root, file))
  }
  return hash.digest("hex").slice(0, 16)
}

const isAlive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === "EPERM"
  }
}

/** Marks `dir` as run by this process until it exits (`<dir>/running/<pid>`). */
const markRunning = (dir) => {
  const running = join(dir, "running")
  mkdirSync(running, { recursive: true })
  const mark = join(running, String(process.pid))
  writeFileSync(mark, "")
  process.on("exit", () => rmSync(mark, { force: true }))
  const now = new Date()
  utimesSync(dir, now, now)
}

const removeOthers = (keep) => {
  for (const name of readdirSync(cache)) {
    const path = join(cache, name)
    if (name === keep || name.endsWith(".building") || Date.now() - statSync(path).mtimeMs < SETTLED_MS) continue
    const running = join(path, "running")
    const pids = existsSync(running) ? readdirSync(running).map(Number) : []
    if (!pids.some(isAlive)) rmSync(path, { recursive: true, force: true })
  }
}

/** The bundle of the sources fingerprinted as `key`, built now if there is none; `undefined` when it cannot be had. */
const currentBundle = async (key) => {
  try {
    const dir = join(cache, key)
    const bundle = join(dir, "dropshelf.js")
    if (existsSync(bundle)) {
      markRunning(dir)
      return bundle
    }
    // Built aside and renamed into place, so a concurrent run sees a whole bundle or none.
    const building = join(cache, `${key}.${process.pid}.building`)
    const { build } = await import(pathToFileURL(join(root, "scripts", "build.ts")).href)
    await build(building, { forLauncher: true })
    try {
      renameSync(building, dir)
    } catch {
      rmSync(building, { recursive: true, force: true }) // another run put the same bundle there first
    }
    if (!existsSync(bundle)) return undefined
    markRunning(dir)
    removeOthers(key)
    return bundle
  } catch {
    return undefined
  }
}

/**
 * Whether `args` asks for what is a pure function of the sources and of the colour decision
 * alone: help (`[...subcommands, --help|-h]`, no other flag) or the version.
 */
const isAnswerable = (args) =>
  (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) ||
  ((args.at(-1) === "--help" || args.at(-1) === "-h") && args.slice(0, -1).every((word) => /^[a-z][a-z-]*$/.test(word)))

/**
 * Where the answer to `args` is kept for the bundle `key`: named by the request and by what the
 * CLI decides colours from (effect/cli's TerminalCapabilities: whether stdout is a terminal,
 * NO_COLOR, FORCE_COLOR, TERM), taken as they are so that no rule of its own can drift from it.
 */
const answerFile = (key, args) => {
  const { NO_COLOR, FORCE_COLOR, TERM } = process.env
  const request = JSON.stringify([args, process.stdout.isTTY === true, NO_COLOR ?? null, FORCE_COLOR ?? null, TERM ?? null])
  return join(cache, key, "answers", createHash("sha256").update(request).digest("hex").slice(0, 32))
}

/** Keeps what this process prints on stdout as the answer in `file`, if it exits 0 having printed nothing on stderr. */
const keepAnswer = (file) => {
  const chunks = []
  let stderrUsed = false
  const { stdout, stderr } = process
  const writeOut = stdout.write
  stdout.write = function (chunk, encoding) {
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk, typeof encoding === "string" ? encoding : "utf8") : Buffer.from(chunk))
    return writeOut.apply(this, arguments)
  }
  const writeErr = stderr.write
  stderr.write = function () {
    stderrUsed = true
    return writeErr.apply(this, arguments)
  }
  process.on("exit", (code) => {
    if (code !== 0 || stderrUsed || chunks.length === 0) return
    try {
      mkdirSync(dirname(file), { recursive: true })
      // Written aside and renamed into place, so a concurrent run reads a whole answer or none.
      const aside = `${file}.${process.pid}`
      writeFileSync(aside, Buffer.concat(chunks))
      renameSync(aside, file)
    } catch {
      // an unwritable cache: the next run asks the CLI again
    }
  })
}

const args = process.argv.slice(2)
const node = stripsTypesQuietly ? undefined : pinnedNode()
const runsHere = node === undefined && stripsTypes
let key
try {
  key = runsHere || isAnswerable(args) ? fingerprint() : undefined
} catch {
  key = undefined // an unreadable source: no bundle, the sources show the real error
}
const answer = key !== undefined && isAnswerable(args) ? answerFile(key, args) : undefined
let answered
try {
  answered = answer === undefined ? undefined : readFileSync(answer)
} catch {
  answered = undefined // not asked since the sources last changed
}

if (answered !== undefined) {
  // As the CLI's console does: a reader that has gone (`| head -0`) is no failure.
  process.stdout.on("error", () => {})
  process.stdout.write(answered)
} else if (runsHere) {
  const bundle = stripsTypesQuietly && key !== undefined ? await currentBundle(key) : undefined
  if (bundle !== undefined) {
    // V8's compiled code for the bundle's modules, kept beside it: the next run skips compiling them.
    try {
      Module.enableCompileCache?.(join(dirname(bundle), "compiled"))
    } catch {
      // an older Node, or an unwritable cache: compile as usual
    }
    if (answer !== undefined) keepAnswer(answer)
  }
  await import(bundle === undefined ? sources : pathToFileURL(bundle).href)
} else {
  if (node === undefined) {
    process.stderr.write(`dropshelf: needs Node >= 22.19 (this is ${process.version}) and found no pinned node in node_modules; run npm install\n`)
    process.exit(1)
  }
  const { spawn } = await import("node:child_process")
  const child = spawn(node, [...process.execArgv, launcher, ...args], { stdio: "inherit" })
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
