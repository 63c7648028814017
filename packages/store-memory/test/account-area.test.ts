import { assert, describe, it } from "@effect/vitest"
import { AccountArea, Errors, Operators, Plan } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Effect } from "effect"
import { TestClock } from "effect/testing"

/* The account area's use cases: scoped to the signed-in account, on the operator's rules. */

const T0 = Date.UTC(2026, 5, 15, 12)

describe("AccountArea", () => {
  it.effect("the overview tells the plan's ceilings and what is used of them", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const operators = yield* Operators.Operators
      const area = yield* AccountArea.AccountArea
      const account = yield* operators.createAccount("owner", "lapsed")
      yield* operators.createKey(account.id, "one")
      const overview = yield* area.overview(account.id)
      assert.strictEqual(overview.plan, Plan.Plans.free)
      assert.deepStrictEqual(overview.reveals, { used: 0, limit: 10, remaining: 10, resetsAt: Date.UTC(2026, 6, 1) })
      assert.strictEqual(overview.liveKeys, 1)
      assert.strictEqual(overview.runningHolds, 0)
      assert.strictEqual(overview.watches, 0)
      assert.deepStrictEqual(yield* Effect.flip(area.overview("acct_nosuch")), new Errors.AccountNotFound({ accountId: "acct_nosuch" }))
    }).pipe(Effect.provide(StoreMemory.layerDirectory)))

  it.effect("keys are created under the plan's ceiling with a name a person typed, trimmed", () =>
    Effect.gen(function*() {
      const operators = yield* Operators.Operators
      const area = yield* AccountArea.AccountArea
      const account = yield* operators.createAccount("owner", "free")
      const created = yield* area.createKey(account.id, "  laptop  ")
      assert.strictEqual(created.key.name, "laptop")
      for (const name of ["", "   ", "x".repeat(101), "nul\u0000"]) {
        const refused = yield* Effect.flip(area.createKey(account.id, name))
        assert.strictEqual(refused._tag, "InvalidRequest")
      }
      yield* area.createKey(account.id, "second")
      assert.deepStrictEqual(yield* Effect.flip(area.createKey(account.id, "third")), new Errors.KeyLimitReached({ limit: 2 }))
      assert.deepStrictEqual((yield* area.keys(account.id)).map((key) => key.name), ["laptop", "second"])
    }).pipe(Effect.provide(StoreMemory.layerDirectory)))

  it.effect("an account revokes its own keys only: another account's key reads as unknown", () =>
    Effect.gen(function*() {
      const operators = yield* Operators.Operators
      const area = yield* AccountArea.AccountArea
      const mine = yield* operators.createAccount("mine", "pro")
      const theirs = yield* operators.createAccount("theirs", "pro")
      const myKey = yield* area.createKey(mine.id, "mine")
      const theirKey = yield* area.createKey(theirs.id, "theirs")
      assert.deepStrictEqual(yield* Effect.flip(area.revokeKey(mine.id, theirKey.key.id)), new Errors.KeyNotFound({ prefix: theirKey.key.id }))
      assert.strictEqual((yield* area.keys(theirs.id))[0]!.revokedAt, null)
      const revoked = yield* area.revokeKey(mine.id, myKey.key.id)
      assert.isNotNull(revoked.revokedAt)
    }).pipe(Effect.provide(StoreMemory.layerDirectory)))

  it.effect("a key is rotated with a day's grace, keeping its name and lifetime; another account's key is not", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const operators = yield* Operators.Operators
      const area = yield* AccountArea.AccountArea
      const mine = yield* operators.createAccount("mine", "free")
      const theirs = yield* operators.createAccount("theirs", "free")
      const expiring = yield* area.createKey(mine.id, "ci", 30 * 86_400_000)
      yield* area.createKey(mine.id, "laptop")
      yield* TestClock.adjust(3_600_000)
      // Full at two live keys, yet the key retiring makes room for its successor.
      const rotated = yield* area.rotateKey(mine.id, expiring.key.id)
      assert.strictEqual(rotated.key.name, "ci")
      assert.strictEqual(rotated.key.expiresAt, T0 + 3_600_000 + 30 * 86_400_000)
      assert.strictEqual(rotated.retired.expiresAt, T0 + 3_600_000 + AccountArea.ROTATION_GRACE_MS)
      const theirKey = yield* area.createKey(theirs.id, "theirs")
      assert.deepStrictEqual(yield* Effect.flip(area.rotateKey(mine.id, theirKey.key.id)), new Errors.KeyNotFound({ prefix: theirKey.key.id }))
    }).pipe(Effect.provide(StoreMemory.layerDirectory)))
})
