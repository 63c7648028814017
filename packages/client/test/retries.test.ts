/**
 * The retry path against a local stub HTTP server that answers a script: 429 waited out as
 * `Retry-After` (or the IETF `RateLimit` field) says, 5xx and dropped connections retried with
 * bounded backoff, every other 4xx answered at once, and one `Idempotency-Key` per write, the
 * same on each of its retries.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Dropshelf, DropshelfError, DropshelfTransportError, type RetryPolicy } from "@dropshelf/client"

interface Seen {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
}

/**
 * One scripted answer: a status, headers and JSON body; `drop` closes the connection unanswered;
 * `hang` never answers; `stall` sends the head and the start of a body, then nothing more;
 * `trickle` sends the head, then `chunk` every `everyMs`, never ending the body.
 */
type Step =
  | { readonly status: number; readonly headers?: Record<string, string>; readonly body: unknown }
  | { readonly stall: { readonly headers: Record<string, string>; readonly start: string } }
  | { readonly trickle: { readonly headers: Record<string, string>; readonly chunk: string; readonly everyMs: number } }
  | "drop"
  | "hang"

const NOW = "2026-11-24T09:30:00.000Z"
const LISTING = {
  id: "Ab3dE9xZ",
  status: "active",
  tier: "open",
  domain: "stub-example.com",
  mask_hint: "s***-example.com",
  name_disclosed: true,
  hold_state: "none",
  hold_expires_at: null,
  estimated_value_cents: 12_000,
  discovered_at: NOW,
  updated_at: NOW,
  tld: "com",
  metrics_missing: []
}
const REVEALED = { ...LISTING, revealed_at: NOW }
const ME = {
  plan: "pro",
  reveals: { limit: 500, remaining: 499, used: 1, resets_at: NOW },
  rate_limit: { limit: 60, remaining: 59 },
  sync_feed: false,
  key: { name: "stub", prefix: "dsk_stubstub", created_at: NOW, last_used_at: null }
}
const envelope = (code: string, message: string, extra: Record<string, unknown> = {}) => ({ error: { code, message, ...extra } })
const ok = (body: unknown): Step => ({ status: 200, body })

describe("retries against a stub server", () => {
  let server: http.Server
  let base: string
  let script: Array<Step> = []
  let seen: Array<Seen> = []
  const hanging: Array<http.ServerResponse> = []

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      seen.push({ method: request.method!, path: request.url!, headers: request.headers })
      request.resume()
      const step = script.shift() ?? { status: 500, body: envelope("server_error", "the script ran out") }
      if (step === "drop") return void request.socket.destroy()
      if (step === "hang") return void hanging.push(response)
      if ("stall" in step) {
        response.writeHead(200, step.stall.headers)
        response.write(step.stall.start)
        return void hanging.push(response)
      }
      if ("trickle" in step) {
        response.writeHead(200, step.trickle.headers)
        response.flushHeaders()
        const timer = setInterval(() => response.write(step.trickle.chunk), step.trickle.everyMs)
        response.on("close", () => clearInterval(timer))
        return void hanging.push(response)
      }
      response.writeHead(step.status, { "content-type": "application/json", ...step.headers })
      response.end(JSON.stringify(step.body))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    for (const response of hanging) response.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  beforeEach(() => {
    script = []
    seen = []
  })

  /** A client whose retries are recorded, with short backoff so the suite stays quick. */
  const clientWith = (retry: RetryPolicy.Options = {}, timeoutMs?: number) => {
    const retries: Array<RetryPolicy.Retry> = []
    const client = new Dropshelf({
      baseUrl: base,
      apiKey: "dsk_stub",
      retry: { baseDelayMs: 10, maxDelayMs: 40, ...retry, onRetry: (event) => retries.push(event) },
      timeoutMs
    })
    return { client, retries }
  }

  it("waits out a 429 for the seconds Retry-After names, then answers", async () => {
    const { client, retries } = clientWith()
    script = [
      { status: 429, headers: { "retry-after": "1" }, body: envelope("rate_limited", "Over the limit", { retry_after: 1 }) },
      ok(ME)
    ]
    const me = await client.me()
    expect(me.plan).toBe("pro")
    expect(seen).toHaveLength(2)
    expect(retries).toEqual([expect.objectContaining({ attempt: 1, delayMs: 1000, reason: "rate-limited", status: 429, method: "GET" })])
  })

  it("reads the wait from the IETF RateLimit field when a 429 has no Retry-After", async () => {
    const { client, retries } = clientWith()
    script = [
      {
        status: 429,
        headers: { "ratelimit-policy": "\"per-minute\";q=60;w=60", ratelimit: "\"per-minute\";r=0;t=1" },
        body: envelope("rate_limited", "Over the limit", { retry_after: 1 })
      },
      ok(ME)
    ]
    await client.me()
    expect(retries.map((retry) => retry.delayMs)).toEqual([1000])
  })

  it("answers a 429 at once when the server names a wait longer than the client accepts", async () => {
    const { client, retries } = clientWith({ maxWaitMs: 5_000 })
    script = [{ status: 429, headers: { "retry-after": "30" }, body: envelope("rate_limited", "Over the limit", { retry_after: 30 }) }]
    const refusal = await client.me().catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(DropshelfError)
    expect(refusal).toMatchObject({ status: 429, code: "rate_limited", fields: { retry_after: 30 } })
    expect(seen).toHaveLength(1)
    expect(retries).toEqual([])
  })

  it("backs off on 5xx, doubling up to the ceiling, and stops after maxRetries", async () => {
    const { client, retries } = clientWith({ maxRetries: 4 })
    script = Array.from({ length: 5 }, () => ({ status: 503, body: envelope("server_error", "Unavailable") }))
    const refusal = await client.listings.get("Ab3dE9xZ").catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(DropshelfError)
    expect(refusal).toMatchObject({ status: 503, code: "server_error", message: "Unavailable" })
    expect(seen).toHaveLength(5)
    expect(retries.map((retry) => retry.reason)).toEqual(Array(4).fill("server-error"))
    // Ceilings 10, 20, 40, 40 ms (the last capped by maxDelayMs), each jittered in its upper half.
    const ceilings = [10, 20, 40, 40]
    retries.forEach((retry, index) => {
      expect(retry.delayMs).toBeGreaterThanOrEqual(ceilings[index]! / 2)
      expect(retry.delayMs).toBeLessThanOrEqual(ceilings[index]!)
    })
  })

  it("retries a 500 on a write and answers with the success", async () => {
    const { client } = clientWith()
    script = [{ status: 500, body: envelope("server_error", "fault", { reveal_code: "REVEAL_FAILED" }) }, ok(REVEALED)]
    const revealed = await client.reveal("Ab3dE9xZ")
    expect(revealed.revealed_at).toBe(NOW)
    expect(seen).toHaveLength(2)
  })

  it.each([400, 401, 402, 403, 404, 405, 408, 409, 413, 422, 431])("never retries a %i", async (status) => {
    const { client, retries } = clientWith()
    script = [{ status, body: envelope("invalid_request", `refused with ${status}`) }, ok(REVEALED)]
    const refusal = await client.reveal("Ab3dE9xZ").catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(DropshelfError)
    expect(refusal).toMatchObject({ status, message: `refused with ${status}` })
    expect(seen).toHaveLength(1)
    expect(retries).toEqual([])
  })

  it("retries dropped connections, sending the write's one Idempotency-Key on every attempt", async () => {
    const { client, retries } = clientWith()
    script = ["drop", "drop", ok(REVEALED)]
    await client.reveal("Ab3dE9xZ")
    expect(seen.map((request) => `${request.method} ${request.path}`)).toEqual(Array(3).fill("POST /api/v1/domains/Ab3dE9xZ/reveal"))
    const keys = seen.map((request) => request.headers["idempotency-key"])
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Set(keys)).toEqual(new Set([keys[0]]))
    expect(retries.map((retry) => retry.reason)).toEqual(["network", "network"])

    script = [ok(REVEALED)]
    await client.reveal("Ab3dE9xZ")
    expect(seen[3]!.headers["idempotency-key"]).not.toBe(keys[0])
  })

  it("sends the caller's own idempotency key on every attempt of holds, extensions and ends", async () => {
    const { client } = clientWith()
    const held = { hold: { id: "h1", listing_id: "Ab3dE9xZ", state: "running", held_at: NOW, expires_at: NOW, ended_at: null, can_extend: true, extend_hours: 24 }, holds: { active: 1, hold_hours: 48, limit: 3, plan: "pro" } }
    script = ["drop", ok(held), "drop", ok(held), "drop", ok(held)]
    await client.hold("Ab3dE9xZ", { idempotencyKey: "hold-Ab3dE9xZ-1" })
    await client.holds.extend("h1", { idempotencyKey: "extend-h1" })
    await client.holds.end("h1", "registered", { idempotencyKey: "end-h1" })
    expect(seen.map((request) => [request.method, request.path, request.headers["idempotency-key"]])).toEqual([
      ["POST", "/api/v1/domains/Ab3dE9xZ/hold", "hold-Ab3dE9xZ-1"],
      ["POST", "/api/v1/domains/Ab3dE9xZ/hold", "hold-Ab3dE9xZ-1"],
      ["POST", "/api/v1/holds/h1/extend", "extend-h1"],
      ["POST", "/api/v1/holds/h1/extend", "extend-h1"],
      ["DELETE", "/api/v1/holds/h1", "end-h1"],
      ["DELETE", "/api/v1/holds/h1", "end-h1"]
    ])
  })

  it("sends no idempotency key on reads, and the Bearer key on every call", async () => {
    const { client } = clientWith()
    script = [ok(ME), ok(LISTING)]
    await client.me()
    await client.listings.get("Ab3dE9xZ")
    expect(seen.map((request) => request.headers["idempotency-key"])).toEqual([undefined, undefined])
    expect(seen.map((request) => request.headers.authorization)).toEqual(["Bearer dsk_stub", "Bearer dsk_stub"])
  })

  it("ends an attempt that gets no answer in time and sends it again", async () => {
    const { client, retries } = clientWith({}, 300)
    script = ["hang", ok(ME)]
    const me = await client.me()
    expect(me.plan).toBe("pro")
    expect(seen).toHaveLength(2)
    expect(retries.map((retry) => retry.reason)).toEqual(["network"])
  }, 20_000)

  it("ends an attempt whose answer stops half-way through its body, and sends it again", async () => {
    const { client, retries } = clientWith({}, 300)
    script = [{ stall: { headers: { "content-type": "application/json" }, start: JSON.stringify(ME).slice(0, 20) } }, ok(ME)]
    const me = await client.me()
    expect(me.plan).toBe("pro")
    expect(seen).toHaveLength(2)
    expect(retries.map((retry) => retry.reason)).toEqual(["network"])
  }, 20_000)

  it("ends a snapshot whose stream stops for longer than the time-out, after the lines that came", async () => {
    const { client } = clientWith({}, 300)
    script = [{ stall: { headers: { "content-type": "application/x-ndjson" }, start: JSON.stringify(LISTING) + "\n" } }]
    const lines: Array<unknown> = []
    const started = Date.now()
    const failure = await (async () => {
      for await (const line of client.listings.snapshot()) lines.push(line)
    })().catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(DropshelfTransportError)
    expect(lines).toEqual([expect.objectContaining({ id: LISTING.id })])
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(seen).toHaveLength(1)
  }, 20_000)

  it("ends an attempt whose document trickles in slower than the time-out allows, though bytes keep coming", async () => {
    const { client, retries } = clientWith({}, 500)
    script = [{ trickle: { headers: { "content-type": "application/json" }, chunk: " ", everyMs: 50 } }, ok(ME)]
    const started = Date.now()
    const me = await client.me()
    expect(me.plan).toBe("pro")
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(retries.map((retry) => retry.reason)).toEqual(["network"])
  }, 20_000)

  it("ends a snapshot whose stream keeps trickling past its total bound, after the lines that came", async () => {
    const client = new Dropshelf({ baseUrl: base, apiKey: "dsk_stub", retry: false, timeoutMs: 300, streamTimeoutMs: 1_000 })
    script = [{ trickle: { headers: { "content-type": "application/x-ndjson" }, chunk: JSON.stringify(LISTING) + "\n", everyMs: 50 } }]
    let lines = 0
    const started = Date.now()
    const failure = await (async () => {
      for await (const _ of client.listings.snapshot()) lines++
    })().catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(DropshelfTransportError)
    expect(lines).toBeGreaterThan(0)
    expect(Date.now() - started).toBeLessThan(5_000)
  }, 20_000)

  it("gives up on the network after maxRetries, with a transport error", async () => {
    const { client } = clientWith({ maxRetries: 2 })
    script = ["drop", "drop", "drop"]
    const failure = await client.me().catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(DropshelfTransportError)
    expect(failure).toMatchObject({ reason: "network" })
    expect(seen).toHaveLength(3)
  })

  it("sends each request once when retrying is off", async () => {
    const client = new Dropshelf({ baseUrl: base, apiKey: "dsk_stub", retry: false })
    script = [{ status: 503, body: envelope("server_error", "Unavailable") }, ok(ME)]
    await expect(client.me()).rejects.toMatchObject({ status: 503 })
    expect(seen).toHaveLength(1)
  })

  it("reads an answer that is not the API's as a transport error with its status", async () => {
    const { client } = clientWith({ maxRetries: 0 })
    script = [{ status: 502, headers: { "content-type": "text/html" }, body: "<html>bad gateway</html>" }]
    const failure = await client.me().catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(DropshelfTransportError)
    expect(failure).toMatchObject({ reason: "response", status: 502 })
  })
})
