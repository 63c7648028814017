import type { ListingStore } from "@dropshelf/core"
import { Context, Effect, Layer } from "effect"
import pg from "pg"
import { from as copyFrom } from "pg-copy-streams"
import { UPSERT_COLUMNS, UPSERT_NAMES, UPSERT_SET } from "./ListingWrites.ts"

/*
 * The import's batch upsert on server PostgreSQL, through COPY: @effect/sql-pg speaks no COPY,
 * so a small `pg` pool of its own (node-postgres, with pg-copy-streams) opens on the same URL.
 * Each batch: COPY into a temporary staging table (no WAL, no index), then one statement that
 * moves it into listings (INSERT … SELECT … ON CONFLICT), so a batch lands whole or not at all, its
 * rows get their row versions from the listings trigger, and readers are never blocked.
 */

/** Connections of the import pool: the CLI writes two batches at once (apps/cli/src/Import.ts). */
const IMPORT_CONNECTIONS = 2

const STAGING = "dropshelf_import_staging"

/** The staging table, typed as the columns are, so that COPY parses each value once. */
const CREATE_STAGING = `CREATE TEMPORARY TABLE IF NOT EXISTS ${STAGING} (${
  UPSERT_COLUMNS.map(([name, type]) => `${name} ${name === "id" ? "text COLLATE \"C\"" : type}`).join(", ")
})`

const COPY = `COPY ${STAGING} (${UPSERT_NAMES}) FROM STDIN`

/*
 * One statement, so one transaction of its own: the batch leaves staging and enters listings
 * together, or neither happens. `xmax = 0` tells an insert from an update, as the statement
 * upsert does (ListingWrites.ts).
 */
const MERGE = `WITH batch AS (DELETE FROM ${STAGING} RETURNING *),
  merged AS (
    INSERT INTO listings (${UPSERT_NAMES}) SELECT ${UPSERT_NAMES} FROM batch
    ON CONFLICT (id) DO UPDATE SET ${UPSERT_SET}
    RETURNING (xmax = 0) AS inserted
  )
  SELECT count(*) FILTER (WHERE inserted)::int AS inserted, count(*)::int AS merged FROM merged`

/** A value in COPY's text format: `\N` for null; backslash, tab, newline and carriage return escaped. */
export const copyField = (value: string | null): string => {
  if (value === null) return "\\N"
  return /[\\\t\n\r]/.test(value)
    ? value.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r"))
    : value
}

/** The batch in COPY's text format, one line per input, columns in `UPSERT_COLUMNS` order. */
export const copyText = (batch: ReadonlyArray<ListingStore.ListingInput>): string => {
  const lines = new Array<string>(batch.length)
  for (let index = 0; index < batch.length; index++) {
    const input = batch[index]!
    let line = ""
    for (let column = 0; column < UPSERT_COLUMNS.length; column++) {
      if (column > 0) line += "\t"
      line += copyField(UPSERT_COLUMNS[column]![2](input))
    }
    lines[index] = line
  }
  return `${lines.join("\n")}\n`
}

const prepared = new WeakSet<pg.PoolClient>()

/**
 * One batch, deduplicated by the caller: COPY into staging (the session's own temporary table:
 * no WAL, nothing another session sees), then the merge. Two round trips, no BEGIN or COMMIT:
 * on a busy machine each round trip waits for the scheduler. A connection on which anything
 * failed is closed, not reused, so its staging table (and any rows left in it) goes with it.
 */
const loadBatch = async (pool: pg.Pool, batch: ReadonlyArray<ListingStore.ListingInput>) => {
  const client = await pool.connect()
  let failed: unknown = undefined
  try {
    if (!prepared.has(client)) {
      await client.query(CREATE_STAGING)
      prepared.add(client)
    }
    await new Promise<void>((resolve, reject) => {
      const copy = client.query(copyFrom(COPY))
      copy.on("error", reject)
      copy.on("finish", resolve)
      copy.end(copyText(batch))
    })
    const { rows } = await client.query<{ inserted: number; merged: number }>(MERGE)
    return rows[0]!
  } catch (error) {
    failed = error
    throw error
  } finally {
    client.release(failed === undefined ? undefined : true)
  }
}

export class CopyLoader extends Context.Service<CopyLoader, {
  /** Upserts a batch whose ids are distinct; `merged` rows were written, `inserted` of them new. */
  readonly load: (batch: ReadonlyArray<ListingStore.ListingInput>) => Effect.Effect<{ readonly inserted: number; readonly merged: number }>
}>()("@dropshelf/store-sql/CopyLoader") {}

/**
 * The loader on the PostgreSQL at `url`; its pool connects on the first batch and closes with
 * the layer. `searchPath` is for a client whose tables live in another schema (the tests).
 */
export const layer = (url: string, settings: { readonly searchPath?: string } = {}): Layer.Layer<CopyLoader> =>
  Layer.effect(
    CopyLoader,
    Effect.gen(function*() {
      const pool = yield* Effect.acquireRelease(
        Effect.sync(() =>
          new pg.Pool({
            connectionString: url,
            max: IMPORT_CONNECTIONS,
            application_name: "dropshelf import",
            // As the main pool (StoreSql.ts): no JIT for statements this short.
            options: settings.searchPath === undefined ? "-c jit=off" : `-c jit=off -c search_path=${settings.searchPath.replace(/[\s,]+/g, ",")}`
          })
        ),
        (pool) => Effect.promise(() => pool.end())
      )
      // An idle connection that fails (a server restart) is dropped by the pool; it must not crash the process.
      pool.on("error", () => {})
      return CopyLoader.of({
        load: (batch) => Effect.promise(() => loadBatch(pool, batch)).pipe(Effect.withSpan("CopyLoader.load", undefined, { captureStackTrace: false }))
      })
    })
  )
