/**
 * `/readyz` probed again and again while a dependency is down, as a load balancer does: the log
 * tells the dependency's state when it changes (down once, up once), not once per probe, and
 * never as an error with a stack trace.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { afterEach, describe, expect, it } from "vitest"
import { embeddedTargets, freePort, killStragglers, serve } from "./support.ts"

const lines = (output: string) => output.split("\n").filter((line) => line.trim() !== "")
const readinessLines = (output: string) => lines(output).filter((line) => /readiness: redis/.test(line))

/** The readiness lines once `count` have come, or after two seconds: the server's output reaches the test after its answers. */
const readinessLinesWhen = async (output: () => string, count: number) => {
  for (let i = 0; i < 40 && readinessLines(output()).length < count; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  return readinessLines(output())
}

const redisServer = (() => {
  try {
    return execFileSync("which", ["redis-server"], { encoding: "utf8" }).trim() || undefined
  } catch {
    return undefined
  }
})()

/** A Redis of this test's own on `port`, answering once it is up. */
const startRedis = async (port: number): Promise<ChildProcess> => {
  const child = spawn(redisServer!, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" })
  for (let i = 0; i < 100; i++) {
    try {
      execFileSync("redis-cli", ["-p", String(port), "ping"], { stdio: "ignore" })
      return child
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  throw new Error("redis-server did not start")
}

const stopped = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })

describe.skipIf(redisServer === undefined)(`readiness log${redisServer === undefined ? " (skipped: no redis-server)" : ""}`, () => {
  const target = embeddedTargets({ migrated: true })
  afterEach(() => killStragglers())

  it("a Redis that is down is logged once however often /readyz asks, and once when it answers again", async () => {
    const port = await freePort()
    const { server, base } = await serve({ env: { ...target().env, REDIS_URL: `redis://127.0.0.1:${port}` } })
    const output = () => server.stdout() + server.stderr()
    const probe = async (times: number, status: number) => {
      for (let i = 0; i < times; i++) expect((await fetch(`${base}/readyz`)).status).toBe(status)
    }
    let redis: ChildProcess | undefined
    try {
      await probe(8, 503)
      expect(await readinessLinesWhen(output, 1), output()).toHaveLength(1)

      redis = await startRedis(port)
      // The limiter connects again on its own schedule; /readyz turns 200 once it has.
      let ready = false
      for (let i = 0; i < 100 && !ready; i++) {
        ready = (await fetch(`${base}/readyz`)).status === 200
        if (!ready) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(ready, output()).toBe(true)
      await probe(5, 200)
      expect(await readinessLinesWhen(output, 2), output()).toHaveLength(2)

      await stopped(redis)
      await probe(8, 503)
      expect(await readinessLinesWhen(output, 3), output()).toHaveLength(3)
      // Not ready is an answer, not a fault: no line at error level, and no stack trace.
      expect(lines(output()).filter((line) => /"level":"ERROR"|\bERROR\b/.test(line)), output()).toEqual([])
      expect(output()).not.toMatch(/\n\s+at /)
    } finally {
      if (redis !== undefined) await stopped(redis)
      await server.stop("SIGTERM")
    }
  })
})
