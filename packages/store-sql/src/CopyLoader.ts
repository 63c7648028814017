import type { ListingStore } from "@dropshelf/core"
import { Context, Effect, Layer, Option, type Scope } from "effect"
import pg from "pg"
import { from as copyFrom } from "pg-copy-streams"
import * as FirstLoad from "./FirstLoad.ts"
import * as FirstLoadTable from "./FirstLoadTable.ts"
import { UPSERT_COLUMNS, UPSERT_NAMES, UPSERT_SET, upsertWith } from "./ListingWrites.ts"

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
 * A batch's merge: staging's rows upserted into `table` (`xmax = 0` tells an insert from an
 * update, as the statement upsert does, ListingWrites.ts), then staging emptied, in one round
 * trip whose statements run as one transaction: the batch leaves staging and enters the table
 * together, or neither happens. TRUNCATE, not a DELETE: in a first load's one transaction
 * deleted rows stay on their pages until the commit, and every later merge read them all again.
 */
const mergeInto = (table: string) => `WITH merged AS (
    INSERT INTO ${table} (${UPSERT_NAMES}) SELECT ${UPSERT_NAMES} FROM ${STAGING}
    ON CONFLICT (id) DO UPDATE SET ${UPSERT_SET}
    RETURNING (xmax = 0) AS inserted
  )
  SELECT count(*) FILTER (WHERE inserted)::int AS inserted, count(*)::int AS merged FROM merged;
  TRUNCATE ${STAGING}`

const MERGE = mergeInto("listings")

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

/** COPY into staging (created on the connection's first batch), then the merge into `merge`'s table. */
const copyAndMerge = async (client: pg.PoolClient, merge: string, batch: ReadonlyArray<ListingStore.ListingInput>) => {
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
  // Several statements in one text answer with one result each (node-postgres), the merge's first.
  const results: pg.QueryResult<{ inserted: number; merged: number }> | Array<pg.QueryResult<{ inserted: number; merged: number }>> =
    await client.query(merge)
  return (Array.isArray(results) ? results[0]! : results).rows[0]!
}

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
    return await copyAndMerge(client, MERGE, batch)
  } catch (error) {
    failed = error
    throw error
  } finally {
    client.release(failed === undefined ? undefined : true)
  }
}

/**
 * A first load on one connection of the pool, in one transaction (FirstLoadTable.ts). The
 * connection goes back to the pool only after a commit or a clean rollback; closing the scope
 * before `finish` succeeded rolls back by closing the connection.
 */
const firstLoad = (pool: pg.Pool): Effect.Effect<FirstLoad.Session | undefined, never, Scope.Scope> =>
  Effect.gen(function*() {
    const held = yield* Effect.acquireRelease(
      Effect.promise(async () => ({ client: await pool.connect(), done: false })),
      (held) => Effect.sync(() => held.client.release(held.done ? undefined : true))
    )
    const table = yield* Effect.promise(() => FirstLoadTable.open(held.client))
    if (table === undefined) {
      held.done = true
      return undefined
    }
    const merge = mergeInto(table.name)
    // One connection runs one statement at a time: each batch's COPY and merge run together.
    let previous: Promise<unknown> = Promise.resolve()
    const inTurn = <A>(work: () => Promise<A>): Promise<A> => {
      const next = previous.then(work, work)
      previous = next.catch(() => {})
      return next
    }
    return {
      upsert: upsertWith((batch) => Effect.promise(() => inTurn(() => copyAndMerge(held.client, merge, batch)))),
      finish: (onIndex) =>
        Effect.promise(() => inTurn(() => FirstLoadTable.swap(held.client, table, onIndex))).pipe(
          Effect.andThen(Effect.sync(() => {
            held.done = true
          })),
          Effect.withSpan("CopyLoader.firstLoad", undefined, { captureStackTrace: false })
        )
    } satisfies FirstLoad.Session
  })

export class CopyLoader extends Context.Service<CopyLoader, {
  /** Upserts a batch whose ids are distinct; `merged` rows were written, `inserted` of them new. */
  readonly load: (batch: ReadonlyArray<ListingStore.ListingInput>) => Effect.Effect<{ readonly inserted: number; readonly merged: number }>
  /** An import into the empty directory at bulk speed (FirstLoad.ts); `undefined` when it has listings. */
  readonly firstLoad: Effect.Effect<FirstLoad.Session | undefined, never, Scope.Scope>
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
        load: (batch) => Effect.promise(() => loadBatch(pool, batch)).pipe(Effect.withSpan("CopyLoader.load", undefined, { captureStackTrace: false })),
        firstLoad: firstLoad(pool)
      })
    })
  )

/**
 * The first load where the context holds a COPY loader (server PostgreSQL); elsewhere (PGlite,
 * a served data directory) every import upserts batch by batch.
 */
export const layerFirstLoad: Layer.Layer<FirstLoad.FirstLoad> = Layer.effect(
  FirstLoad.FirstLoad,
  Effect.map(Effect.serviceOption(CopyLoader), (loader) =>
    FirstLoad.FirstLoad.of({ begin: Option.isSome(loader) ? loader.value.firstLoad : Effect.succeed(undefined) }))
)
