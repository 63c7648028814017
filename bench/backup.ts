/**
 * How long an embedded backup holds the database: `EmbeddedDump.dump` (a CHECKPOINT, then
 * PGlite's `dumpDataDir("gzip")`, under the permit every statement takes, so the API waits this
 * long), and how long a restore of that dump takes, for a directory of `BENCH_LISTINGS` (20 000)
 * seeded listings. Median of `BENCH_RUNS` (3) after one unmeasured run. Not part of `npm test`.
 *
 * Usage: node bench/backup.ts
 */
import { StoreSql } from "@dropshelf/store-sql"
import { Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")
const LISTINGS = Number(process.env.BENCH_LISTINGS ?? 20_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const work = mkdtempSync(join(tmpdir(), "dropshelf-bench-backup-"))
const dataDir = join(work, "data")

const seeded = spawnSync(join(root, "node_modules", ".bin", "dropshelf"), ["seed", "--listings", String(LISTINGS), "--json"], {
  env: { ...process.env, DATABASE_URL: "", DROPSHELF_DATA_DIR: dataDir },
  encoding: "utf8"
})
if (seeded.status !== 0) throw new Error(`seed failed: ${seeded.stderr}`)

const median = (values: Array<number>) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** The dump, and the longest a statement issued meanwhile (one every 5 ms) waited: what the API feels. */
const program = Effect.gen(function*() {
  const { dump } = yield* StoreSql.EmbeddedDump
  const sql = yield* SqlClient.SqlClient
  yield* dump
  const times: Array<number> = []
  const stalls: Array<number> = []
  let bytes: Uint8Array = new Uint8Array()
  for (let run = 0; run < RUNS; run++) {
    let longest = 0
    const probe = yield* Effect.gen(function*() {
      // The gap between two answers, less the pause between asks: waits for the permit and
      // for an event loop busy with the dump's synchronous parts alike.
      let last = performance.now()
      while (true) {
        yield* sql`SELECT 1`
        const now = performance.now()
        longest = Math.max(longest, now - last - 5)
        last = now
        yield* Effect.sleep("5 millis")
      }
    }).pipe(Effect.orDie, Effect.forkChild)
    yield* Effect.sleep("50 millis")
    const started = performance.now()
    bytes = yield* dump
    times.push(performance.now() - started)
    yield* Fiber.interrupt(probe)
    stalls.push(longest)
  }
  return { bytes, dumpMs: median(times), stallMs: median(stalls) }
})

const { bytes, dumpMs, stallMs } = await Effect.runPromise(Effect.scoped(Layer.build(StoreSql.layerPglite({ dataDir })).pipe(
  Effect.flatMap((context) => Effect.provide(program, context))
)))

const restores: Array<number> = []
for (let run = 0; run <= RUNS; run++) {
  const target = join(work, `restored-${run}`)
  const started = performance.now()
  await Effect.runPromise(StoreSql.restorePglite(target, bytes))
  if (run > 0) restores.push(performance.now() - started)
  rmSync(target, { recursive: true, force: true })
}

console.log(`embedded backup, ${LISTINGS} listings: dump ${(bytes.byteLength / 1e6).toFixed(1)} MB (gzip) in ${dumpMs.toFixed(0)} ms, a statement meanwhile waited at most ${stallMs.toFixed(0)} ms (medians of ${RUNS}); restore ${median(restores).toFixed(0)} ms`)
rmSync(work, { recursive: true, force: true })
