/**
 * The database pool's usage on the operator port, named as OpenTelemetry's database client
 * metrics: `db_client_connection_count` by state, `db_client_connection_max` and, on the embedded
 * database, `db_client_connection_pending_requests`. The embedded pool's figures are exact, so a
 * transaction held in this process shows at once; a real `dropshelf serve` shows them on
 * PGlite, and on PostgreSQL (DATABASE_URL, else skipped) while requests wait behind a lock the
 * test holds.
 */
import { ConfigProvider, Deferred, Effect, Layer, Logger, ManagedRuntime } from "effect"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { inspect } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RateLimiter } from "@dropshelf/core"
import { PoolMetrics, StoreSql } from "@dropshelf/store-sql"
import { Server, Telemetry } from "@dropshelf/server"
import { account, call, type Running, useCasesOver } from "./harness.ts"
import { receiver } from "./otlp.ts"
import { cli, freePort, freshDatabase, type Instance, serve } from "./processes.ts"
import { has, scrape, sum } from "./prometheus.ts"
import { copyPgliteTemplate } from "../../../scripts/PgliteTemplate.ts"

const COUNT = "db_client_connection_count"
const USED = "db_client_connection_state=\"used\""
const IDLE = "db_client_connection_state=\"idle\""

/** The pool's figures off the operator port. */
const poolFigures = async (metricsPort: number) => {
  const { samples, types } = await scrape(metricsPort)
  return {
    samples,
    types,
    used: sum(samples, COUNT, USED),
    idle: sum(samples, COUNT, IDLE),
    max: sum(samples, "db_client_connection_max"),
    pending: sum(samples, "db_client_connection_pending_requests")
  }
}

/** Scrapes until `done` holds of the figures, for up to `ms`; the last figures either way. */
const scrapeUntil = async (metricsPort: number, done: (figures: Awaited<ReturnType<typeof poolFigures>>) => boolean, ms = 20_000) => {
  const deadline = Date.now() + ms
  let figures = await poolFigures(metricsPort)
  while (!done(figures) && Date.now() < deadline) {
    await new Promise((wake) => setTimeout(wake, 100))
    figures = await poolFigures(metricsPort)
  }
  return figures
}

const dirs: Array<string> = []
/** An embedded data directory holding a migrated database already (a copy, scripts/PgliteTemplate.ts). */
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "dropshelf-pool-metrics-"))
  dirs.push(dir)
  copyPgliteTemplate(join(dir, "pgdata"), { migrated: true })
  return dir
}
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/**
 * The server in this process on the embedded database of `dataDir`, its metrics on
 * `metricsPort`, and its runtime; a start that fails leaves nothing running.
 */
const startInProcess = async (
  dataDir: string,
  metricsPort: number
): Promise<{ readonly server: Running; readonly runtime: ManagedRuntime.ManagedRuntime<any, unknown> }> => {
  const storage = PoolMetrics.layerExport.pipe(
    Layer.provideMerge(Layer.effectDiscard(StoreSql.migrate).pipe(Layer.provideMerge(StoreSql.layerPglite({ dataDir }))))
  )
  const core = useCasesOver(Layer.merge(RateLimiter.layerInProcess, storage))
  const quiet = Logger.map(Logger.formatStructured, () => {})
  const stack = Server.layer({ port: 0, shutdownTimeout: "2 seconds", logger: quiet, metricsPort }).pipe(Layer.provideMerge(core))
  const runtime = ManagedRuntime.make(stack as Layer.Layer<any, unknown>)
  try {
    const address = await runtime.runPromise(HttpServer.HttpServer.useSync((found) => found.address) as Effect.Effect<any>)
    const server: Running = {
      base: `http://127.0.0.1:${address.port}`,
      exchanges: [],
      logs: [],
      run: (effect) => runtime.runPromise(effect as Effect.Effect<any, any, never>),
      close: () => runtime.dispose()
    }
    return { server, runtime }
  } catch (error) {
    await runtime.dispose()
    throw error
  }
}

describe("pool metrics: embedded PGlite, exported in this process", () => {
  let server: Running
  let runtime: ManagedRuntime.ManagedRuntime<any, unknown>
  let metricsPort: number
  const dataDir = freshDir()

  beforeAll(async () => {
    // The operator port is chosen free, then bound by the server: on a busy machine another
    // process may take it in between, so a start that lost its port tries another.
    for (let attempt = 1; ; attempt++) {
      metricsPort = await freePort()
      try {
        const started = await startInProcess(dataDir, metricsPort)
        server = started.server
        runtime = started.runtime
        return
      } catch (error) {
        if (attempt === 5 || !inspect(error, { depth: 8 }).includes("EADDRINUSE")) throw error
      }
    }
  })

  afterAll(async () => {
    await runtime?.dispose()
  })

  it("one connection, used while a transaction holds it; a request behind it is pending, and answered once it ends", async () => {
    const key = await account(server, "pro", "pooled")
    const rest = await scrapeUntil(metricsPort, (figures) => figures.used === 0 && figures.pending === 0)
    expect(rest.types.get(COUNT)).toBe("gauge")
    expect(has(rest.samples, COUNT, USED, `db_client_connection_pool_name="${resolve(dataDir)}"`)).toBe(true)
    expect({ used: rest.used, idle: rest.idle, max: rest.max, pending: rest.pending }).toEqual({ used: 0, idle: 1, max: 1, pending: 0 })

    const release = Deferred.makeUnsafe<void>()
    const held = runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(Effect.andThen(sql`SELECT 1`, Deferred.await(release)))
    }) as Effect.Effect<void>)
    try {
      const holding = await scrapeUntil(metricsPort, (figures) => figures.used === 1)
      expect({ used: holding.used, idle: holding.idle }).toEqual({ used: 1, idle: 0 })

      const answer = call(server, "GET", "/api/v1/domains", { key: key.secret })
      const waiting = await scrapeUntil(metricsPort, (figures) => figures.pending >= 1)
      expect({ used: waiting.used, idle: waiting.idle, max: waiting.max }).toEqual({ used: 1, idle: 0, max: 1 })
      expect(waiting.pending).toBeGreaterThanOrEqual(1)

      runtime.runSync(Deferred.succeed(release, undefined))
      await held
      expect((await answer).status).toBe(200)
    } finally {
      runtime.runSync(Deferred.succeed(release, undefined))
    }
    const after = await scrapeUntil(metricsPort, (figures) => figures.used === 0 && figures.pending === 0)
    expect({ used: after.used, idle: after.idle, pending: after.pending }).toEqual({ used: 0, idle: 1, pending: 0 })
  })
})

describe("pool metrics: `dropshelf serve` on embedded PGlite", () => {
  let instance: Instance | undefined
  let otlp: Awaited<ReturnType<typeof receiver>> | undefined

  afterAll(async () => {
    await instance?.stop()
    await otlp?.close()
  })

  it("with DROPSHELF_METRICS_PORT, /metrics shows the one connection by state, its max and the waiting requests; OTLP gets them too", async () => {
    const metricsPort = await freePort()
    const dataDir = freshDir()
    otlp = await receiver()
    instance = await serve({
      DROPSHELF_DATA_DIR: dataDir,
      DROPSHELF_METRICS_PORT: String(metricsPort),
      DROPSHELF_WATCH_WORKER: "false",
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_TRACES_EXPORTER: "none",
      OTEL_METRIC_EXPORT_INTERVAL: "200"
    })
    const figures = await scrapeUntil(metricsPort, (found) => found.used === 0)
    const pool = `db_client_connection_pool_name="${resolve(dataDir)}"`
    expect(has(figures.samples, COUNT, USED, pool) && has(figures.samples, COUNT, IDLE, pool)).toBe(true)
    expect(figures.types.get("db_client_connection_max")).toBe("gauge")
    expect({ used: figures.used, idle: figures.idle, max: figures.max, pending: figures.pending }).toEqual({ used: 0, idle: 1, max: 1, pending: 0 })

    const names = ["db.client.connection.count", "db.client.connection.max", "db.client.connection.pending_requests"]
    for (let attempt = 0; attempt < 100 && !names.every((name) => otlp!.metricNames().has(name)); attempt++) {
      await new Promise((wake) => setTimeout(wake, 100))
    }
    for (const name of names) expect(otlp.metricNames()).toContain(name)
  })
})

describe("pool metrics: exported only while something collects metrics", () => {
  const otlpMetrics = (env: Record<string, string>) => Effect.runSync(Telemetry.otlpMetricsFromEnv.parse(ConfigProvider.fromEnv({ env })))

  it("OTLP exports metrics with an endpoint, unless the SDK is off or the metrics exporter is not otlp", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }
    expect(otlpMetrics({})).toBe(false)
    expect(otlpMetrics(endpoint)).toBe(true)
    expect(otlpMetrics({ ...endpoint, OTEL_METRICS_EXPORTER: "none" })).toBe(false)
    expect(otlpMetrics({ ...endpoint, OTEL_METRICS_EXPORTER: "console, otlp" })).toBe(true)
    expect(otlpMetrics({ ...endpoint, OTEL_SDK_DISABLED: "true" })).toBe(false)
    expect(otlpMetrics({ ...endpoint, OTEL_TRACES_EXPORTER: "none" })).toBe(true)
    // A traces endpoint alone installs the exporter, but its metrics have nowhere to go.
    expect(otlpMetrics({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toBe(false)
    expect(otlpMetrics({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces", OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://collector:4318/v1/metrics" })).toBe(true)
    // A metrics endpoint alone installs nothing: dropshelf's exporter starts from the common or the traces endpoint.
    expect(otlpMetrics({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://collector:4318/v1/metrics" })).toBe(false)
  })
})

const databaseUrl = process.env.DATABASE_URL?.trim() || undefined
if (databaseUrl === undefined) console.info("pool metrics: the PostgreSQL server test is skipped: DATABASE_URL is not set")

describe.skipIf(databaseUrl === undefined)(
  `pool metrics: \`dropshelf serve\` on PostgreSQL${databaseUrl === undefined ? " (skipped: DATABASE_URL is not set)" : ""}`,
  () => {
    let database: { url: string; drop: () => Promise<void> } | undefined
    const instances: Array<Instance> = []
    let admin: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown> | undefined
    const withSql = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
      admin!.runPromise(Effect.flatMap(Effect.service(SqlClient.SqlClient), f))

    beforeAll(async () => {
      database = await freshDatabase(databaseUrl!, "poolmetrics")
      await cli(["migrate"], { DATABASE_URL: database.url })
      // The test's own connection to the same database: it holds the lock and reads pg_stat_activity.
      admin = ManagedRuntime.make(StoreSql.layerServerClient({ url: database.url }) as Layer.Layer<SqlClient.SqlClient, unknown>)
    }, 120_000)

    afterAll(async () => {
      await Promise.all(instances.map((instance) => instance.stop()))
      await admin?.dispose()
      await database?.drop()
    }, 60_000)

    /** The backends connected to the test's database, by application_name. */
    const backends = () =>
      withSql((sql) => sql<{ application_name: string }>`SELECT application_name FROM pg_stat_activity WHERE datname = current_database()`)
        .then((rows) => rows.map((row) => row.application_name))

    /**
     * Runs `blocked` while the test's own transaction holds listings locked, then releases the
     * lock and expects every answer `blocked` hands back to be a 200.
     */
    const whileLocked = async (blocked: () => Promise<Array<Promise<number>>>) => {
      const release = Deferred.makeUnsafe<void>()
      const locked = Deferred.makeUnsafe<void>()
      const lock = withSql((sql) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`LOCK TABLE listings IN ACCESS EXCLUSIVE MODE`
          yield* Deferred.succeed(locked, undefined)
          yield* Deferred.await(release)
        }))
      )
      try {
        await admin!.runPromise(Deferred.await(locked))
        const answers = await blocked()
        admin!.runSync(Deferred.succeed(release, undefined))
        await lock
        expect(await Promise.all(answers)).toEqual(answers.map(() => 200))
      } finally {
        admin!.runSync(Deferred.succeed(release, undefined))
      }
    }

    /** `count` different pages asked at once (no two share a read), their statuses to come. */
    const pages = (instance: Instance, key: string, count: number) =>
      Array.from({ length: count }, (_, n) =>
        fetch(`${instance.base}/api/v1/domains?limit=${n + 2}`, { headers: { authorization: `Bearer ${key}` } }).then((response) => response.status))

    it("the used count rises with the requests waiting on a lock, a connection for every few pipelined, and falls back once they are answered; the max is the pool's size", async () => {
      const env = { DATABASE_URL: database!.url, DROPSHELF_WATCH_WORKER: "false" }
      const created = await cli(["accounts", "create", "--name", "pooled", "--plan", "pro"], env)
      const { key } = await cli(["keys", "create", created.id, "--name", "pooled-key"], env)
      const metricsPort = await freePort()
      const exporting = await serve({ ...env, DROPSHELF_METRICS_PORT: String(metricsPort) })
      instances.push(exporting)
      // One without an exporter beside it: its pool is not the exporting one's, and it samples nothing.
      instances.push(await serve(env))

      // At rest: the key-change listener holds its connection for good.
      const rest = await scrapeUntil(metricsPort, (figures) => figures.used === 1)
      expect(rest.types.get(COUNT)).toBe("gauge")
      expect(has(rest.samples, COUNT, IDLE, `db_client_connection_pool_name="${new URL(database!.url).hostname}:`)).toBe(true)
      expect({ used: rest.used, max: rest.max }).toEqual({ used: 1, max: StoreSql.DEFAULT_MAX_CONNECTIONS })
      expect(has(rest.samples, "db_client_connection_pending_requests")).toBe(false)

      // Each instance's pool under a name of its own; one sampling connection, the exporting instance's.
      const names = await backends()
      expect(names.filter((name) => name === PoolMetrics.SAMPLER_APPLICATION_NAME)).toHaveLength(1)
      for (const instance of instances) {
        expect(names.some((name) => new RegExp(`^dropshelf [0-9a-f]{8} ${instance.child.pid}@`).test(name))).toBe(true)
      }

      await whileLocked(async () => {
        // Different pages, so no two requests share one read: enough to fill three connections'
        // pipelines, each waiting behind its first statement.
        const answers = pages(exporting, key, 3 * StoreSql.STATEMENTS_PER_CONNECTION)
        const blocked = await scrapeUntil(metricsPort, (figures) => figures.used >= rest.used + 3)
        expect(blocked.used).toBeGreaterThanOrEqual(rest.used + 3)
        expect(blocked.used + blocked.idle).toBeLessThanOrEqual(blocked.max)
        return answers
      })
      const after = await scrapeUntil(metricsPort, (figures) => figures.used === rest.used)
      expect(after.used).toBe(rest.used)
    })

    it("DROPSHELF_DB_POOL_SIZE and DROPSHELF_DB_PIPELINE size the served pool: with one statement a connection, each blocked request holds one", async () => {
      const env = { DATABASE_URL: database!.url, DROPSHELF_WATCH_WORKER: "false", DROPSHELF_DB_POOL_SIZE: "4", DROPSHELF_DB_PIPELINE: "1" }
      const created = await cli(["accounts", "create", "--name", "unpipelined", "--plan", "pro"], env)
      const { key } = await cli(["keys", "create", created.id, "--name", "unpipelined-key"], env)
      const metricsPort = await freePort()
      const instance = await serve({ ...env, DROPSHELF_METRICS_PORT: String(metricsPort) })
      instances.push(instance)
      const rest = await scrapeUntil(metricsPort, (figures) => figures.used === 1)
      expect({ used: rest.used, max: rest.max }).toEqual({ used: 1, max: 4 })
      await whileLocked(async () => {
        // Pipelined, the three would share one connection.
        const answers = pages(instance, key, 3)
        const blocked = await scrapeUntil(metricsPort, (figures) => figures.used >= rest.used + 3)
        expect(blocked.used).toBe(rest.used + 3)
        return answers
      })
    })
  }
)
