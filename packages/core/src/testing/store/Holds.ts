import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Errors from "../../domain/errors.ts"
import * as Hold from "../../domain/Hold.ts"
import { DAY, HOUR } from "../../domain/Time.ts"
import { HoldStore } from "../../ports/HoldStore.ts"
import { pro, type Run, T0 } from "./Stores.ts"

export const suite = (name: string, run: Run) => {
  describe(`${name}: holds`, () => {
    const acquire = (accountId: string, listingId: string, now: number, plan = pro) =>
      Effect.gen(function*() {
        const holds = yield* HoldStore
        return yield* holds.acquire({ accountId, listingId, plan, now })
      })

    it.live("one running hold per listing; the holder gets it back unchanged, others are refused", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore
        const { created, hold } = yield* acquire("a1", "HHHHHHH1", T0)
        assert.isTrue(created)
        assert.strictEqual(hold.expiresAt, T0 + 48 * HOUR)
        const again = yield* acquire("a1", "HHHHHHH1", T0 + HOUR)
        assert.deepStrictEqual(again, { hold, created: false })
        const other = yield* Effect.flip(acquire("a2", "HHHHHHH1", T0 + HOUR))
        assert.deepStrictEqual(other, new Errors.HeldByOther({ expiresAt: hold.expiresAt }))
        const running = yield* holds.runningOn(["HHHHHHH1", "HHHHHHH2"], T0 + HOUR)
        assert.deepStrictEqual([...running.keys()], ["HHHHHHH1"])
        assert.strictEqual(yield* holds.countRunning("a1", T0 + HOUR), 1)
      })))

    it.live("the plan's cap counts running holds only", () =>
      run(Effect.gen(function*() {
        for (const listing of ["CAPCAP01", "CAPCAP02", "CAPCAP03"]) yield* acquire("a1", listing, T0)
        const refused = yield* Effect.flip(acquire("a1", "CAPCAP04", T0))
        assert.deepStrictEqual(refused, new Errors.HoldCapReached({ limit: 3 }))
        const afterExpiry = yield* acquire("a1", "CAPCAP04", T0 + 48 * HOUR)
        assert.isTrue(afterExpiry.created)
      })))

    it.live("an expired hold frees the listing for others and puts its holder in cooldown", () =>
      run(Effect.gen(function*() {
        const { hold } = yield* acquire("a1", "EXPIRED1", T0)
        const later = hold.expiresAt
        const taken = yield* acquire("a2", "EXPIRED1", later)
        assert.isTrue(taken.created)
        const holds = yield* HoldStore
        yield* holds.end({ accountId: "a2", holdId: taken.hold.id, now: later + HOUR, outcome: "released" })
        const cooldown = yield* Effect.flip(acquire("a1", "EXPIRED1", later + 2 * HOUR))
        assert.deepStrictEqual(cooldown, new Errors.HoldCooldown({ availableAt: hold.expiresAt + 30 * DAY }))
        const back = yield* acquire("a1", "EXPIRED1", hold.expiresAt + 30 * DAY)
        assert.isTrue(back.created)
      })))

    it.live("ending a hold starts the holder's cooldown and frees the listing at once", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore
        const { hold } = yield* acquire("a1", "ENDED001", T0)
        const ended = yield* holds.end({ accountId: "a1", holdId: hold.id, now: T0 + HOUR, outcome: "registered" })
        assert.strictEqual(Hold.statusAt(ended, T0 + HOUR), "registered")
        assert.strictEqual(ended.endedAt, T0 + HOUR)
        const again = yield* Effect.flip(holds.end({ accountId: "a1", holdId: hold.id, now: T0 + 2 * HOUR, outcome: "released" }))
        assert.deepStrictEqual(again, new Errors.HoldOver({ state: "registered" }))
        const cooldown = yield* Effect.flip(acquire("a1", "ENDED001", T0 + 2 * HOUR))
        assert.deepStrictEqual(cooldown, new Errors.HoldCooldown({ availableAt: T0 + HOUR + 30 * DAY }))
        const other = yield* acquire("a2", "ENDED001", T0 + 2 * HOUR)
        assert.isTrue(other.created)
      })))

    it.live("one extension, counted from the scheduled end; none after the end; only the holder's", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore
        const { hold } = yield* acquire("a1", "EXTEND01", T0)
        const notMine = yield* Effect.flip(holds.extend({ accountId: "a2", holdId: hold.id, now: T0, extensionMs: 24 * HOUR }))
        assert.deepStrictEqual(notMine, new Errors.HoldNotFound({ holdId: hold.id }))
        const extended = yield* holds.extend({ accountId: "a1", holdId: hold.id, now: T0 + HOUR, extensionMs: 24 * HOUR })
        assert.strictEqual(extended.expiresAt, hold.expiresAt + 24 * HOUR)
        assert.isTrue(extended.extended)
        const twice = yield* Effect.flip(holds.extend({ accountId: "a1", holdId: hold.id, now: T0 + 2 * HOUR, extensionMs: 24 * HOUR }))
        assert.deepStrictEqual(twice, new Errors.AlreadyExtended())
        const { hold: second } = yield* acquire("a1", "EXTEND02", T0)
        const over = yield* Effect.flip(holds.extend({ accountId: "a1", holdId: second.id, now: second.expiresAt, extensionMs: 24 * HOUR }))
        assert.deepStrictEqual(over, new Errors.HoldOver({ state: "expired" }))
        const missing = yield* Effect.flip(holds.end({ accountId: "a1", holdId: "h_nosuch", now: T0, outcome: "released" }))
        assert.deepStrictEqual(missing, new Errors.HoldNotFound({ holdId: "h_nosuch" }))
        assert.deepStrictEqual(yield* holds.findOwn("a2", hold.id), undefined)
        assert.strictEqual((yield* holds.findOwn("a1", hold.id))!.id, hold.id)
      })))

    it.live("an id holding the NUL character names no hold (no store can keep one)", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore
        yield* acquire("a1", "NULHOLD1", T0)
        for (const holdId of ["\u0000", "h_\u0000", "h_00000001\u0000"]) {
          assert.strictEqual(yield* holds.findOwn("a1", holdId), undefined)
          const extended = yield* Effect.flip(holds.extend({ accountId: "a1", holdId, now: T0, extensionMs: HOUR }))
          assert.deepStrictEqual(extended, new Errors.HoldNotFound({ holdId }))
          const ended = yield* Effect.flip(holds.end({ accountId: "a1", holdId, now: T0, outcome: "released" }))
          assert.deepStrictEqual(ended, new Errors.HoldNotFound({ holdId }))
        }
      })))

    it.live("an account's holds: running ones and those ended since a given time, newest first", () =>
      run(Effect.gen(function*() {
        const holds = yield* HoldStore
        const old = yield* acquire("a1", "LIST0001", T0 - 40 * DAY)
        const recent = yield* acquire("a1", "LIST0002", T0 - 3 * DAY)
        const running = yield* acquire("a1", "LIST0003", T0 - HOUR)
        yield* acquire("a2", "LIST0004", T0)
        const listed = yield* holds.forAccount("a1", T0 - 30 * DAY, T0)
        assert.deepStrictEqual(listed.map((hold) => hold.id), [running.hold.id, recent.hold.id])
        assert.notInclude(listed.map((hold) => hold.id), old.hold.id)
      })))
  })
}
