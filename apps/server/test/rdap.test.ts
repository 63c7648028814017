/**
 * The reveal's availability re-check over RDAP, against a local RDAP server on a random
 * loopback port: the adapter alone, then end to end through the REST API.
 */
import { createServer, type Server as NodeServer } from "node:http"
import { ConfigProvider, Duration, Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AvailabilityCheck } from "@dropshelf/core"
import { RdapAvailability } from "@dropshelf/server"
import { account, addListings, call, listing, memoryAdapter, type Running, start } from "./harness.ts"

const requests: Array<string> = []
let rdap: NodeServer
let rdapBase = ""

/** Names by behaviour: `taken-*` registered, `free-*` unregistered, `slow-*` never answers in time. */
const answer = (name: string): { status: number; body?: unknown; delayMs?: number } => {
  if (name.startsWith("taken-")) return { status: 200, body: { objectClassName: "domain", ldhName: name.toUpperCase(), status: ["active"] } }
  if (name.startsWith("free-")) return { status: 404, body: { errorCode: 404, title: "Not Found" } }
  if (name.startsWith("slow-")) return { status: 404, delayMs: 2_000 }
  if (name.startsWith("liar-")) return { status: 200, body: { objectClassName: "domain", ldhName: "someone-else.com" } }
  if (name.startsWith("junk-")) return { status: 200, body: "<html>not rdap</html>" }
  return { status: 503, body: { errorCode: 503 } }
}

beforeAll(async () => {
  rdap = createServer((request, response) => {
    requests.push(request.url ?? "")
    const match = /^\/rdap\/domain\/([^/?]+)$/.exec(request.url ?? "")
    const { body, delayMs, status } = match ? answer(decodeURIComponent(match[1]!)) : { status: 400, body: {} }
    setTimeout(() => {
      response.writeHead(status, { "content-type": "application/rdap+json" })
      response.end(typeof body === "string" ? body : JSON.stringify(body ?? {}))
    }, delayMs ?? 0)
  })
  await new Promise<void>((resolve) => rdap.listen(0, "127.0.0.1", resolve))
  const address = rdap.address()
  if (address === null || typeof address === "string") throw new Error("no address")
  rdapBase = `http://127.0.0.1:${address.port}/rdap/`
})

afterAll(async () => {
  rdap.closeAllConnections()
  await new Promise((resolve) => rdap.close(resolve))
})

const check = (domain: string) =>
  Effect.runPromise(
    AvailabilityCheck.AvailabilityCheck.use((availability) => availability.check(domain)).pipe(
      Effect.provide(RdapAvailability.layer({ baseUrl: rdapBase, timeout: Duration.millis(500) }))
    )
  )

describe("RdapAvailability", () => {
  it("404 is unregistered, 200 with the domain object is registered, with a fresh stamp", async () => {
    const before = Date.now()
    const free = await check("free-name.com")
    expect(free._tag).toBe("Unregistered")
    if (free._tag !== "Unknown") expect(free.checkedAt).toBeGreaterThanOrEqual(before)
    expect((await check("taken-name.com"))._tag).toBe("Registered")
    expect(requests).toContain("/rdap/domain/free-name.com")
  })

  it("anything else is Unknown: other statuses, time-outs, answers about another name, junk", async () => {
    expect(await check("broken-name.com")).toEqual({ _tag: "Unknown" })
    expect(await check("liar-name.com")).toEqual({ _tag: "Unknown" })
    expect(await check("junk-name.com")).toEqual({ _tag: "Unknown" })
    const started = Date.now()
    expect(await check("slow-name.com")).toEqual({ _tag: "Unknown" })
    expect(Date.now() - started).toBeLessThan(1_800)
  })

  it("an unreachable registry is Unknown", async () => {
    const result = await Effect.runPromise(
      AvailabilityCheck.AvailabilityCheck.use((availability) => availability.check("free-x.com")).pipe(
        Effect.provide(RdapAvailability.layer({ baseUrl: "http://127.0.0.1:1/rdap", timeout: Duration.millis(500) }))
      )
    )
    expect(result).toEqual({ _tag: "Unknown" })
  })

  const fromEnv = (env: Record<string, string>, domain: string) =>
    Effect.runPromise(
      AvailabilityCheck.AvailabilityCheck.use((availability) => availability.check(domain)).pipe(
        Effect.provide(RdapAvailability.layerFromEnv.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))))
      )
    )

  it("without DROPSHELF_RDAP_URL the check only stamps the time", async () => {
    expect((await fromEnv({}, "taken-unasked.com"))._tag).toBe("Unregistered")
    expect(requests).not.toContain("/rdap/domain/taken-unasked.com")
  })

  it("with DROPSHELF_RDAP_URL set it asks the registry", async () => {
    expect((await fromEnv({ DROPSHELF_RDAP_URL: rdapBase }, "taken-env.com"))._tag).toBe("Registered")
    expect(requests).toContain("/rdap/domain/taken-env.com")
  })
})

describe("reveal with the RDAP check", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter, {
      availability: RdapAvailability.layer({ baseUrl: rdapBase, timeout: Duration.millis(500) })
    })
  })
  afterAll(() => server.close())

  it("stamps availability_checked_at on an unregistered name", async () => {
    const row = listing({ domain: "free-stamp.com", availabilityCheckedAt: Date.parse("2026-01-01T00:00:00.000Z") })
    await addListings(server, [row])
    const key = await account(server, "business", "rdap-free")
    const before = Date.now()
    const revealed = await call(server, "POST", `/api/v1/domains/${row.id}/reveal`, { key: key.secret })
    expect(revealed.status).toBe(200)
    expect(Date.parse(revealed.body.availability_checked_at)).toBeGreaterThanOrEqual(before - 1)
  })

  it("delists a name found registered and answers 404 NOT_FOUND", async () => {
    const row = listing({ domain: "taken-gone.com" })
    await addListings(server, [row])
    const key = await account(server, "business", "rdap-taken")
    expect((await call(server, "GET", `/api/v1/domains/${row.id}`, { key: key.secret })).status).toBe(200)
    const revealed = await call(server, "POST", `/api/v1/domains/${row.id}/reveal`, { key: key.secret })
    expect(revealed.status).toBe(404)
    expect(revealed.body.error).toMatchObject({ code: "not_found", reveal_code: "NOT_FOUND" })
    expect((await call(server, "GET", `/api/v1/domains/${row.id}`, { key: key.secret })).status).toBe(404)
  })

  it("keeps the last stamp when the registry does not answer usefully", async () => {
    const stamp = "2026-01-01T00:00:00.000Z"
    const row = listing({ domain: "slow-answer.com", availabilityCheckedAt: Date.parse(stamp) })
    await addListings(server, [row])
    const key = await account(server, "business", "rdap-slow")
    const revealed = await call(server, "POST", `/api/v1/domains/${row.id}/reveal`, { key: key.secret })
    expect(revealed.status).toBe(200)
    expect(revealed.body.availability_checked_at).toBe(stamp)
  })
})

describe("faults", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter, {
      availability: Layer.succeed(AvailabilityCheck.AvailabilityCheck, { check: () => Effect.die(new Error("registry adapter bug")) })
    })
  })
  afterAll(() => server.close())

  it("a fault is 500 server_error in the envelope, REVEAL_FAILED on reveal, and logged", async () => {
    const row = listing({ domain: "fault-case.com" })
    await addListings(server, [row])
    const key = await account(server, "business", "fault")
    const response = await call(server, "POST", `/api/v1/domains/${row.id}/reveal`, { key: key.secret })
    expect(response.status).toBe(500)
    expect(response.headers.get("content-type")).toContain("application/json")
    expect(response.body.error).toMatchObject({ code: "server_error", reveal_code: "REVEAL_FAILED" })
    expect(response.body.error.message).not.toContain("registry adapter bug")
    expect(response.headers.get("x-ratelimit-limit")).toBe("120")
    expect(response.headers.get("access-control-allow-origin")).toBe("*")
    const line = server.logs.find((entry) => entry.status === 500)
    expect(line?.level).toBe("error")
    expect(String(line?.fault)).toContain("registry adapter bug")
    // The request id ties the answer to its log line: in the header, the message and the line.
    const requestId = response.headers.get("x-request-id")
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(response.body.error.message).toContain(requestId)
    expect(line?.request_id).toBe(requestId)
  })

  it("a fault's request id is the caller's when it sent a sane one, on REST and in a tool result", async () => {
    const row = listing({ domain: "fault-traced.com" })
    await addListings(server, [row])
    const key = await account(server, "business", "fault-traced")
    const response = await call(server, "POST", `/api/v1/domains/${row.id}/reveal`, { key: key.secret, headers: { "x-request-id": "support-4711" } })
    expect(response.status).toBe(500)
    expect(response.headers.get("x-request-id")).toBe("support-4711")
    expect(response.body.error.message).toContain("support-4711")
    expect(server.logs.filter((entry) => entry.request_id === "support-4711").map((entry) => entry.status)).toEqual([500])
    const tool = await call(server, "POST", "/mcp", {
      key: key.secret,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "reveal_listing", arguments: { id: row.id } } }),
      headers: { accept: "application/json, text/event-stream", "x-request-id": "support-4712" }
    })
    expect(tool.status).toBe(200)
    expect(tool.body.result.isError).toBe(true)
    expect(tool.body.result.structuredContent.error).toMatchObject({ code: "server_error", reveal_code: "REVEAL_FAILED" })
    expect(tool.body.result.structuredContent.error.message).toContain("support-4712")
    expect(server.logs.filter((entry) => entry.request_id === "support-4712").map((entry) => entry.level)).toEqual(["error", "info"])
  })
})

describe("abandoned requests", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter, {
      availability: Layer.succeed(AvailabilityCheck.AvailabilityCheck, {
        check: () => Effect.as(Effect.sleep("2 seconds"), { _tag: "Unknown" } as const)
      })
    })
  })
  afterAll(() => server.close())

  it("a request its client gave up on is logged at info as abandoned, not as a fault", async () => {
    const row = listing({ domain: "abandoned-case.com" })
    await addListings(server, [row])
    const key = await account(server, "business", "abandon")
    const gaveUp = new AbortController()
    const sent = fetch(`${server.base}/api/v1/domains/${row.id}/reveal`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.secret}` },
      signal: gaveUp.signal
    }).catch(() => "aborted")
    await new Promise((resolve) => setTimeout(resolve, 200))
    gaveUp.abort()
    expect(await sent).toBe("aborted")
    await new Promise((resolve) => setTimeout(resolve, 300))
    const line = server.logs.find((entry) => entry.path === `/api/v1/domains/${row.id}/reveal`)
    expect(line).toMatchObject({ level: "info", abandoned: true })
    expect(server.logs.filter((entry) => entry.level === "error")).toEqual([])
  })
})
