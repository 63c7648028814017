/**
 * Instructions per request of the server, counted by valgrind's callgrind: the one figure here
 * that does not move with the machine's load. On this shared 2-core machine req/s and even CPU
 * time per request move by 30-60 % between identical runs (other tenants take the cores: see
 * the steal column of /proc/stat); an instruction count repeats within a few per cent.
 *
 *   node bench/instructions.ts <path> [<n1> <n2>]
 *
 * Starts the server twice under callgrind on the million-row database (as `npm run bench` leaves
 * it), sends 30 requests to warm up and then n1 (default 100), respectively n2 (default 400),
 * requests to `path` one after another, and prints (instructions of the second run − of the
 * first) / (n2 − n1): start-up and warm-up cancel out. One after another, so no two requests
 * share a statement: this measures the work of one request alone. Both runs go at once, ~5
 * minutes (callgrind runs node ~50× slower). BENCH_FROM=bundle measures the bundle of `npm run
 * build` (bench/server.ts builds it) instead of the sources. Needs valgrind (on every machine of
 * this kind).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { launcherNodeFlags } from "../scripts/build.ts"
import { databaseUrl } from "./postgres.ts"
import { cli, keyFor, sources, waitFor } from "./server.ts"

const path = process.argv[2] ?? "/api/v1/domains"
const n1 = Number(process.argv[3] ?? 100)
const n2 = Number(process.argv[4] ?? 400)
const DATABASE = process.env.BENCH_DATABASE ?? "dropshelf_bench_1000000"
const fromBundle = process.env.BENCH_FROM === "bundle"
const main = fromBundle ? cli : sources
const key = keyFor(DATABASE)

const get = async (port: number) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${key}` } })
  await response.text()
  if (response.status !== 200) throw new Error(`${path}: ${response.status}`)
}

const count = async (requests: number, port: number): Promise<number> => {
  const child: ChildProcess = spawn(
    "valgrind",
    // node started by hand, so the flags the launcher's first line would give it.
    ["--tool=callgrind", "--callgrind-out-file=/dev/null", process.execPath, ...launcherNodeFlags, main, "serve", "--port", String(port)],
    {
      env: { ...process.env, DATABASE_URL: databaseUrl(DATABASE), DROPSHELF_RATE_LIMIT: "count-only" },
      stdio: ["ignore", "ignore", "pipe"]
    }
  )
  let stderr = ""
  child.stderr!.on("data", (chunk) => (stderr += chunk))
  const exited = new Promise((resolve) => child.once("exit", resolve))
  try {
    // Start-up under callgrind takes a minute or two.
    await waitFor(`http://127.0.0.1:${port}/healthz`, 300_000)
    if (child.exitCode !== null) throw new Error(`the server exited at start: ${stderr}`)
    for (let i = 0; i < 30; i++) await get(port)
    for (let i = 0; i < requests; i++) await get(port)
  } finally {
    child.kill("SIGTERM")
    await exited
  }
  const collected = /Collected : (\d+)/.exec(stderr)
  if (collected === null) throw new Error(`no callgrind total in: ${stderr.slice(-500)}`)
  return Number(collected[1])
}

const [first, second] = await Promise.all([count(n1, 18_121), count(n2, 18_122)])
console.log(`${path} (${fromBundle ? "bundle" : "sources"}): ${((second - first) / (n2 - n1) / 1000).toFixed(0)} k instructions a request`)
