import { Cursor, Errors, type Ids, ListingJson, ListingStore, Watch, Watches } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { StoreMemory } from "@dropshelf/store-memory"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ListingRendering } from "../src/http/ListingRendering.ts"
import * as RememberedCursors from "../src/RememberedCursors.ts"
import * as RememberedWatchFilters from "../src/RememberedWatchFilters.ts"

/*
 * The server's own caches (apps/cli/src/Caches.ts lists every one): each answers exactly what it
 * stands in front of, and switched off it keeps nothing.
 */

/** A codec that counts its calls, signing a position as its text (the core's codec is tested in core). */
const countingCodec = (calls: { count: number }) =>
  Layer.succeed(Cursor.CursorCodec, Cursor.CursorCodec.of({
    issue: (position) => Effect.sync(() => (calls.count++, Cursor.serialize(position))),
    read: (cursor, order) =>
      Effect.suspend(() => {
        calls.count++
        const [tag, first, second] = cursor.split(":")
        const position: Cursor.CursorPosition = tag === "i"
          ? { order: "id", id: first as Ids.ListingId }
          : { order: "latest", discoveredAt: Number(first), id: second as Ids.ListingId }
        return position.order === order
          ? Effect.succeed(position)
          : Effect.fail(new Errors.InvalidRequest({ parameter: "cursor", message: "another ordering" }))
      })
  }))

const codecOf = (calls: { count: number }, enabled: boolean) =>
  Effect.gen(function*() {
    return yield* Cursor.CursorCodec
  }).pipe(Effect.provide(RememberedCursors.layer(countingCodec(calls), enabled)))

describe("RememberedCursors", () => {
  const position: Cursor.CursorPosition = { order: "latest", discoveredAt: 1_700_000_000_000, id: "ABCDEFGH" as Ids.ListingId }

  it.effect("a cursor signed or read once is answered again without the codec; another ordering still goes to it", () =>
    Effect.gen(function*() {
      const calls = { count: 0 }
      const codec = yield* codecOf(calls, true)
      const cursor = yield* codec.issue(position)
      assert.strictEqual(yield* codec.issue(position), cursor)
      assert.deepStrictEqual(yield* codec.read(cursor, "latest"), position)
      assert.strictEqual(calls.count, 1)
      const refused = yield* Effect.flip(codec.read(cursor, "id"))
      assert.strictEqual(refused.message, "another ordering")
      assert.strictEqual(calls.count, 2)
      // Read first, then issued: the read is remembered too.
      const other = "i:ZYXWVUTS"
      assert.deepStrictEqual(yield* codec.read(other, "id"), { order: "id", id: "ZYXWVUTS" as Ids.ListingId })
      assert.deepStrictEqual(yield* codec.read(other, "id"), { order: "id", id: "ZYXWVUTS" as Ids.ListingId })
      assert.strictEqual(calls.count, 3)
    }))

  it.effect("switched off, every call reaches the codec", () =>
    Effect.gen(function*() {
      const calls = { count: 0 }
      const codec = yield* codecOf(calls, false)
      const cursor = yield* codec.issue(position)
      yield* codec.issue(position)
      yield* codec.read(cursor, "latest")
      yield* codec.read(cursor, "latest")
      assert.strictEqual(calls.count, 4)
    }))
})

describe("ListingRendering", () => {
  const record = Effect.gen(function*() {
    const listings = yield* ListingStore.ListingStore
    yield* listings.upsert([Fixtures.listingInput("RENDER01")])
    return (yield* listings.find("RENDER01" as Ids.ListingId))!
  }).pipe(Effect.provide(StoreMemory.layer))

  const membersWith = (enabled: boolean, capacity?: number) =>
    Effect.gen(function*() {
      return (yield* ListingRendering).members
    }).pipe(Effect.provide(ListingRendering.layer(enabled, capacity)))

  it.effect("renders what ListingJson renders, kept per record object: another object is rendered anew", () =>
    Effect.gen(function*() {
      const listing = yield* record
      const members = yield* membersWith(true)
      assert.strictEqual(members(listing), ListingJson.members(listing))
      // The same object is never rendered again (here, a copy told apart only by identity).
      const changed = { ...listing, category: "changed-category" }
      Object.assign(listing, { category: "mutated-category" })
      assert.notInclude(members(listing), "mutated-category")
      assert.include(members(changed), "changed-category")
    }))

  it.effect("keeps a text rendered again over texts rendered once since", () =>
    Effect.gen(function*() {
      const listing = yield* record
      const members = yield* membersWith(true, 4)
      const others = Array.from({ length: 6 }, (_, index) => ({ ...listing, id: `OTHER00${index}` as Ids.ListingId }))
      members(listing)
      for (const other of others.slice(0, 3)) members(other)
      members(listing)
      // Three more: recency alone would drop the oldest text, the one rendered again.
      for (const other of others.slice(3)) members(other)
      Object.assign(listing, { category: "mutated-category" })
      assert.notInclude(members(listing), "mutated-category")
      // The first rendered once went: its object is rendered anew.
      Object.assign(others[0]!, { category: "mutated-category" })
      assert.include(members(others[0]!), "mutated-category")
    }))

  it.effect("switched off, renders every time", () =>
    Effect.gen(function*() {
      const listing = yield* record
      const members = yield* membersWith(false)
      members(listing)
      Object.assign(listing, { category: "mutated-category" })
      assert.include(members(listing), "mutated-category")
    }))
})

describe("RememberedWatchFilters", () => {
  const filtersWith = (enabled: boolean) =>
    Effect.gen(function*() {
      return yield* Watches.WatchFilters
    }).pipe(Effect.provide(RememberedWatchFilters.layer(enabled)))
  const query = { tld: "io", category: "tech,finance", rsMin: "40" }

  it.effect("decodes as Watch.filtersOf does, once a stored text", () =>
    Effect.gen(function*() {
      const filtersOf = yield* filtersWith(true)
      const first = filtersOf(query)
      assert.deepStrictEqual(first, Watch.filtersOf(query))
      assert.strictEqual(filtersOf({ ...query }), first)
      assert.deepStrictEqual(filtersOf({ ...query, tld: "net" }), Watch.filtersOf({ ...query, tld: "net" }))
    }))

  it.effect("switched off, the worker decodes every time (the core's default)", () =>
    Effect.gen(function*() {
      const filtersOf = yield* filtersWith(false)
      assert.strictEqual(filtersOf, Watch.filtersOf)
      assert.notStrictEqual(filtersOf(query), filtersOf(query))
    }))
})
