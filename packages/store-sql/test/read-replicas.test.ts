import { ListingStore, Time } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import * as ReadReplicas from "../src/ReadReplicas.ts"
import * as SqlListingStore from "../src/SqlListingStore.ts"
import { StoreSql } from "../src/index.ts"
import { holdReplica } from "../../../scripts/ReplicaLock.ts"
import { DATABASE_URL } from "./support.ts"

/*
 * The since watermark with a real streaming replica whose replay is paused: a row committed on
 * the primary and not yet replayed is either on the run's pages or at or after its synced_at,
 * never skipped. The store runs with no sync lag, so the test need not wait 120 s for a
 * watermark to pass a fresh write. And the tracker's rule on its own: caught up, lagging, down.
 */

const REPLICA_URL = process.env.DATABASE_REPLICA_URL?.trim() || undefined
const why = DATABASE_URL === undefined
  ? "DATABASE_URL not set"
  : REPLICA_URL === undefined
  ? "DATABASE_REPLICA_URL not set (scripts/replica.sh makes the replica)"
  : undefined

const name = `w_replica_store_${process.pid}_${Date.now().toString(36)}`
const inDatabase = (url: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}
const onServer = (url: string, statement: string) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const sql = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 1 })
    return yield* sql.unsafe<Record<string, unknown>>(statement)
  })).pipe(Effect.provide(Reactivity.layer), Effect.orDie))

describe("read replica tracker", () => {
  it("a replica takes a read once it has replayed what the primary had at the read's floor; past the bound it lags; failed, it is down", () => {
    let now = 0
    const tracker = ReadReplicas.makeTracker(1, 1_000, () => now)
    tracker.primarySampled(0, 100n)
    tracker.replicaSampled(0, 100n)
    now = 50
    assert.strictEqual(tracker.pick(-1), 0)
    // A write at 60: not before a sample taken after it has been replayed.
    tracker.wrote("writer")
    now = 60
    assert.isUndefined(tracker.pick(tracker.floorOf("writer")))
    assert.strictEqual(tracker.pick(tracker.floorOf("someone else")), 0)
    tracker.primarySampled(100, 200n)
    tracker.replicaSampled(0, 150n)
    assert.isUndefined(tracker.pick(tracker.floorOf("writer")))
    assert.isFalse(tracker.replayed(0, 60))
    tracker.replicaSampled(0, 200n)
    assert.strictEqual(tracker.pick(tracker.floorOf("writer")), 0)
    assert.isTrue(tracker.replayed(0, 60))
    // Replay stops while the primary goes on: lagging once the last position replayed is older than the bound.
    for (let at = 200; at <= 1_200; at += 100) tracker.primarySampled(at, BigInt(at * 2))
    now = 1_050
    assert.strictEqual(tracker.statuses()[0]!.state, "streaming")
    now = 1_150
    assert.strictEqual(tracker.statuses()[0]!.state, "lagging")
    assert.isUndefined(tracker.pick(-1))
    tracker.replicaSampled(0, 2_400n)
    assert.strictEqual(tracker.statuses()[0]!.state, "streaming")
    tracker.failed(0)
    assert.deepStrictEqual(tracker.statuses()[0], { state: "down", lagMs: undefined })
    assert.isUndefined(tracker.pick(-1))
  })
})

describe.skipIf(why !== undefined)(`read replica since watermark${why === undefined ? "" : ` (skipped: ${why})`}`, () => {
  // Held while the replica's replay is paused here: apps/cli's replica tests pause and stop it too.
  let release = () => {}
  beforeAll(async () => {
    release = await holdReplica()
    await onServer(DATABASE_URL!, `CREATE DATABASE ${name}`)
  }, 700_000)
  afterAll(async () => {
    try {
      await onServer(DATABASE_URL!, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    } finally {
      release()
    }
  })

  const stores = () =>
    SqlListingStore.layerWith({ syncLagSeconds: 0 }).pipe(
      Layer.provideMerge(ReadReplicas.layer({
        primaryUrl: inDatabase(DATABASE_URL!),
        urls: [inDatabase(REPLICA_URL!)],
        maxLagMs: 600_000,
        maxConnections: 4
      })),
      Layer.provideMerge(Layer.effectDiscard(StoreSql.migrate)),
      Layer.provideMerge(StoreSql.layerServerClient({ url: inDatabase(DATABASE_URL!), maxConnections: 4 }))
    )

  it.live("a row committed but not replayed is on the run's pages or at or after its synced_at", () =>
    Effect.gen(function*() {
      const listings = yield* ListingStore.ListingStore
      const replicas = yield* ReadReplicas.ReadReplicas
      const sql = yield* SqlClient.SqlClient
      const begin = Date.now() - Time.DAY
      yield* listings.upsert(["REPLICA1", "REPLICA2", "REPLICA3"].map((id) => Fixtures.listingInput(id)))
      const request = (since: number): ListingStore.PageRequest => ({
        order: "id",
        after: undefined,
        limit: 100,
        filters: {},
        visibleBefore: Date.now() + Time.DAY,
        since,
        now: Date.now(),
        reader: { at: Date.now(), revealsOf: undefined }
      })
      // A run, then the replica caught up with it: its watermark is one the replica can serve.
      yield* listings.syncedAt
      yield* listings.page(request(begin))
      const caughtUpBy = performance.now()
      while (replicas.pick(caughtUpBy) === undefined) yield* Effect.sleep("50 millis")

      yield* Effect.promise(() => onServer(REPLICA_URL!, "SELECT pg_wal_replay_pause()"))
      yield* Effect.gen(function*() {
        yield* sql`UPDATE listings SET blurb = 'not replayed' WHERE id = 'REPLICA2'`
        const written = (yield* sql<{ updated_at: Date }>`SELECT updated_at FROM listings WHERE id = 'REPLICA2'`)[0]!.updated_at.getTime()
        // Past the watermark's reuse, twice: the readings before this run's were both taken after
        // the write committed, so the replica has replayed neither.
        yield* Effect.sleep("1200 millis")
        yield* listings.syncedAt
        yield* Effect.sleep("1200 millis")
        const syncedAt = yield* listings.syncedAt
        const page = yield* listings.page(request(begin))
        const row = page.rows.find((candidate) => candidate.id === "REPLICA2")
        assert.isTrue(
          row?.blurb === "not replayed" || syncedAt <= written,
          `synced_at ${new Date(syncedAt).toISOString()} passed the unreplayed write at ${new Date(written).toISOString()} the page left out`
        )
      }).pipe(Effect.ensuring(Effect.promise(() => onServer(REPLICA_URL!, "SELECT pg_wal_replay_resume()"))))
    }).pipe(Effect.provide(stores())), 180_000)
})
