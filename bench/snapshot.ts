/**
 * The bulk snapshot as a client on the same machine pulls it (`npm run bench`, part `snapshot`):
 * one `GET /api/v1/domains/snapshot`, every line parsed as JSON, its rate in listings a second
 * and the server's peak RSS while it streams (sampled every 100 ms from /proc). Then the same
 * request from a client that stops reading for `BENCH_SNAPSHOT_STALL` seconds (10) after its
 * first megabyte: the server's RSS while the client does not read, against what it was when
 * the client stopped. With backpressure it stays put: the server waits for the socket to drain
 * and reads no further rows meanwhile.
 */
import { request } from "node:http"
import { readFileSync } from "node:fs"
import { createGunzip } from "node:zlib"
import { backendPidsOf, ticksOf } from "./proc.ts"

const STALL_SECONDS = Number(process.env.BENCH_SNAPSHOT_STALL ?? 10)

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024

/** CPU ticks of the server and of the backends serving `database`, as they read now. */
const cpuOf = (pid: number, database: string) => {
  const backends = new Map(backendPidsOf(database).map((backend) => [backend, ticksOf(backend)]))
  return { server: ticksOf(pid), backends }
}

export interface SnapshotPull {
  readonly listings: number
  readonly seconds: number
  readonly rate: number
  readonly peakRss: number
  /** Characters of NDJSON, and bytes on the wire (fewer when gzip-compressed). */
  readonly bytes: number
  readonly wireBytes: number
  readonly syncedAt: string
  /** CPU a listing: the server process, and the Postgres backends serving the database. */
  readonly serverMicros: number
  readonly postgresMicros: number
}

/** The whole snapshot, every line parsed, as fast as this client can take it. */
export const pullSnapshot = (port: number, key: string, pid: number, database: string, headers: Record<string, string> = {}) =>
  new Promise<SnapshotPull>((resolve, reject) => {
    let peakRss = rssMb(pid)
    const before = cpuOf(pid, database)
    // Backends come and go: the last reading of each counts.
    const lastTicks = new Map(before.backends)
    const sampleBackends = () => {
      for (const backend of backendPidsOf(database)) {
        const ticks = ticksOf(backend)
        if (ticks > 0) lastTicks.set(backend, ticks)
      }
    }
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, rssMb(pid))
      sampleBackends()
    }, 100)
    const started = performance.now()
    const req = request({ host: "127.0.0.1", port, path: "/api/v1/domains/snapshot", headers: { authorization: `Bearer ${key}`, ...headers } }, (res) => {
      if (res.statusCode !== 200) {
        clearInterval(sampler)
        reject(new Error(`snapshot: ${res.statusCode}`))
        res.resume()
        return
      }
      let rest = ""
      let listings = 0
      let bytes = 0
      let last: any
      let wireBytes = 0
      res.on("data", (chunk: Buffer) => (wireBytes += chunk.length))
      const body = res.headers["content-encoding"] === "gzip" ? res.pipe(createGunzip()) : res
      body.setEncoding("utf8")
      body.on("data", (text: string) => {
        bytes += text.length
        const lines = (rest + text).split("\n")
        rest = lines.pop()!
        for (const line of lines) {
          last = JSON.parse(line)
          listings++
        }
      })
      body.on("end", () => {
        clearInterval(sampler)
        const seconds = (performance.now() - started) / 1000
        if (last?.synced_at === undefined) return reject(new Error("snapshot: no closing line"))
        sampleBackends()
        const rows = listings - 1
        let postgresTicks = 0
        for (const [backend, ticks] of lastTicks) postgresTicks += ticks - (before.backends.get(backend) ?? 0)
        resolve({
          listings: rows,
          seconds,
          rate: rows / seconds,
          peakRss,
          bytes,
          wireBytes,
          syncedAt: last.synced_at,
          serverMicros: ((ticksOf(pid) - before.server) * 10_000) / rows,
          postgresMicros: (postgresTicks * 10_000) / rows
        })
      })
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end()
  })

/** A client that reads a megabyte, then nothing for STALL_SECONDS, then the rest: the server's RSS meanwhile. */
export const stalledSnapshot = (port: number, key: string, pid: number) =>
  new Promise<{ readonly atStall: number; readonly peakDuringStall: number; readonly stallSeconds: number }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/api/v1/domains/snapshot", headers: { authorization: `Bearer ${key}` } }, (res) => {
      let received = 0
      let stalled = false
      res.on("data", (chunk: Buffer) => {
        received += chunk.length
        if (stalled || received < 1024 * 1024) return
        stalled = true
        res.pause()
        const atStall = rssMb(pid)
        let peakDuringStall = atStall
        const sampler = setInterval(() => (peakDuringStall = Math.max(peakDuringStall, rssMb(pid))), 100)
        setTimeout(() => {
          clearInterval(sampler)
          res.resume()
          res.on("end", () => resolve({ atStall, peakDuringStall, stallSeconds: STALL_SECONDS }))
        }, STALL_SECONDS * 1000)
      })
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end()
  })
