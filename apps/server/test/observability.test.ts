/**
 * What an operator watches: `/readyz`, a trace exported over OTLP/HTTP to a receiver started
 * here that reaches from the request to SQL, Prometheus text on the operator port whose
 * counters move with requests, and the access-log line. One server, on embedded PGlite so the
 * trace has SQL in it.
 */
import { ConfigProvider, Effect, Layer, Logger, ManagedRuntime } from "effect"
import { HttpServer } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Health, Server, Telemetry } from "@dropshelf/server"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, addListings, call, listing, type Running, useCasesOver } from "./harness.ts"
import { type OtlpSpan, receiver } from "./otlp.ts"
import { freePort } from "./processes.ts"
import { parsePrometheus, sum } from "./prometheus.ts"

const pglite = adapters.find((adapter) => adapter.name === "sql-pglite")!

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((found) => found.key === key)?.value
  return value === undefined ? undefined : Object.values(value)[0]
}

describe.skipIf(pglite.skip !== undefined)("observability (sql-pglite)", () => {
  let server: Running
  let otlp: Awaited<ReturnType<typeof receiver>>
  let metricsPort: number
  let dependencyUp = true
  let runtime: ManagedRuntime.ManagedRuntime<unknown, unknown>
  const logs: Array<Record<string, unknown>> = []

  beforeAll(async () => {
    otlp = await receiver()
    metricsPort = await freePort()
    const core = useCasesOver(pglite.layer())
    const logger = Logger.map(Logger.formatStructured, (entry) => {
      logs.push({ ...entry.annotations, level: entry.level.toLowerCase(), message: entry.message })
    })
    const stack = Server.layer({ port: 0, shutdownTimeout: "2 seconds", logger, metricsPort }).pipe(
      Layer.provide(Health.layerDependencies([{
        name: "database",
        check: Effect.suspend(() => dependencyUp ? Effect.void : Effect.fail("down"))
      }])),
      Layer.provide(Telemetry.layerOtlpFromEnv.pipe(
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({
          env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: "100", OTEL_METRIC_EXPORT_INTERVAL: "200" }
        })))
      )),
      Layer.provideMerge(core)
    )
    runtime = ManagedRuntime.make(stack as Layer.Layer<any, unknown>)
    const address = await runtime.runPromise(HttpServer.HttpServer.useSync((found) => found.address) as Effect.Effect<any>)
    server = {
      base: `http://127.0.0.1:${address.port}`,
      exchanges: [],
      logs,
      run: (effect) => runtime.runPromise(effect as Effect.Effect<any, any, never>),
      close: () => runtime.dispose()
    }
  })

  afterAll(async () => {
    await runtime?.dispose()
    await otlp?.close()
    cleanupPgliteDirs()
  })

  it("/readyz answers 200 while the database answers, 503 naming it when it does not; no key, never counted", async () => {
    const ready = await call(server, "GET", "/readyz")
    expect(ready.status).toBe(200)
    expect(ready.body).toEqual({ status: "ready", checks: { database: "ok" } })
    expect(ready.headers.get("x-ratelimit-limit")).toBeNull()
    dependencyUp = false
    try {
      const unready = await call(server, "GET", "/readyz")
      expect(unready.status).toBe(503)
      expect(unready.body).toEqual({ status: "unready", failed: ["database"], checks: { database: "failed" } })
      // Liveness touches nothing: still 200.
      expect((await call(server, "GET", "/healthz")).status).toBe(200)
    } finally {
      dependencyUp = true
    }
  })

  it("a list request's trace reaches from the server span to SQL, under the caller's traceparent, with the key prefix and never the secret", async () => {
    const key = await account(server, "pro", "traced")
    await addListings(server, [listing({ domain: "traced-coffee.com" })])
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    const callerSpan = "00f067aa0ba902b7"
    const answer = await call(server, "GET", "/api/v1/domains?limit=5", {
      key: key.secret,
      headers: { traceparent: `00-${traceId}-${callerSpan}-01` }
    })
    expect(answer.status).toBe(200)

    let spans: Array<OtlpSpan> = []
    for (let attempt = 0; attempt < 100; attempt++) {
      spans = otlp.spans().filter((span) => span.traceId === traceId)
      if (spans.some((span) => span.kind === 2) && spans.some((span) => attribute(span, "db.query.text") !== undefined)) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const serverSpan = spans.find((span) => span.kind === 2)
    expect(serverSpan, "a server span in the caller's trace").toBeDefined()
    expect(serverSpan!.parentSpanId).toBe(callerSpan)
    expect(serverSpan!.name).toBe("GET /api/v1/domains")
    expect(attribute(serverSpan!, "http.route")).toBe("/api/v1/domains")
    expect(attribute(serverSpan!, "http.response.status_code")).toBe(200)
    expect(attribute(serverSpan!, "dropshelf.key.prefix")).toBe(key.prefix)
    expect(JSON.stringify(spans)).not.toContain(key.secret)

    const byId = new Map(spans.map((span) => [span.spanId, span]))
    const ancestry = (span: OtlpSpan) => {
      const names: Array<string> = []
      for (let current: OtlpSpan | undefined = span; current !== undefined; current = byId.get(current.parentSpanId ?? "")) {
        names.push(current.name)
      }
      return names
    }
    const useCase = spans.find((span) => span.name === "Directory.list")
    expect(useCase, "the use case's span").toBeDefined()
    expect(ancestry(useCase!).at(-1)).toBe("GET /api/v1/domains")
    const statements = spans.filter((span) => attribute(span, "db.query.text") !== undefined)
    expect(statements.length).toBeGreaterThan(0)
    // How long each statement waited for a connection: what an operator reads of the pool.
    for (const statement of statements) expect(attribute(statement, "db.client.connection.wait_time_ms")).toBeDefined()
    // Some statement runs inside the use case, and every one hangs off the request.
    expect(statements.some((span) => ancestry(span).includes("Directory.list"))).toBe(true)
    for (const statement of statements) expect(ancestry(statement).at(-1)).toBe("GET /api/v1/domains")
  })

  it("a server span is named by the route its path names: matched, a 405, a preflight; the method alone for no route", async () => {
    const key = await account(server, "pro", "named")
    const traced = [
      { method: "GET", path: "/api/v1/domains/Ab3dE9xZ", status: 404, name: "GET /api/v1/domains/:id", key: true },
      { method: "HEAD", path: "/api/v1/domains", status: 200, name: "HEAD /api/v1/domains", key: true },
      { method: "PUT", path: "/api/v1/domains", status: 405, name: "PUT /api/v1/domains", key: true },
      { method: "GET", path: "/mcp", status: 405, name: "GET /mcp", key: true },
      { method: "OPTIONS", path: "/api/v1/me", status: 204, name: "OPTIONS /api/v1/me", key: false },
      { method: "GET", path: "/api/v1/nowhere", status: 404, name: "GET", key: true }
    ]
    const traceIds = traced.map((_, index) => `${"5".repeat(31)}${index}`)
    for (const [index, request] of traced.entries()) {
      const answer = await fetch(`${server.base}${request.path}`, {
        method: request.method,
        headers: {
          traceparent: `00-${traceIds[index]}-00f067aa0ba902b7-01`,
          ...(request.key ? { authorization: `Bearer ${key.secret}` } : {}),
          ...(request.method === "OPTIONS" ? { origin: "https://example.com", "access-control-request-method": "GET" } : {})
        }
      })
      await answer.arrayBuffer()
      expect(answer.status, `${request.method} ${request.path}`).toBe(request.status)
    }
    const serverSpanOf = (traceId: string) => otlp.spans().find((span) => span.traceId === traceId && span.kind === 2)
    for (let attempt = 0; attempt < 100 && !traceIds.every((id) => serverSpanOf(id) !== undefined); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(traceIds.map((id) => serverSpanOf(id)?.name)).toEqual(traced.map((request) => request.name))
  })

  it("metrics come out as Prometheus text on the operator port, never the public one, and counters move with requests", async () => {
    const key = await account(server, "business", "counted")
    const scrape = async () => {
      const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/plain; version=0.0.4")
      return parsePrometheus(await response.text())
    }
    const before = await scrape()
    const row = listing({ domain: "counted-coffee.com" })
    await addListings(server, [row])
    for (let i = 0; i < 3; i++) expect((await call(server, "GET", "/api/v1/domains", { key: key.secret })).status).toBe(200)
    expect((await call(server, "POST", `/api/v1/domains/${row.id}/reveal`, { key: key.secret })).status).toBe(200)
    expect((await call(server, "POST", `/api/v1/domains/${row.id}/hold`, { key: key.secret })).status).toBe(200)
    const after = await scrape()

    const list = ["http_route=\"/api/v1/domains\"", "http_response_status_code=\"200\"", "http_request_method=\"GET\""]
    expect(after.types.get("http_server_requests_total")).toBe("counter")
    expect(after.types.get("http_server_request_duration")).toBe("histogram")
    expect(sum(after.samples, "http_server_requests_total", ...list) - sum(before.samples, "http_server_requests_total", ...list)).toBe(3)
    expect(sum(after.samples, "http_server_request_duration_count", ...list) - sum(before.samples, "http_server_request_duration_count", ...list)).toBe(3)
    expect(sum(after.samples, "dropshelf_reveals_total") - sum(before.samples, "dropshelf_reveals_total")).toBe(1)
    expect(sum(after.samples, "dropshelf_holds_total") - sum(before.samples, "dropshelf_holds_total")).toBe(1)

    // A burst past the free plan's per-minute limit: the refusals are counted by route.
    const free = await account(server, "free", "limited")
    let refused = 0
    for (let i = 0; i < 80 && refused === 0; i++) {
      if ((await call(server, "GET", "/api/v1/me", { key: free.secret })).status === 429) refused++
    }
    expect(refused).toBe(1)
    const limited = await scrape()
    expect(sum(limited.samples, "dropshelf_rate_limit_refusals_total", "http_route=\"/api/v1/me\"") - sum(after.samples, "dropshelf_rate_limit_refusals_total", "http_route=\"/api/v1/me\"")).toBe(1)

    // The same metrics went out over OTLP too.
    for (let attempt = 0; attempt < 40 && !otlp.metricNames().has("http.server.requests"); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(otlp.metricNames()).toContain("http.server.request.duration")
    expect(otlp.metricNames()).toContain("http.server.requests")

    expect((await call(server, "GET", "/metrics")).status).toBe(404)
  })

  it("writes one access-log line per request: request id, route template, status, duration, key prefix and trace id", async () => {
    const key = await account(server, "pro", "logged")
    const row = listing({ domain: "logged-coffee.com" })
    await addListings(server, [row])
    const answer = await call(server, "GET", `/api/v1/domains/${row.id}`, { key: key.secret, headers: { "x-request-id": "log-line-1" } })
    expect(answer.status).toBe(200)
    const lines = logs.filter((line) => line.request_id === "log-line-1")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      path: `/api/v1/domains/${row.id}`,
      route: "/api/v1/domains/:id",
      status: 200,
      key_prefix: key.prefix
    })
    expect(typeof lines[0]!.duration_ms).toBe("number")
    expect(lines[0]!.trace_id).toMatch(/^[0-9a-f]{32}$/)
    expect(JSON.stringify(lines[0])).not.toContain(key.secret)
  })
})
