/**
 * Graceful shutdown: once the server's layer is released it drains (`/readyz` 503, still
 * answering while a request is in flight), then new connections are refused; a request already
 * in flight still completes, and one that cannot finish (a snapshot whose client stopped
 * reading) is cut off once the shutdown timeout has run out.
 */
import { Clock, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { AvailabilityCheck } from "@dropshelf/core"
import { account, addListings, listing, memoryAdapter, openGet, readToClose, start } from "./harness.ts"

/** An availability check that takes a while, so a reveal is still running when shutdown starts. */
const slowCheck = Layer.succeed(AvailabilityCheck.AvailabilityCheck, {
  check: () =>
    Effect.sleep("1200 millis").pipe(
      Effect.andThen(Clock.currentTimeMillis),
      Effect.map((checkedAt) => ({ _tag: "Unregistered", checkedAt }) as const)
    )
})

describe("graceful shutdown", () => {
  it("lets an in-flight request finish, answering requests that arrive meanwhile, then stops listening", async () => {
    const server = await start(memoryAdapter, { availability: slowCheck })
    const row = listing({ domain: "in-flight.com" })
    await addListings(server, [row])
    const key = await account(server, "business", "shutdown")
    const inFlight = fetch(`${server.base}/api/v1/domains/${row.id}/reveal`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.secret}` }
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    const closing = server.close()
    // While the reveal is in flight the server drains: still listening, not ready, answering.
    await new Promise((resolve) => setTimeout(resolve, 50))
    const readyz = await fetch(`${server.base}/readyz`)
    expect(readyz.status).toBe(503)
    expect(await readyz.json()).toMatchObject({ status: "draining" })
    const arriving = await fetch(`${server.base}/api/v1/me`, { headers: { authorization: `Bearer ${key.secret}` } })
    expect(arriving.status).toBe(200)
    expect(arriving.headers.get("connection")).toBe("close")
    const response = await inFlight
    expect(response.status).toBe(200)
    expect(((await response.json()) as { id: string }).id).toBe(row.id)
    await closing
    await expect(fetch(`${server.base}/healthz`)).rejects.toThrow()
  })

  it("cuts off a snapshot whose client stopped reading once the shutdown timeout has run out", async () => {
    const SHUTDOWN_MS = 1_000
    const server = await start(memoryAdapter, { shutdownTimeoutMs: SHUTDOWN_MS })
    // More than the kernel's socket buffers take, so the snapshot waits on a client that reads nothing.
    await addListings(server, Array.from({ length: 20_000 }, (_, i) => listing({ domain: `at-shutdown-${i}.com` })))
    const key = await account(server, "business", "stalled-at-shutdown")
    const stalled = await openGet(server, "/api/v1/domains/snapshot", { authorization: `Bearer ${key.secret}` })
    expect(stalled.statusCode).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const started = Date.now()
    await server.close()
    // The drain waits for it the shutdown timeout, then the listener's close as long again, and
    // cuts it: not the snapshot's 60 s idle timeout.
    expect(Date.now() - started).toBeLessThan(2 * SHUTDOWN_MS + 2_000)
    expect(server.logs.some((entry) => entry.message === "drain: 1 requests still in flight when the shutdown timeout ended")).toBe(true)
    const read = readToClose(stalled)
    stalled.resume()
    const body = await read
    expect(body.complete).toBe(false)
    expect(body.text).not.toContain("synced_at")
  })

  it("lets a snapshot being read finish before the listener closes", async () => {
    const server = await start(memoryAdapter)
    await addListings(server, Array.from({ length: 20_000 }, (_, i) => listing({ domain: `during-shutdown-${i}.com` })))
    const key = await account(server, "business", "reading-at-shutdown")
    // Connection: close, so the server need not wait for an idle keep-alive connection once it is done.
    const reading = openGet(server, "/api/v1/domains/snapshot", { authorization: `Bearer ${key.secret}`, connection: "close" })
      .then(async (res) => ({ status: res.statusCode!, ...(await readToClose(res)) }))
    await new Promise((resolve) => setTimeout(resolve, 100))
    await server.close()
    const body = await reading
    expect(body.status).toBe(200)
    expect(body.complete).toBe(true)
    expect(JSON.parse(body.text.trimEnd().split("\n").at(-1)!).listings).toBe(20_000)
  })
})
