/**
 * Pruning tombstones on SQL past one statement's worth: the store deletes them PRUNE_CHUNK at a
 * time (so no statement holds the embedded database's one connection for long) and still
 * deletes every one before the time, and nothing else.
 */
import { type Ids, ListingStore } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { PRUNE_CHUNK } from "../src/ListingWrites.ts"
import type { StoreSql } from "../src/index.ts"
import { closePglite, describeOnServer, pgliteStores, serverStores } from "./support.ts"

const suite = (name: string, layer: () => Layer.Layer<StoreSql.Services>) =>
  describe(`${name}: pruning in chunks`, () => {
    it.live("deletes every tombstone before the time over several statements, and only those", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore.ListingStore
        const count = 2 * PRUNE_CHUNK + 7
        const ids = Array.from({ length: count }, (_, i) => `PC${String(i).padStart(6, "0")}` as Ids.ListingId)
        yield* store.upsert(ids.map((id) => Fixtures.listingInput(id)))
        yield* store.upsert([Fixtures.listingInput("KEEPACTV")])
        assert.strictEqual((yield* store.delist(ids, "delisted")).length, count)
        yield* Effect.sleep(5)
        yield* store.delist(["KEEPACTV" as Ids.ListingId], "sold")
        const cutoff = (yield* store.find("KEEPACTV" as Ids.ListingId))!.updatedAt
        assert.strictEqual(yield* store.pruneTombstones(cutoff), count)
        assert.strictEqual(yield* store.find(ids[PRUNE_CHUNK]!), undefined)
        assert.strictEqual((yield* store.find("KEEPACTV" as Ids.ListingId))?.status, "sold")
        assert.strictEqual(yield* store.pruneTombstones(cutoff), 0)
      }).pipe(Effect.provide(layer())), 60_000)
  })

suite("sql (pglite)", () => pgliteStores)
afterAll(closePglite)

describeOnServer("sql (server)", (databaseUrl) => {
  suite("sql (server)", () => serverStores(databaseUrl))
})
