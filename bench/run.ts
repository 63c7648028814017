/**
 * `npm run bench`: the load and scale benchmark. Needs a PostgreSQL server (DATABASE_URL, default
 * the local one). It seeds 1 000 000 and 10 000 listings (kept between runs, in databases of
 * their own), measures import speed, starts the real server with the rate limiter counting but
 * never refusing, runs each request mix from a separate load process, compares with a bare
 * node:http ceiling, and prints a table. Nothing here is an assertion: the figures go to
 * docs/performance.md by hand, with what limits them.
 *
 * The server is the bundle of `npm run build`, as deployed (bench/server.ts); idle RSS is also
 * given for the TypeScript sources run directly.
 *
 * Every mix's first BENCH_WARMUP seconds (6) are not sampled, so that the JIT and the heap settle
 * and the connections' walks spread out before it is measured (docs/performance.md says why; the
 * same connections go on, bench/load.ts); before the first, the mixed
 * workload's filter sets are asked once each and the server left to load its filter columns.
 * Latency percentiles are exact (bench/load.ts), not autocannon's whole milliseconds. The since
 * feed is pulled twice: by the server that served the mixes, and by a fresh one.
 *
 * The mixed list workload is what a population of clients asks and a page cache cannot serve:
 * many filter sets, each paged through its first three pages by `next_cursor`, between single
 * reads of listings from the whole directory (MIXED_FILTERS, mixedWalks). It runs last on the
 * server that served the other mixes, so that it does not change what the others measure:
 * first as one business key (the figure the targets name), then as ten pro accounts.
 *
 * The random-combination workload (bench/combos.ts) is the mixed one over BENCH_COMBOS (200)
 * combinations of every filter drawn from BENCH_COMBO_SEED (1), run after it with a warm-up of its
 * own, BENCH_COMBO_WARMUP seconds (60); then, one request at a time, every page of every
 * combination is timed in BENCH_COMBO_PASSES passes (3), a page's time their median, and the ten
 * slowest are printed.
 *
 * Environment: BENCH_LISTINGS (1000000), BENCH_SMALL (10000), BENCH_DURATION seconds per mix (10),
 * BENCH_WARMUP seconds (6), BENCH_CONNECTIONS (50), BENCH_IMPORT_ROWS (200000), BENCH_COMBOS (200),
 * BENCH_COMBO_SEED (1), BENCH_ONLY (every
 * part): comma-separated parts to run among `import`, `idle` (RSS from the sources), `pages` (the
 * single-page mixes), `otlp` (two of them with the OpenTelemetry exporter off and on), `mixed`,
 * `combos`, `deep`, `writes`, `since`, `snapshot` (bench/snapshot.ts, on a fresh server), `scale` (which
 * alone seeds BENCH_SMALL), `caches` (what each cache buys, bench/caches.ts; BENCH_CACHE_PAIRS);
 * the ceiling always runs. To try the mixed workload quickly on a small directory:
 * `BENCH_ONLY=mixed BENCH_LISTINGS=20000 BENCH_DURATION=5 BENCH_WARMUP=2 npm run bench`.
 * BENCH_DATABASE names the large directory's database (default `dropshelf_bench_<BENCH_LISTINGS>`),
 * to measure a schema of its own beside a kept one. BENCH_NODE_ARGS and BENCH_BUNDLE: bench/server.ts.
 */
import { createWriteStream, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Plan } from "@dropshelf/core"
import { seedLines } from "../apps/cli/src/Seed.ts"
import { measureCaches } from "./caches.ts"
import { combinations, PAGE_TARGET_MS, timeCombinations, type TimedCombination } from "./combos.ts"
import { psql, seconds, serverUrl } from "./postgres.ts"
import { idsAcross, MIXED_FILTERS, MIXED_IDS, mixedWalks } from "./mixed.ts"
import { getJson, pullSince, rssMb } from "./since.ts"
import { untilQuiet } from "./proc.ts"
import { percentileOf } from "./stats.ts"
import { pullSnapshot, type SnapshotPull, stalledSnapshot } from "./snapshot.ts"
import { dropshelf, keyFor, load as loadFor, loadWalks, type LoadResult, startCeiling, startOtlpSink, startServer, stop } from "./server.ts"

const LARGE = Number(process.env.BENCH_LISTINGS ?? 1_000_000)
const SMALL = Number(process.env.BENCH_SMALL ?? 10_000)
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 6)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const IMPORT_ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 200_000)
const COMBOS = Number(process.env.BENCH_COMBOS ?? 200)
const COMBO_SEED = Number(process.env.BENCH_COMBO_SEED ?? 1)
/** The combinations' warm-up: under it the filter columns load and their search terms are read, as on a server up a while. */
const COMBO_WARMUP = Number(process.env.BENCH_COMBO_WARMUP ?? 60)
/** Timed passes over every page one request at a time; a page's time is their median. */
const COMBO_PASSES = Math.max(1, Number(process.env.BENCH_COMBO_PASSES ?? 3))
const PARTS = ["import", "idle", "pages", "otlp", "mixed", "combos", "deep", "writes", "since", "snapshot", "scale", "caches"] as const
const ONLY = process.env.BENCH_ONLY?.split(",").map((part) => part.trim()).filter((part) => part.length > 0)
const unknownParts = (ONLY ?? []).filter((part) => !(PARTS as ReadonlyArray<string>).includes(part))
if (unknownParts.length > 0) throw new Error(`BENCH_ONLY: unknown part ${unknownParts.join(", ")}; the parts are ${PARTS.join(", ")}`)
const runs = (part: (typeof PARTS)[number]) => ONLY === undefined || ONLY.includes(part)
const work = mkdtempSync(join(tmpdir(), "dropshelf-bench-"))

/** A database holding exactly `count` seeded listings, made once and reused by later runs. */
const ensureDirectory = (count: number, name = `dropshelf_bench_${count}`) => {
  const exists = psql(`SELECT 1 FROM pg_database WHERE datname = '${name}'`) === "1"
  if (exists) {
    const rows = Number(psql("SELECT count(*) FROM listings", name) || "0")
    if (rows === count) {
      settle(name)
      return { name, seedRate: undefined }
    }
    psql(`DROP DATABASE ${name} WITH (FORCE)`)
  }
  psql(`CREATE DATABASE ${name}`)
  dropshelf(name, ["migrate"])
  const start = process.hrtime.bigint()
  dropshelf(name, ["seed", "--listings", String(count), "--seed", "7"])
  const seedRate = count / seconds(start)
  settle(name)
  return { name, seedRate }
}

/**
 * The directory as a served one is kept: vacuumed and analysed. Fresh statistics matter after
 * any bulk load (with none, the planner sorts the whole table); the vacuum is what autovacuum
 * would have done, and some machines run Postgres with autovacuum off (then nothing sets the
 * visibility map or freezes the seed's rows). Cheap when nothing changed since the last run.
 */
const settle = (name: string) => {
  psql("VACUUM (ANALYZE) listings", name)
  holdHistory(name)
}

/**
 * A served directory's holds, by another account than the bench's: one listing in 20 was held
 * once and the hold has ended (released, or run out), one in 200 is held now. Made again at each
 * run, so that the running ones run. None on the first 100 listings in id order, whose default
 * page the `writes` part reveals (a listing another account holds cannot be revealed).
 */
const holdHistory = (name: string) => {
  psql("DELETE FROM holds WHERE account_id = 'bench-holder'", name)
  psql(
    `INSERT INTO holds (id, listing_id, account_id, held_at, expires_at, ended_at, outcome)
    SELECT 'bench-hold-' || n, id, 'bench-holder',
      CASE WHEN n % 10 = 0 THEN now() - interval '1 hour' ELSE now() - interval '30 days' END,
      CASE WHEN n % 10 = 0 THEN now() + interval '23 hours' ELSE now() - interval '29 days' END,
      CASE WHEN n % 10 IN (1, 3, 5, 7) THEN now() - interval '29 days 12 hours' END,
      CASE WHEN n % 10 IN (1, 3, 5, 7) THEN 'released' END
    FROM (SELECT id, row_number() OVER (ORDER BY md5(id)) AS n FROM listings
      WHERE status = 'active' AND id > (SELECT max(id) FROM (SELECT id FROM listings ORDER BY id LIMIT 100) AS first)) AS held
    WHERE n <= (SELECT count(*) / 20 FROM listings)`,
    name
  )
  psql("VACUUM (ANALYZE) holds", name)
}

const measureImport = async () => {
  const name = "dropshelf_bench_import"
  psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  psql(`CREATE DATABASE ${name}`)
  dropshelf(name, ["migrate"])
  const file = join(work, "import.ndjson")
  const out = createWriteStream(file)
  for (const line of seedLines(IMPORT_ROWS, 99, Date.now())) {
    if (!out.write(`${JSON.stringify(line)}\n`)) await new Promise<void>((resolve) => out.once("drain", () => resolve()))
  }
  await new Promise<void>((resolve) => out.end(() => resolve()))
  const start = process.hrtime.bigint()
  const report = dropshelf(name, ["import", file])
  const rate = (report.inserted + report.updated) / seconds(start)
  psql(`DROP DATABASE ${name} WITH (FORCE)`)
  return rate
}

const load = (port: number, key: string, requests: ReadonlyArray<{ method?: string; path: string }>): LoadResult =>
  loadFor(port, key, requests, { connections: CONNECTIONS, durationSeconds: DURATION, warmupSeconds: WARMUP })

const ms = (value: number) => `${value.toFixed(1)} ms`
const mean = (values: ReadonlyArray<number>) => values.reduce((sum, value) => sum + value, 0) / values.length

const rows: Array<[string, string, string, string, string, string, string]> = []
/** A mix whose responses were not all 2xx measured refusals, not the service: it says so. */
const row = (mix: string, result: LoadResult, rss: number, ceiling?: number) =>
  rows.push([
    mix,
    result.requestsPerSecond.toFixed(0),
    ms(result.p50),
    ms(result.p99),
    `${rss.toFixed(0)} MB`,
    ceiling === undefined ? "" : `${((result.requestsPerSecond / ceiling) * 100).toFixed(1)}%`,
    String(result.non2xx + result.errors)
  ])

/** The combination workload's answers, its pages timed alone, and the ten combinations whose slowest page took longest. */
const printCombos = (result: LoadResult, timed: ReadonlyArray<TimedCombination>) => {
  const statuses = Object.entries(result.statuses).map(([status, count]) => `${count} × ${status}`).join(", ")
  console.log(`combos (seed ${COMBO_SEED}): ${result.total} responses (${statuses}), ${result.errors} errors (a request unanswered in 10 s is one); ${result.walksCutShort} later pages asked for after a last page, warm-up included`)
  const { pages, reads } = result.kinds!
  console.log(`combos: pages p50 ${ms(pages.p50)}, p99 ${ms(pages.p99)} (${pages.count}); single reads p50 ${ms(reads.p50)}, p99 ${ms(reads.p99)} (${reads.count})`)
  for (const failure of result.failures) console.log(`  not 200: ${failure}`)
  const pageTimes = timed.flatMap((combination) => combination.pageMs).sort((a, b) => a - b)
  const worst = timed.flatMap((combination) => combination.worstMs).sort((a, b) => a - b)
  const over = pageTimes.filter((time) => time > PAGE_TARGET_MS).length
  console.log(
    `combos one request at a time, warm, a page's median of ${COMBO_PASSES} passes: ${pageTimes.length} pages, p50 ${ms(percentileOf(pageTimes, 0.5))}, p99 ${
      ms(percentileOf(pageTimes, 0.99))
    }, slowest ${ms(pageTimes.at(-1) ?? 0)}; ${over} over ${PAGE_TARGET_MS} ms; slowest of any pass ${ms(worst.at(-1) ?? 0)} (${
      worst.filter((time) => time > PAGE_TARGET_MS).length
    } pages over in some pass)`
  )
  const slowest = [...timed].sort((a, b) => Math.max(...b.pageMs) - Math.max(...a.pageMs)).slice(0, 10)
  console.log("ten slowest combinations (slowest page, its median as a single request; rows a page):")
  for (const { pageMs, pageRows, query } of slowest) {
    const page = pageMs.indexOf(Math.max(...pageMs))
    console.log(`  ${ms(pageMs[page]!)} page ${page + 1} of ${pageMs.length} (${pageRows.join("/")} rows): ${query === "" ? "(no filter)" : decodeURIComponent(query.replaceAll("+", "%20"))}`)
  }
}

const main = async () => {
  console.log(`bench: ${LARGE} and ${SMALL} listings on ${new URL(serverUrl).host}; ${CONNECTIONS} connections, ${DURATION}s per mix`)
  console.log("bench: the rate limiter counts every request but refuses none (DROPSHELF_RATE_LIMIT=count-only)")
  if (ONLY !== undefined) console.log(`bench: only ${ONLY.join(", ")} (BENCH_ONLY), and the ceiling`)
  const large = ensureDirectory(LARGE, process.env.BENCH_DATABASE)
  // Three reads a combination: each comes once a cycle, so the 50 connections start at 50 different ones.
  const comboWalks = () => mixedWalks(idsAcross(large.name, 3 * COMBOS), combinations(COMBOS, COMBO_SEED))
  const small = runs("scale") ? ensureDirectory(SMALL) : undefined
  const importRate = runs("import") ? await measureImport() : undefined

  const port = 18_080
  const key = keyFor(large.name)
  const server = await startServer(large.name, port)
  await new Promise((resolve) => setTimeout(resolve, 2000))
  const idleRss = rssMb(server.pid!)
  let idleRssFromSources: number | undefined
  if (runs("idle")) {
    const fromSources = await startServer(large.name, port + 2, { from: "sources" })
    await new Promise((resolve) => setTimeout(resolve, 2000))
    idleRssFromSources = rssMb(fromSources.pid!)
    await stop(fromSources)
  }

  // A server's first filtered page starts loading the filter columns, a search term's first page
  // reading its rows (decision 0516): done before the mixes, measured as on a server up a while.
  for (const filter of MIXED_FILTERS) await getJson(port, key, `/api/v1/domains?${filter}`)
  await untilQuiet(server.pid!)

  const first = await getJson(port, key, "/api/v1/domains")
  const bodyFile = join(work, "page.json")
  writeFileSync(bodyFile, first.body)
  const { port: ceilingPort, child: ceilingProcess } = await startCeiling(bodyFile)
  const ceiling = load(ceilingPort, key, [{ path: "/api/v1/domains" }])
  ceilingProcess.kill("SIGTERM")
  rows.push(["ceiling: bare node:http, same bytes", ceiling.requestsPerSecond.toFixed(0), ms(ceiling.p50), ms(ceiling.p99), "", "100%", String(ceiling.non2xx + ceiling.errors)])

  const page = JSON.parse(first.body) as { data: Array<{ id: string }> }
  const ids = page.data.map((listing) => listing.id)

  if (runs("pages")) {
    const defaultPage = load(port, key, [{ path: "/api/v1/domains" }])
    row("default page (50)", defaultPage, rssMb(server.pid!), ceiling.requestsPerSecond)
    row("filtered pages", load(port, key, [
      { path: "/api/v1/domains?tld=com" },
      { path: "/api/v1/domains?priceRange=250-999" },
      { path: "/api/v1/domains?spam=low" },
      { path: "/api/v1/domains?rsMin=60" },
      { path: "/api/v1/domains?category=tech" },
      { path: "/api/v1/domains?q=coffee" }
    ]), rssMb(server.pid!), ceiling.requestsPerSecond)
    row("sort=latest", load(port, key, [{ path: "/api/v1/domains?sort=latest" }]), rssMb(server.pid!), ceiling.requestsPerSecond)
    row("single reads", load(port, key, ids.map((id) => ({ path: `/api/v1/domains/${id}` }))), rssMb(server.pid!), ceiling.requestsPerSecond)
  }
  if (runs("otlp")) {
    // The cost of tracing: the same mixes on a server exporting every span and its metrics over
    // OTLP/HTTP (to a receiver that only reads them), measured in turn with the one that exports nothing.
    const sink = await startOtlpSink()
    const traced = await startServer(large.name, port + 3, { from: "bundle", env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } })
    // The sampler an operator would set for a busy instance: one trace in ten, metrics all the same.
    const sampled = await startServer(large.name, port + 4, {
      from: "bundle",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.1" }
    })
    for (const [mix, requests] of [
      ["default page (50)", [{ path: "/api/v1/domains" }]],
      ["single reads", ids.map((id) => ({ path: `/api/v1/domains/${id}` }))]
    ] as const) {
      // In turn, twice each, so that none gets the machine of a different moment.
      for (const round of [1, 2]) {
        row(`${mix}, OTLP off (${round})`, load(port, key, requests), rssMb(server.pid!), ceiling.requestsPerSecond)
        row(`${mix}, OTLP on, every trace (${round})`, load(port + 3, key, requests), rssMb(traced.pid!), ceiling.requestsPerSecond)
        row(`${mix}, OTLP on, 1 trace in 10 (${round})`, load(port + 4, key, requests), rssMb(sampled.pid!), ceiling.requestsPerSecond)
      }
    }
    await stop(traced)
    await stop(sampled)
    const received = sink.received()
    console.log(`OTLP: ${received.exports} exports, ${(received.bytes / 1e6).toFixed(1)} MB received`)
    await sink.close()
  }
  // The mixed and combination workloads' rows go beside the single-page ones, though measured last.
  let listRowsAt = rows.length

  // The full since pull walks every row by id; its cursor near the end (four pages of 250
  // before the last) serves the deep-page mix.
  const pull = runs("since") || runs("deep") ? await pullSince(port, key, server.pid!) : undefined

  // Page 1 and the deep page are compared under the same conditions: measured in turn, twice
  // each, so neither gets the heap or the machine of a different moment.
  let deepRatio: { readonly deepP50: number; readonly pageOneP50: number } | undefined
  if (runs("deep")) {
    const deepPath = `/api/v1/domains?cursor=${encodeURIComponent(pull!.cursorNearTheEnd)}`
    const pageOneRuns: Array<LoadResult> = []
    const deepRuns: Array<LoadResult> = []
    for (let round = 0; round < 2; round++) {
      pageOneRuns.push(load(port, key, [{ path: "/api/v1/domains" }]))
      deepRuns.push(load(port, key, [{ path: deepPath }]))
    }
    deepRatio = { pageOneP50: mean(pageOneRuns.map((run) => run.p50)), deepP50: mean(deepRuns.map((run) => run.p50)) }
    row("deep page (cursor near the end)", deepRuns[1]!, rssMb(server.pid!), ceiling.requestsPerSecond)
  }
  if (runs("writes")) {
    row("reveal writes", load(port, key, ids.map((id) => ({ method: "POST", path: `/api/v1/domains/${id}/reveal` }))), rssMb(server.pid!), ceiling.requestsPerSecond)
  }

  let mixed: LoadResult | undefined
  if (runs("mixed")) {
    const walks = mixedWalks(idsAcross(large.name, MIXED_IDS))
    mixed = loadWalks(port, key, walks, { connections: CONNECTIONS, durationSeconds: DURATION, warmupSeconds: WARMUP })
    row(`mixed: ${MIXED_FILTERS.length} filter sets × 3 pages, single reads`, mixed, rssMb(server.pid!), ceiling.requestsPerSecond)
    rows.splice(listRowsAt++, 0, rows.pop()!)
    // The same mix asked by ten pro accounts, of listings pro can read: readers told which rows
    // they revealed, whose reads share statements with other accounts' as a population's do.
    const proKeys = Array.from({ length: 10 }, () => keyFor(large.name, "pro"))
    const proWalks = mixedWalks(idsAcross(large.name, MIXED_IDS, Plan.Plans.pro.accessDelayMs))
    const proMixed = loadWalks(port, proKeys, proWalks, { connections: CONNECTIONS, durationSeconds: DURATION, warmupSeconds: WARMUP })
    row("mixed, as ten pro accounts", proMixed, rssMb(server.pid!), ceiling.requestsPerSecond)
    rows.splice(listRowsAt++, 0, rows.pop()!)
  }

  let combos: { readonly load: LoadResult; readonly timed: ReadonlyArray<TimedCombination> } | undefined
  if (runs("combos")) {
    const comboLoad = loadWalks(port, key, comboWalks(), { connections: CONNECTIONS, durationSeconds: DURATION, warmupSeconds: COMBO_WARMUP })
    row(`combos: ${COMBOS} random combinations × 3 pages, single reads`, comboLoad, rssMb(server.pid!), ceiling.requestsPerSecond)
    rows.splice(listRowsAt++, 0, rows.pop()!)
    combos = { load: comboLoad, timed: await timeCombinations(port, key, combinations(COMBOS, COMBO_SEED), 3, COMBO_PASSES) }
  }
  await stop(server)

  // The same pull from a server that has served nothing else: what a feed consumer costs alone,
  // without the heap the list mixes grew.
  let freshPull: Awaited<ReturnType<typeof pullSince>> | undefined
  if (runs("since")) {
    const fresh = await startServer(large.name, port)
    freshPull = await pullSince(port, key, fresh.pid!)
    await stop(fresh)
  }

  // The bulk snapshot from a fresh server: plain, gzip-compressed, then a client that stalls.
  let snapshots: { readonly plain: SnapshotPull; readonly gzip: SnapshotPull; readonly stalled: Awaited<ReturnType<typeof stalledSnapshot>> } | undefined
  if (runs("snapshot")) {
    const fresh = await startServer(large.name, port)
    const plain = await pullSnapshot(port, key, fresh.pid!, large.name)
    const gzip = await pullSnapshot(port, key, fresh.pid!, large.name, { "accept-encoding": "gzip" })
    const stalled = await stalledSnapshot(port, key, fresh.pid!)
    snapshots = { plain, gzip, stalled }
    await stop(fresh)
  }

  // What each cache buys: servers with one switched off against servers with all on (bench/caches.ts).
  const cacheLines = runs("caches")
    ? await measureCaches(large.name, port, key, {
      connections: CONNECTIONS,
      warmupSeconds: WARMUP,
      durationSeconds: DURATION,
      combos: { walks: comboWalks(), warmupSeconds: COMBO_WARMUP }
    })
    : undefined

  // 1 M against 10 k listings: two fresh servers that serve page 1 only, so neither carries the
  // other's history, measured in turn, twice each, so neither gets the machine of a different
  // moment (this machine's speed moved by a third between runs, and within one).
  let scale: { readonly largeP50: number; readonly smallP50: number } | undefined
  if (small !== undefined) {
    const scaleLarge = await startServer(large.name, port)
    const smallKey = keyFor(small.name)
    const scaleSmall = await startServer(small.name, port + 1)
    const largeRuns: Array<LoadResult> = []
    const smallRuns: Array<LoadResult> = []
    for (let round = 0; round < 2; round++) {
      largeRuns.push(load(port, key, [{ path: "/api/v1/domains" }]))
      smallRuns.push(load(port + 1, smallKey, [{ path: "/api/v1/domains" }]))
    }
    await stop(scaleLarge)
    await stop(scaleSmall)
    scale = { largeP50: mean(largeRuns.map((run) => run.p50)), smallP50: mean(smallRuns.map((run) => run.p50)) }
  }

  console.log("")
  console.log("| mix | req/s | p50 | p99 | server RSS | of ceiling | not 2xx |")
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
  for (const cells of rows) console.log(`| ${cells.join(" | ")} |`)
  console.log("")
  if (mixed !== undefined) {
    const statuses = Object.entries(mixed.statuses).map(([status, count]) => `${count} × ${status}`).join(", ")
    console.log(`mixed workload: ${mixed.total} responses (${statuses}); ${mixed.walksCutShort} later pages asked for after a last page, warm-up included`)
    const { pages, reads } = mixed.kinds!
    console.log(`mixed workload: pages p50 ${ms(pages.p50)}, p99 ${ms(pages.p99)} (${pages.count}); single reads p50 ${ms(reads.p50)}, p99 ${ms(reads.p99)} (${reads.count})`)
    for (const failure of mixed.failures) console.log(`  not 200: ${failure}`)
  }
  if (combos !== undefined) printCombos(combos.load, combos.timed)
  console.log(`idle server RSS: ${idleRss.toFixed(0)} MB (${process.env.BENCH_BUNDLE ?? "the bundle of npm run build"})${idleRssFromSources === undefined ? "" : `; ${idleRssFromSources.toFixed(0)} MB from the sources`}`)
  if (pull !== undefined && runs("since")) console.log(`since pull after the mixes: ${pull.pulled} rows at ${pull.rate.toFixed(0)} rows/s, peak server RSS ${pull.peakRss.toFixed(0)} MB`)
  if (freshPull !== undefined) console.log(`since pull, fresh server: ${freshPull.pulled} rows at ${freshPull.rate.toFixed(0)} rows/s, peak server RSS ${freshPull.peakRss.toFixed(0)} MB`)
  if (snapshots !== undefined) {
    const { gzip, plain, stalled } = snapshots
    console.log(`snapshot, fresh server: ${plain.listings} listings in ${plain.seconds.toFixed(1)} s, ${plain.rate.toFixed(0)} rows/s (every line parsed), ${(plain.bytes / 1e6).toFixed(0)} MB, peak server RSS ${plain.peakRss.toFixed(0)} MB; CPU a listing: server ${plain.serverMicros.toFixed(1)} µs, Postgres ${plain.postgresMicros.toFixed(1)} µs`)
    console.log(`snapshot, gzip: ${gzip.rate.toFixed(0)} rows/s, ${(gzip.wireBytes / 1e6).toFixed(0)} MB on the wire, peak server RSS ${gzip.peakRss.toFixed(0)} MB; CPU a listing: server ${gzip.serverMicros.toFixed(1)} µs, Postgres ${gzip.postgresMicros.toFixed(1)} µs`)
    console.log(`snapshot to a client that stops reading for ${stalled.stallSeconds} s after 1 MB: server RSS ${stalled.atStall.toFixed(0)} MB when it stopped, at most ${stalled.peakDuringStall.toFixed(0)} MB meanwhile`)
  }
  if (deepRatio !== undefined) {
    const { deepP50, pageOneP50 } = deepRatio
    console.log(`deep page p50 / page 1 p50: ${(deepP50 / Math.max(pageOneP50, 0.001)).toFixed(2)} (${ms(deepP50)} vs ${ms(pageOneP50)}, each the mean of two runs in turn)`)
  }
  if (scale !== undefined) {
    const { largeP50, smallP50 } = scale
    console.log(`${LARGE} vs ${SMALL} listings, page 1 p50: ${(largeP50 / Math.max(smallP50, 0.001)).toFixed(2)} (${ms(largeP50)} vs ${ms(smallP50)}, each the mean of two runs in turn on a fresh server of its own)`)
  }
  if (cacheLines !== undefined) {
    console.log("")
    for (const line of cacheLines) console.log(line)
  }
  if (importRate !== undefined) console.log(`import: ${importRate.toFixed(0)} rows/s (${IMPORT_ROWS} rows, dropshelf import)`)
  if (large.seedRate !== undefined) console.log(`seed: ${large.seedRate.toFixed(0)} rows/s`)
  const failed = rows.filter((cells) => cells[6] !== "0")
  if (failed.length > 0) console.log(`NOT MEASURED: ${failed.map((cells) => cells[0]).join("; ")} had answers that were not 2xx (column "not 2xx")`)
}

await main()
