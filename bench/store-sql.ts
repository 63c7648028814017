/**
 * The Postgres adapter on its own, without HTTP: bulk upsert throughput and page latency.
 * Needs a PostgreSQL server (DATABASE_URL, default the local one). Nothing here asserts; the
 * figures go to docs/performance.md by hand.
 *
 *   node bench/store-sql.ts upsert   fresh database; 50 000 inserts then the same rows again
 *                                    (updates), in batches of 2 000, 5 000 and 10 000
 *   node bench/store-sql.ts pages    page latency (p50/p95) on 1 000 000 and 10 000 rows: page 1,
 *                                    a deep page, sort=latest, each filter, the since pull
 *
 * The 1 000 000-row database is `dropshelf_bench_1000000` (the one bench/run.ts makes with
 * `dropshelf seed`); when missing it is created here through the adapter's upsert (50 000 seed
 * listings repeated under distinct ids, as generating a million seed lines takes minutes) and kept.
 *
 * Environment: BENCH_UPSERT_ROWS (50000), BENCH_BATCHES (2000,5000,10000), BENCH_REPEAT (200).
 */
import { ImportLine, type ListingStore as Port, ListingStore, Time } from "@dropshelf/core"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { seedLines } from "../apps/cli/src/Seed.ts"
import { databaseUrl, psql, seconds } from "./postgres.ts"
// By path, not by package name, so a copy of this file in a worktree of an older commit measures that commit.
import { StoreSql } from "../packages/store-sql/src/index.ts"

const UPSERT_ROWS = Number(process.env.BENCH_UPSERT_ROWS ?? 50_000)
const BATCHES = (process.env.BENCH_BATCHES ?? "2000,5000,10000").split(",").map(Number)
const REPEAT = Number(process.env.BENCH_REPEAT ?? 200)
const NOW = Date.now()



/** Synthetic inputs exactly as `dropshelf import` would decode the seed's lines. */
function* inputs(count: number, seed: number): Generator<Port.ListingInput> {
  const randomId = () => crypto.getRandomValues(new Uint8Array(8))
  for (const line of seedLines(count, seed, NOW)) {
    const decoded = ImportLine.importLineToInput(line, NOW, randomId)
    if (decoded._tag === "Success") yield decoded.success
  }
}

/** Generating and decoding the seed's lines is slow (about 1 ms a line); cached between runs. */
const cachedInputs = (count: number): Array<Port.ListingInput> => {
  const cache = join(tmpdir(), `dropshelf-bench-inputs-${count}.json`)
  if (!existsSync(cache)) writeFileSync(cache, JSON.stringify([...inputs(count, 99)]))
  return JSON.parse(readFileSync(cache, "utf8")) as Array<Port.ListingInput>
}

const ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const ID_SPACE = 62 ** 8

/** A distinct, scattered listing id for each index: multiplying by a prime other than 2 and 31 permutes 0..62^8. */
const idFor = (index: number) => {
  let n = Number((BigInt(index + 1) * 1_000_000_007n) % BigInt(ID_SPACE))
  let id = ""
  for (let i = 0; i < 8; i++) {
    id += ID_ALPHABET[n % 62]
    n = Math.floor(n / 62)
  }
  return id
}

/** `count` listings: the cached seed inputs over and over, each copy with its own id. */
function* directoryInputs(count: number): Generator<Port.ListingInput> {
  const base = cachedInputs(50_000)
  for (let index = 0; index < count; index++) {
    yield { ...base[index % base.length]!, id: idFor(index) as Port.ListingInput["id"] }
  }
}

function* batches<A>(items: Iterable<A>, size: number): Generator<Array<A>> {
  let batch: Array<A> = []
  for (const item of items) {
    batch.push(item)
    if (batch.length >= size) {
      yield batch
      batch = []
    }
  }
  if (batch.length > 0) yield batch
}

const run = <A>(database: string, effect: Effect.Effect<A, never, StoreSql.Services>) =>
  Effect.runPromise(Effect.provide(effect, StoreSql.layerServer({ url: databaseUrl(database), maxConnections: 2 })).pipe(
    Effect.orDie
  ))

const freshDatabase = async (name: string) => {
  psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  psql(`CREATE DATABASE ${name}`)
  await run(name, Effect.asVoid(StoreSql.migrate))
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/**
 * Upserts every batch, timing only the store's calls (generation and decoding excluded). The
 * machine is shared, so besides wall time it reports CPU time per row, of this process and of
 * the one Postgres backend (the pool has one connection): those move less with other load.
 */
const upsertAll = (batchList: ReadonlyArray<ReadonlyArray<Port.ListingInput>>) =>
  Effect.gen(function*() {
    const store = yield* ListingStore.ListingStore
    const sql = yield* SqlClient.SqlClient
    const backend = Number((yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`)[0]!.pid)
    let inserted = 0
    let updated = 0
    let elapsed = 0
    let clientCpu = 0
    const backendBefore = cpuSeconds(backend)
    for (const batch of batchList) {
      const start = process.hrtime.bigint()
      const cpu = process.cpuUsage()
      const result = yield* store.upsert(batch)
      const used = process.cpuUsage(cpu)
      clientCpu += (used.user + used.system) / 1e6
      elapsed += seconds(start)
      inserted += result.inserted
      updated += result.updated
    }
    return { inserted, updated, elapsed, clientCpu, backendCpu: cpuSeconds(backend) - backendBefore }
  }).pipe(Effect.orDie)

const describe = (rows: number, r: { elapsed: number; clientCpu: number; backendCpu: number }) =>
  `${(rows / r.elapsed).toFixed(0).padStart(6)} rows/s (cpu/row: node ${(r.clientCpu / rows * 1e6).toFixed(0)} µs,` +
  ` postgres ${(r.backendCpu / rows * 1e6).toFixed(0)} µs)`

const benchUpsert = async () => {
  const name = "dropshelf_bench_upsert"
  console.log(`upsert: ${UPSERT_ROWS} rows per run, server ${psql("SHOW server_version")}, load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`)
  const all = cachedInputs(UPSERT_ROWS)
  for (const size of BATCHES) {
    await freshDatabase(name)
    const list = [...batches(all, size)]
    const insert = await run(name, upsertAll(list))
    const update = await run(name, upsertAll(list))
    console.log(`batch ${String(size).padStart(6)} insert: ${describe(UPSERT_ROWS, insert)} [${insert.inserted} inserted]`)
    console.log(`batch ${String(size).padStart(6)} update: ${describe(UPSERT_ROWS, update)} [${update.updated} updated]`)
  }
  psql(`DROP DATABASE ${name} WITH (FORCE)`)
}

/** A database holding exactly `count` listings, made once through the adapter and kept. */
const ensureDirectory = async (count: number) => {
  const name = `dropshelf_bench_${count}`
  const exists = psql(`SELECT 1 FROM pg_database WHERE datname = '${name}'`) === "1"
  if (exists && Number(psql("SELECT count(*) FROM listings", name) || "0") === count) {
    await run(name, Effect.asVoid(StoreSql.migrate))
    return name
  }
  await freshDatabase(name)
  const start = process.hrtime.bigint()
  await run(
    name,
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      for (const batch of batches(directoryInputs(count), 5000)) yield* store.upsert(batch)
    })
  )
  console.log(`seeded ${name}: ${count} rows in ${seconds(start).toFixed(1)} s`)
  psql("VACUUM ANALYZE listings", name)
  return name
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

interface Case {
  readonly name: string
  readonly request: (deep: Port.PageRequest["after"], deepLatest: Port.PageRequest["after"]) => Port.PageRequest
}

const base = (overrides: Partial<Port.PageRequest>): Port.PageRequest => ({
  order: "id",
  after: undefined,
  limit: 50,
  filters: {},
  visibleBefore: NOW - Time.DAY,
  since: undefined,
  now: NOW,
  // As the directory asks: the running holds come with every page.
  reader: { at: NOW, revealsOf: undefined },
  ...overrides
})

const CASES: ReadonlyArray<Case> = [
  { name: "page 1", request: () => base({}) },
  { name: "deep page (id)", request: (deep) => base({ after: deep }) },
  { name: "latest page 1", request: () => base({ order: "latest" }) },
  { name: "latest deep", request: (_, deepLatest) => base({ order: "latest", after: deepLatest }) },
  { name: "tld=io", request: () => base({ filters: { tld: "io" } }) },
  { name: "category=tech", request: () => base({ filters: { categories: ["tech"] } }) },
  { name: "source=namejet", request: () => base({ filters: { sources: ["namejet"] } }) },
  { name: "price=2500-plus", request: () => base({ filters: { priceRange: "2500-plus" } }) },
  { name: "rsMin=90", request: () => base({ filters: { rsMin: 90 } }) },
  { name: "checkedDays=7", request: () => base({ filters: { checkedDays: 7 } }) },
  { name: "featured", request: () => base({ filters: { featured: true } }) },
  { name: "open tier", request: () => base({ filters: { openTierOnly: true } }) },
  { name: "q=saas", request: () => base({ filters: { q: "saas" } }) },
  { name: "q=zzqx (no match)", request: () => base({ filters: { q: "zzqx" } }) },
  { name: "recommended", request: () => base({ filters: { recommended: true } }) },
  { name: "spam=low", request: () => base({ filters: { spam: "low" } }) },
  { name: "since page (250)", request: () => base({ since: 0, limit: 250 }) },
  { name: "since deep (250)", request: (deep) => base({ since: 0, limit: 250, after: deep }) }
]

/** Positions about 90 % of the way through the id and latest orders. */
const deepPositions = (name: string) => {
  const total = Number(psql("SELECT count(*) FROM listings WHERE status = 'active'", name))
  const offset = Math.floor(total * 0.9)
  const id = psql(`SELECT id FROM listings WHERE status = 'active' ORDER BY id OFFSET ${offset} LIMIT 1`, name)
  const [at, latestId] = psql(
    `SELECT (extract(epoch FROM discovered_at) * 1000)::bigint, id FROM listings WHERE status = 'active'
      ORDER BY discovered_at DESC, id OFFSET ${offset} LIMIT 1`,
    name
  ).split("|")
  return {
    id: { order: "id", id } as never as Port.PageRequest["after"],
    latest: { order: "latest", id: latestId, discoveredAt: Number(at) } as never as Port.PageRequest["after"]
  }
}

const benchPagesOn = (name: string) =>
  run(
    name,
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      const deep = deepPositions(name)
      const results: Array<{ name: string; p50: number; p95: number; rows: number }> = []
      for (const c of CASES) {
        const request = c.request(deep.id, deep.latest)
        let rows = 0
        for (let i = 0; i < 10; i++) rows = (yield* store.page(request)).rows.length
        const times: Array<number> = []
        for (let i = 0; i < REPEAT; i++) {
          const start = process.hrtime.bigint()
          yield* store.page(request)
          times.push(seconds(start) * 1000)
        }
        times.sort((a, b) => a - b)
        results.push({ name: c.name, p50: percentile(times, 0.5), p95: percentile(times, 0.95), rows })
      }
      return results
    })
  )

const benchSincePull = (name: string) =>
  run(
    name,
    Effect.gen(function*() {
      const store = yield* ListingStore.ListingStore
      let after: Port.PageRequest["after"] = undefined
      let pulled = 0
      let peakRss = 0
      const start = process.hrtime.bigint()
      while (true) {
        const page = yield* store.page(base({ since: 0, limit: 250, after }))
        pulled += page.rows.length
        peakRss = Math.max(peakRss, process.memoryUsage.rss())
        if (!page.hasMore) break
        after = { order: "id", id: page.rows[page.rows.length - 1]!.id } as never
      }
      return { pulled, rate: pulled / seconds(start), peakRssMb: peakRss / 1024 / 1024 }
    })
  )

const benchPages = async () => {
  const large = await ensureDirectory(1_000_000)
  const small = await ensureDirectory(10_000)
  const [onLarge, onSmall] = [await benchPagesOn(large), await benchPagesOn(small)]
  console.log(`page latency, ${REPEAT} calls each, ms (p50 / p95), limit 50 unless said`)
  console.log(`${"case".padEnd(20)} ${"1M p50".padStart(8)} ${"1M p95".padStart(8)} ${"10k p50".padStart(8)} ${"rows".padStart(5)}`)
  onLarge.forEach((r, i) => {
    const s = onSmall[i]!
    console.log(
      `${r.name.padEnd(20)} ${r.p50.toFixed(2).padStart(8)} ${r.p95.toFixed(2).padStart(8)} ${s.p50.toFixed(2).padStart(8)} ${String(r.rows).padStart(5)}`
    )
  })
  const pull = await benchSincePull(large)
  console.log(`since pull through the store: ${pull.pulled} rows at ${pull.rate.toFixed(0)} rows/s, peak RSS ${pull.peakRssMb.toFixed(0)} MB`)
}

const mode = process.argv[2] ?? "pages"
if (mode === "upsert") await benchUpsert()
else if (mode === "pages") await benchPages()
else if (mode === "seed") {
  await ensureDirectory(1_000_000)
  await ensureDirectory(10_000)
} else throw new Error(`unknown mode ${mode}`)

