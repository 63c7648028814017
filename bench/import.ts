/**
 * What an import costs, and where: `node bench/import.ts [rows]` runs `dropshelf import` (the
 * bundle) of `rows` (200 000) seeded lines into a fresh database three times, with every index,
 * without the trigram index for `q`, and with the primary key only, and prints for each the
 * rate, the CPU per row of all PostgreSQL processes and of the import process (from /proc,
 * sampled every 50 ms while it runs). Dropping indexes here only measures what they cost: the
 * service keeps them all (docs/performance.md, "The import").
 *
 * Then what Postgres alone spends a row with no statement to parse: the imported rows put back
 * into `listings` by `INSERT … SELECT` (every index kept up row by row, as any import does), and
 * against that a bulk load, much as a first load into an empty directory does it
 * (docs/decisions/0513-first-load.md): `COPY` into a table with no index nor trigger, then each
 * of the listings' indexes built on it (psql's own timings, one session). The imports above
 * go into an empty directory, so they are first loads too; the configurations drop indexes
 * from the migrated table, and a first load builds those it finds.
 *
 * "Postgres CPU" counts every PostgreSQL process; "backends" only those serving the import's
 * database, which other work on a shared server does not move (WAL writing, checkpoints and
 * other databases' backends are left out of it).
 *
 * Environment: DATABASE_URL (the server, as for `npm run bench`); BENCH_IMPORT_ONLY_EVERY=1 runs
 * only the every-index import, BENCH_IMPORT_FLOOR=0 skips the psql part, BENCH_IMPORT_REPEAT
 * (1) runs each configuration that many times.
 */
import { execFileSync, spawn } from "node:child_process"
import { createWriteStream, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { seedLines } from "../apps/cli/src/Seed.ts"
import { databaseUrl, psql } from "./postgres.ts"
import { backendPidsOf, postgresPids, ticksOf } from "./proc.ts"
import { cli } from "./server.ts"

const ROWS = Number(process.argv[2] ?? 200_000)
const DATABASE = "dropshelf_bench_import_cost"
const FILTER_INDEXES = [
  "listings_latest", "listings_tld_latest", "listings_since", "listings_tld", "listings_category", "listings_source",
  "listings_checked", "listings_active"
]
const configurations: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["every index", []],
  ["all but the trigram GIN", ["listings_search"]],
  ["the primary key only", ["listings_search", ...FILTER_INDEXES]]
]

const work = mkdtempSync(join(tmpdir(), "dropshelf-import-"))
const file = join(work, "import.ndjson")
const out = createWriteStream(file)
for (const line of seedLines(ROWS, 99, Date.now())) {
  if (!out.write(`${JSON.stringify(line)}\n`)) await new Promise<void>((resolve) => out.once("drain", () => resolve()))
}
await new Promise<void>((resolve) => out.end(() => resolve()))

/** A migrated, empty directory in a database of its own; the environment that points the CLI at it. */
const freshDirectory = () => {
  psql(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
  psql(`CREATE DATABASE ${DATABASE}`)
  const env = { ...process.env, DATABASE_URL: databaseUrl(DATABASE) }
  execFileSync(process.execPath, [cli, "migrate", "--json"], { env })
  return env
}

const measure = async (drop: ReadonlyArray<string>) => {
  const env = freshDirectory()
  for (const index of drop) psql(`DROP INDEX ${index}`, DATABASE)

  // The last reading of each process: backends come and go during the import.
  const postgres = new Map<string, { first: number; last: number }>()
  const backends = new Set<string>()
  let importTicks = 0
  const child = spawn(process.execPath, [cli, "import", file, "--json"], { env, stdio: ["ignore", "pipe", "inherit"] })
  const sample = () => {
    for (const pid of postgresPids()) {
      const ticks = ticksOf(pid)
      const seen = postgres.get(pid)
      if (seen === undefined) postgres.set(pid, { first: ticks, last: ticks })
      else if (ticks > 0) seen.last = ticks
    }
    for (const pid of backendPidsOf(DATABASE)) backends.add(pid)
    importTicks = Math.max(importTicks, ticksOf(String(child.pid)))
  }
  sample()
  const started = performance.now()
  const timer = setInterval(sample, 50)
  let report = ""
  child.stdout.on("data", (data) => (report += data))
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve))
  clearInterval(timer)
  sample()
  const seconds = (performance.now() - started) / 1000
  if (code !== 0) throw new Error(`dropshelf import exited ${code}`)
  const { inserted } = JSON.parse(report) as { inserted: number }
  let postgresTicks = 0
  let backendTicks = 0
  for (const [pid, { first, last }] of postgres) {
    postgresTicks += last - first
    if (backends.has(pid)) backendTicks += last - first
  }
  psql(`DROP DATABASE ${DATABASE} WITH (FORCE)`)
  return {
    rate: inserted / seconds,
    postgresMicros: (postgresTicks * 10_000) / inserted,
    backendMicros: (backendTicks * 10_000) / inserted,
    importMicros: (importTicks * 10_000) / inserted
  }
}

console.log(`import of ${ROWS} seeded lines into an empty directory (dropshelf import, the bundle)`)
console.log("| Postgres indexes kept | rows/s | Postgres CPU µs/row | of it, the import's backends | import CPU µs/row |")
console.log("| --- | ---: | ---: | ---: | ---: |")
const REPEAT = Number(process.env.BENCH_IMPORT_REPEAT ?? 1)
for (const [name, drop] of process.env.BENCH_IMPORT_ONLY_EVERY === "1" ? configurations.slice(0, 1) : configurations) {
  for (let round = 0; round < REPEAT; round++) {
    const { backendMicros, importMicros, postgresMicros, rate } = await measure(drop)
    console.log(`| ${name} | ${rate.toFixed(0)} | ${postgresMicros.toFixed(0)} | ${backendMicros.toFixed(0)} | ${importMicros.toFixed(0)} |`)
  }
}

/** Each step's time in ms, from one psql session with `\timing`, in the order they ran. */
const timed = (statements: ReadonlyArray<string>, database: string): Array<number> => {
  const output = execFileSync("psql", [databaseUrl(database), "-qX", "-v", "ON_ERROR_STOP=1"], {
    input: ["\\timing on", ...statements].join("\n"),
    encoding: "utf8"
  })
  return [...output.matchAll(/^Time: ([\d.]+) ms/gm)].map((match) => Number(match[1]))
}

const floor = () => {
  const env = freshDirectory()
  execFileSync(process.execPath, [cli, "import", file, "--json"], { env })
  const rows = Number(psql("SELECT count(*) FROM listings", DATABASE))
  const copied = join(work, "listings.copy")
  psql("CREATE TABLE staged AS SELECT * FROM listings; TRUNCATE listings", DATABASE)
  psql(`\\copy staged TO '${copied}'`, DATABASE)
  const indexes = psql("SELECT indexname || '|' || indexdef FROM pg_indexes WHERE tablename = 'listings' ORDER BY indexname", DATABASE)
    .split("\n")
    .map((line) => {
      const [name, definition] = line.split("|") as [string, string]
      return { name, build: definition.replace(`INDEX ${name} ON public.listings`, `INDEX bulk_${name} ON public.bulk`) }
    })
  const [incremental] = timed(["INSERT INTO listings SELECT * FROM staged;"], DATABASE)
  psql("CREATE TABLE bulk (LIKE listings INCLUDING DEFAULTS)", DATABASE)
  const [copy, ...builds] = timed([`\\copy bulk FROM '${copied}'`, ...indexes.map((index) => `${index.build};`)], DATABASE)
  psql(`DROP DATABASE ${DATABASE} WITH (FORCE)`)
  const perRow = (ms: number) => ((ms * 1000) / rows).toFixed(1)
  const total = copy! + builds.reduce((sum, ms) => sum + ms, 0)
  console.log(`\nPostgres alone, the same ${rows} rows with no statement to parse (µs a row, psql's timings):`)
  console.log("| step | µs/row |")
  console.log("| --- | ---: |")
  console.log(`| INSERT … SELECT into listings, every index and the trigger kept up row by row | ${perRow(incremental!)} |`)
  console.log(`| COPY into a table with no index nor trigger | ${perRow(copy!)} |`)
  indexes.forEach((index, i) => console.log(`| then build ${index.name} | ${perRow(builds[i]!)} |`))
  console.log(`| bulk load in all (COPY, then every index built) | ${perRow(total)} |`)
}

if (process.env.BENCH_IMPORT_FLOOR !== "0") floor()
rmSync(work, { recursive: true, force: true })
