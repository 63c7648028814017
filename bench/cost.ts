/**
 * CPU per request, which moves far less with the machine's load than req/s: `node bench/cost.ts
 * <path> [<path> …]` starts the server on the million-row database (as `npm run bench` leaves
 * it), sends BENCH_REQUESTS requests per path from 50 connections of a separate load process, and
 * prints, per path, the CPU time the server process and all PostgreSQL processes spent per
 * request (from /proc), with the req/s of the run for reference.
 *
 * Environment: DATABASE_URL (the server, as for `npm run bench`), BENCH_REQUESTS (20000),
 * BENCH_DATABASE (dropshelf_bench_1000000), BENCH_PLAN (business).
 */
import { execFileSync, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { databaseUrl } from "./postgres.ts"

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000)
const DATABASE = process.env.BENCH_DATABASE ?? "dropshelf_bench_1000000"
const PLAN = process.env.BENCH_PLAN ?? "business"
const paths = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["/api/v1/domains"]
const node = process.execPath
const cli = join(import.meta.dirname, "..", "apps", "cli", "src", "main.ts")
const env = { ...process.env, DATABASE_URL: databaseUrl(DATABASE), DROPSHELF_RATE_LIMIT: "count-only" }

const dropshelf = (args: ReadonlyArray<string>) =>
  JSON.parse(execFileSync(node, [cli, ...args, "--json"], { encoding: "utf8", env }))

/** utime + stime of a process, in clock ticks (100 per second here). */
const ticksOf = (pid: number | string): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0 // exited meanwhile
  }
}

const postgresTicks = () => {
  let total = 0
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres") total += ticksOf(pid)
    } catch {
      // gone
    }
  }
  return total
}

const account = dropshelf(["accounts", "create", "--name", `cost-${Date.now()}`, "--plan", PLAN])
const key = dropshelf(["keys", "create", account.id, "--name", "cost"]).key as string
const server = spawn(node, [cli, "serve", "--port", "18099"], { env, stdio: ["ignore", "ignore", "inherit"] })
process.on("exit", () => server.kill("SIGTERM"))
for (let attempt = 0; ; attempt++) {
  try {
    if ((await fetch("http://127.0.0.1:18099/healthz")).ok) break
  } catch {
    if (attempt > 300) throw new Error("the server did not start")
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
}

const load = (path: string, amount: number) =>
  new Promise<{ requests: number; seconds: number }>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(node, [join(import.meta.dirname, "load.ts"), JSON.stringify({
      url: "http://127.0.0.1:18099",
      connections: 50,
      amount,
      headers: { authorization: `Bearer ${key}` },
      requests: [{ path }]
    })], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`load exited ${code}`))
      resolve({ requests: JSON.parse(out).total, seconds: (performance.now() - started) / 1000 })
    })
  })

console.log(`| path | server CPU µs/request | PostgreSQL CPU µs/request | req/s |`)
console.log(`| --- | ---: | ---: | ---: |`)
for (const path of paths) {
  await load(path, 2_000)
  const serverBefore = ticksOf(server.pid!)
  const postgresBefore = postgresTicks()
  const run = await load(path, REQUESTS)
  const perRequest = (ticks: number) => ((ticks * 10_000) / run.requests).toFixed(0)
  console.log(`| ${path} | ${perRequest(ticksOf(server.pid!) - serverBefore)} | ${perRequest(postgresTicks() - postgresBefore)} | ${(run.requests / run.seconds).toFixed(0)} |`)
}
server.kill("SIGTERM")
