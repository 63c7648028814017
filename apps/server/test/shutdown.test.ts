/**
 * Graceful shutdown: once the server's layer is released it drains (`/readyz` 503, still
 * answering while a request is in flight), then new connections are refused; a request already
 * in flight still completes.
 */
import { Clock, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { AvailabilityCheck } from "@dropshelf/core"
import { account, addListings, listing, memoryAdapter, start } from "./harness.ts"

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
})
