import { Cursor, Errors, type Ids } from "@dropshelf/core"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { Mac, SecureRandom } from "effect/crypto"
import fc from "fast-check"

/*
 * product.md: the cursor is opaque and tamper-evident. A cursor this deployment did not
 * issue, one edited in any way (lower-cased included) or one of the other ordering is
 * 400 invalid_request naming `cursor`.
 */

/** Fresh, because Effect memoises a layer by reference and would reuse the first secret's codec. */
const codecWith = (secret: Uint8Array) =>
  Layer.fresh(Cursor.CursorCodec.layer).pipe(
    Layer.provide(Layer.succeed(Cursor.CursorSecret, secret)),
    Layer.provide(Mac.layerWebCrypto),
    Layer.provide(SecureRandom.layerWebCrypto)
  )

const secret = new Uint8Array(32).fill(7)
const otherSecret = new Uint8Array(32).fill(8)

const listingId = fc.stringMatching(/^[A-Za-z0-9]{8}$/).map((id) => id as Ids.ListingId)
// Negative instants too: an import may carry a discovered_at before 1970.
const instant = fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(9999, 11, 31) })
const position: fc.Arbitrary<Cursor.CursorPosition> = fc.oneof(
  listingId.map((id) => ({ order: "id" as const, id })),
  fc.tuple(instant, listingId).map(([discoveredAt, id]) => ({ order: "latest" as const, discoveredAt, id }))
)

const idPosition: Cursor.CursorPosition = { order: "id", id: "AbCd1234" as Ids.ListingId }
const latestPosition: Cursor.CursorPosition = {
  order: "latest",
  discoveredAt: Date.UTC(2026, 10, 22, 9, 30),
  id: "Zz9yX8wV" as Ids.ListingId
}

const assertRefusedAsCursor = (error: unknown) => {
  assert.instanceOf(error, Errors.InvalidRequest)
  assert.strictEqual((error as Errors.InvalidRequest).parameter, "cursor")
}

/** Characters a cursor is made of, and a few it never contains. */
const cursorChar = fc.constantFrom(
  ..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ %".split("")
)

interface Edit {
  readonly kind: "replace" | "insert" | "delete"
  /** Taken modulo the cursor's length, so every index can be hit. */
  readonly at: number
  readonly char: string
}

const anEdit: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom("replace" as const, "insert" as const, "delete" as const),
  at: fc.nat(),
  char: cursorChar
})

const applyEdit = (cursor: string, { at, char, kind }: Edit): string => {
  if (kind === "insert") {
    const index = at % (cursor.length + 1)
    return cursor.slice(0, index) + char + cursor.slice(index)
  }
  const index = at % cursor.length
  return cursor.slice(0, index) + (kind === "replace" ? char : "") + cursor.slice(index + 1)
}

layer(codecWith(secret))("CursorCodec", (it) => {
  it.effect("reads back the position it issued, for both orderings", () =>
    Effect.gen(function*() {
      const codec = yield* Cursor.CursorCodec
      for (const issued of [idPosition, latestPosition]) {
        const cursor = yield* codec.issue(issued)
        assert.deepStrictEqual(yield* codec.read(cursor, issued.order), issued)
      }
    }))

  it.effect("round-trips any position", () =>
    Effect.gen(function*() {
      const codec = yield* Cursor.CursorCodec
      yield* Effect.promise(() =>
        fc.assert(fc.asyncProperty(position, async (issued) => {
          const read = await Effect.runPromise(codec.issue(issued).pipe(Effect.flatMap((c) => codec.read(c, issued.order))))
          assert.deepStrictEqual(read, issued)
        }))
      )
    }))

  it.effect("is opaque: the listing id does not appear in the cursor", () =>
    Effect.gen(function*() {
      const codec = yield* Cursor.CursorCodec
      const cursor = yield* codec.issue(idPosition)
      assert.notInclude(cursor, idPosition.id)
    }))

  it.effect("refuses a cursor read with the other ordering, naming cursor", () =>
    Effect.gen(function*() {
      const codec = yield* Cursor.CursorCodec
      const byId = yield* codec.issue(idPosition)
      const byLatest = yield* codec.issue(latestPosition)
      assertRefusedAsCursor(yield* Effect.flip(codec.read(byId, "latest")))
      assertRefusedAsCursor(yield* Effect.flip(codec.read(byLatest, "id")))
    }))

  it.effect("refuses any single-character replacement, insertion or deletion in an issued cursor", () =>
    Effect.gen(function*() {
      const codec = yield* Cursor.CursorCodec
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(position, anEdit, async (issued, anEdit) => {
            const cursor = await Effect.runPromise(codec.issue(issued))
            const edited = applyEdit(cursor, anEdit)
            fc.pre(edited !== cursor)
            const result = await Effect.runPromise(Effect.result(codec.read(edited, issued.order)))
            assert.isTrue(Result.isFailure(result), `edited cursor ${edited} (issued ${cursor}) was accepted`)
            if (Result.isFailure(result)) assertRefusedAsCursor(result.failure)
          }),
          { numRuns: 1000 }
        )
      )
    }))

  it.effect("refuses the lower-cased form of an issued cursor", () =>
    Effect.gen(function*() {
      const codec = yield* Cursor.CursorCodec
      yield* Effect.promise(() =>
        fc.assert(fc.asyncProperty(position, async (issued) => {
          const cursor = await Effect.runPromise(codec.issue(issued))
          const lower = cursor.toLowerCase()
          fc.pre(lower !== cursor)
          const result = await Effect.runPromise(Effect.result(codec.read(lower, issued.order)))
          assert.isTrue(Result.isFailure(result), `lower-cased cursor ${lower} was accepted`)
          if (Result.isFailure(result)) assertRefusedAsCursor(result.failure)
        }))
      )
    }))

  it.effect("reads a cursor another instance issued with the same secret, the same way every time", () =>
    Effect.gen(function*() {
      const codec = yield* Cursor.CursorCodec
      const [byId, byLatest] = yield* Effect.gen(function*() {
        const other = yield* Cursor.CursorCodec
        return [yield* other.issue(idPosition), yield* other.issue(latestPosition)] as const
      }).pipe(Effect.provide(codecWith(secret)))
      // The first read checks the MAC; later reads of the same text are answered from memory.
      for (let time = 0; time < 2; time++) {
        assert.deepStrictEqual(yield* codec.read(byId, "id"), idPosition)
        assert.deepStrictEqual(yield* codec.read(byLatest, "latest"), latestPosition)
        assertRefusedAsCursor(yield* Effect.flip(codec.read(byId, "latest")))
        assertRefusedAsCursor(yield* Effect.flip(codec.read(byLatest, "id")))
      }
    }))

  it.effect("refuses a cursor signed with another secret", () =>
    Effect.gen(function*() {
      const codec = yield* Cursor.CursorCodec
      const foreign = yield* Effect.gen(function*() {
        const other = yield* Cursor.CursorCodec
        return yield* other.issue(idPosition)
      }).pipe(Effect.provide(codecWith(otherSecret)))
      assert.notStrictEqual(foreign, yield* codec.issue(idPosition))
      assertRefusedAsCursor(yield* Effect.flip(codec.read(foreign, "id")))
    }))

  it.effect.each(["garbage", "", ".", "..", "a.b", "a.b.c", "aTp0ZXN0.", ".aTp0ZXN0", "aTpBYkNkMTIzNA"])(
    "refuses the made-up cursor %j",
    (text) =>
      Effect.gen(function*() {
        const codec = yield* Cursor.CursorCodec
        assertRefusedAsCursor(yield* Effect.flip(codec.read(text, "id")))
      })
  )

  it.effect("refuses arbitrary strings", () =>
    Effect.gen(function*() {
      const codec = yield* Cursor.CursorCodec
      yield* Effect.promise(() =>
        fc.assert(fc.asyncProperty(fc.string({ maxLength: 200 }), fc.constantFrom("id" as const, "latest" as const), async (text, order) => {
          const result = await Effect.runPromise(Effect.result(codec.read(text, order)))
          assert.isTrue(Result.isFailure(result))
          if (Result.isFailure(result)) assertRefusedAsCursor(result.failure)
        }))
      )
    }))
})
