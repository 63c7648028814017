/*
 * Slow clients: a request must arrive whole within the server's deadline (DROPSHELF_REQUEST_TIMEOUT_MS,
 * here 1.5 s); past it the socket gets the 408 envelope, or is closed when its answer already went
 * out, and other clients are served meanwhile. Spoken over raw sockets: fetch cannot trickle.
 */
import { readFileSync } from "node:fs"
import { connect, type Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { account, addListings, listing, memoryAdapter, type Running, start } from "./harness.ts"

const DEADLINE_MS = 1_500

/** A raw connection: what it received, and when it was closed. */
const open = (base: string) => {
  const { hostname, port } = new URL(base)
  const socket = connect(Number(port), hostname)
  let received = ""
  const closed = new Promise<number>((resolve) => socket.on("close", () => resolve(Date.now())))
  socket.setEncoding("utf8")
  socket.on("data", (chunk: string) => received += chunk)
  socket.on("error", () => {})
  return { socket, closed, received: () => received }
}

const trickle = (socket: Socket, every: number) => {
  const timer = setInterval(() => socket.writable && socket.write("x"), every)
  socket.on("close", () => clearInterval(timer))
  return timer
}

describe("an idle keep-alive connection", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter)
  })
  afterAll(() => server.close())

  it("is closed as many seconds after its last response as docs/api.md says", async () => {
    const guide = readFileSync(new URL("../../../docs/api.md", import.meta.url), "utf8")
    const documented = Number(/an idle one is closed (\d+) s after its last\s+response/.exec(guide)?.[1])
    expect(documented).toBeGreaterThan(0)
    const connection = open(server.base)
    connection.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    while (!connection.received().includes("\r\n\r\n")) await new Promise((wake) => setTimeout(wake, 5))
    const answered = Date.now()
    const idle = (await connection.closed) - answered
    expect(connection.received()).toMatch(/^HTTP\/1\.1 200/)
    expect(Math.abs(idle - documented * 1_000)).toBeLessThan(700)
  }, 15_000)
})

describe("request deadlines", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter, { requestTimeoutMs: DEADLINE_MS })
  })
  afterAll(() => server.close())

  it("a body that trickles past the deadline has its socket closed, its answer already sent", async () => {
    const row = listing({ domain: "slow-body.com" })
    await addListings(server, [row])
    const key = await account(server, "business", "trickle")
    const started = Date.now()
    const raw = open(server.base)
    raw.socket.write(
      `POST /api/v1/domains/${row.id}/reveal HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key.secret}\r\n` +
        "Content-Type: application/json\r\nContent-Length: 10000\r\n\r\n"
    )
    trickle(raw.socket, 200)
    // Meanwhile another client is served.
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200)
    const closedAt = await raw.closed
    expect(raw.received()).toMatch(/^HTTP\/1\.1 200/)
    expect(closedAt - started).toBeGreaterThanOrEqual(DEADLINE_MS - 100)
    expect(closedAt - started).toBeLessThan(DEADLINE_MS + 2_500)
  }, 10_000)

  it("a chunked body that never ends gets the 408 envelope and a closed socket", async () => {
    const key = await account(server, "pro", "endless")
    const started = Date.now()
    const raw = open(server.base)
    raw.socket.write(
      `DELETE /api/v1/holds/h_nothing HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key.secret}\r\n` +
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n"
    )
    const closedAt = await raw.closed
    expect(closedAt - started).toBeLessThan(DEADLINE_MS + 2_500)
    const [head, body] = raw.received().split("\r\n\r\n")
    expect(head).toMatch(/^HTTP\/1\.1 408/)
    expect(head).toMatch(/access-control-allow-origin: \*/i)
    expect(JSON.parse(body!).error.code).toBe("invalid_request")
  }, 10_000)

  it("headers that trickle past the deadline get the 408 envelope", async () => {
    const started = Date.now()
    const raw = open(server.base)
    raw.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
    trickle(raw.socket, 200)
    const closedAt = await raw.closed
    expect(closedAt - started).toBeLessThan(DEADLINE_MS + 2_500)
    expect(raw.received()).toMatch(/^HTTP\/1\.1 408/)
  }, 10_000)
})
