/**
 * CPU per request, which moves far less with the machine's load than req/s: `node bench/cost.ts
 * <path> [<path> …]` starts the server on the million-row database (as `npm run bench` leaves
 * it), sends BENCH_REQUESTS requests per path from 50 connections of a separate load process, and
 * prints, per path, the CPU time the server process and all PostgreSQL processes spent per
 * request (from /proc), with the req/s of the run for reference.
 *
 * Environment: DATABASE_URL (the server, as for `npm run bench`), BENCH_REQUESTS (20000),
 * BENCH_DATABASE (dropshelf_bench_1000000), BENCH_PLAN (business), BENCH_FROM (`bundle`, the
 * build a deployment runs, or `sources`).
 */
import { postgresPids, ticksOf } from "./proc.ts"
import { keyFor, load, startServer, stop } from "./server.ts"

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000)
const DATABASE = process.env.BENCH_DATABASE ?? "dropshelf_bench_1000000"
const PLAN = (process.env.BENCH_PLAN ?? "business") as "free" | "pro" | "business"
const FROM = process.env.BENCH_FROM === "sources" ? "sources" : "bundle"
const PORT = 18_099
const paths = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["/api/v1/domains"]

const postgresTicks = () => postgresPids().reduce((total, pid) => total + ticksOf(pid), 0)

const key = keyFor(DATABASE, PLAN)
const server = await startServer(DATABASE, PORT, { from: FROM })
console.log(`server: ${FROM === "bundle" ? "the bundle of npm run build" : "the TypeScript sources"}`)

console.log(`| path | server CPU µs/request | PostgreSQL CPU µs/request | req/s |`)
console.log(`| --- | ---: | ---: | ---: |`)
for (const path of paths) {
  load(PORT, key, [{ path }], { connections: 50, amount: 2_000 })
  const serverBefore = ticksOf(server.pid!)
  const postgresBefore = postgresTicks()
  const started = performance.now()
  const run = load(PORT, key, [{ path }], { connections: 50, amount: REQUESTS })
  const seconds = (performance.now() - started) / 1000
  const perRequest = (ticks: number) => ((ticks * 10_000) / run.total).toFixed(0)
  console.log(`| ${path} | ${perRequest(ticksOf(server.pid!) - serverBefore)} | ${perRequest(postgresTicks() - postgresBefore)} | ${(run.total / seconds).toFixed(0)} |`)
}
await stop(server)
