/**
 * `npm run check`, the checks `npm test` runs before vitest: tsc over the whole workspace, the
 * relative imports Node would not resolve, the layering (dependency-cruiser), released
 * migrations left as released (check-migrations.ts), and plain-`node`
 * runs of the core and of the embedding example. They are independent, and tsc alone keeps one
 * core busy for most of the time, so they run side by side: each one's output is printed when it
 * ends, a line every 20 s says which are still running, and the exit code is 1 if any failed.
 */
import { spawn } from "node:child_process"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")
const bin = (name: string) => join(root, "node_modules", ".bin", name)
const node = process.execPath

const checks: ReadonlyArray<{ readonly name: string; readonly command: string; readonly args: ReadonlyArray<string> }> = [
  { name: "tsc", command: bin("tsc"), args: ["-p", "tsconfig.json", "--noEmit"] },
  { name: "check-imports", command: node, args: ["scripts/check-imports.ts"] },
  { name: "depcruise", command: bin("depcruise"), args: ["packages", "apps", "--config", ".dependency-cruiser.cjs"] },
  { name: "migrations", command: node, args: ["scripts/check-migrations.ts"] },
  { name: "smoke-core", command: node, args: ["scripts/smoke-core.ts"] },
  { name: "embedding example", command: node, args: ["docs/examples/embedding.ts"] }
]

const HEARTBEAT_MS = 20_000
const started = Date.now()
const running = new Set(checks.map((check) => check.name))
const heartbeat = setInterval(() => {
  console.log(`check: ${Math.round((Date.now() - started) / 1000)} s, running ${[...running].join(", ")}`)
}, HEARTBEAT_MS)

const run = (check: (typeof checks)[number]) =>
  new Promise<boolean>((resolveRun) => {
    const child = spawn(check.command, check.args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    let ended = false
    const end = (passed: boolean, why: string) => {
      if (ended) return
      ended = true
      running.delete(check.name)
      console.log(`check: ${check.name} ${why}${output.trim() === "" ? "" : `\n${output.trimEnd()}`}`)
      resolveRun(passed)
    }
    child.on("error", (error) => end(false, `could not start: ${error.message}`))
    child.on("close", (code, signal) => end(code === 0, code === 0 ? "passed" : `failed (${signal ?? `exit ${code}`})`))
  })

const results = await Promise.all(checks.map(run))
clearInterval(heartbeat)
if (results.includes(false)) {
  console.error(`check: failed: ${checks.filter((_, index) => !results[index]).map((check) => check.name).join(", ")}`)
  process.exit(1)
}
