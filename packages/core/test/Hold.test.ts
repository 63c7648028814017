import { Errors, Hold, type Ids, Plan, Time } from "@dropshelf/core"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"

/*
 * The hold state machine of the spec (States and transitions, Hold) and Limits rule 4:
 * one extension counted from the scheduled end, a 30-day cooldown for the account whose
 * hold ended, never for another account.
 */

const ME = "acct-me"
const SOMEONE_ELSE = "acct-other"
const COOLDOWN = 30 * Time.DAY

const holdPlan = fc.constantFrom(Plan.Plans.pro, Plan.Plans.business)
/** Instants from 2000 to 2100, so windows and cooldowns never overflow a realistic clock. */
const instant = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) })
const outcome = fc.constantFrom("released" as const, "registered" as const)

const hold = (fields: Partial<Hold.HoldRecord> & { readonly heldAt: number; readonly expiresAt: number }): Hold.HoldRecord => ({
  id: "hold-1" as Ids.HoldId,
  listingId: "AbCd1234",
  accountId: ME,
  extended: false,
  endedAt: null,
  outcome: null,
  ...fields
})

const runningHold = (plan: Plan.PlanLimits, heldAt: number, accountId = ME): Hold.HoldRecord =>
  hold({ heldAt, expiresAt: heldAt + plan.holdHours * Time.HOUR, accountId })

const snapshot = (fields: Partial<Hold.AcquireSnapshot> & { readonly plan: Plan.PlanLimits; readonly now: number }): Hold.AcquireSnapshot => ({
  accountId: ME,
  runningOnListing: undefined,
  accountRunning: 0,
  lastOwnHold: undefined,
  ...fields
})

const success = <A, E>(result: Result.Result<A, E>): A => {
  if (Result.isFailure(result)) assert.fail(`expected success, got ${JSON.stringify(result.failure)}`)
  return result.success
}

const failure = <A, E>(result: Result.Result<A, E>): E => {
  if (Result.isSuccess(result)) assert.fail(`expected a refusal, got ${JSON.stringify(result.success)}`)
  return result.failure
}

describe("decideAcquire", () => {
  it("creates a hold that starts now and runs for the plan's hold window", () => {
    fc.assert(fc.property(holdPlan, instant, fc.nat({ max: 2 }), (plan, now, running) => {
      const decision = success(Hold.decideAcquire(snapshot({ plan, now, accountRunning: running })))
      assert.deepStrictEqual(decision, { _tag: "Create", heldAt: now, expiresAt: now + plan.holdHours * Time.HOUR })
    }))
  })

  it("uses 48 hours on pro and 168 hours on business", () => {
    const now = Date.UTC(2026, 10, 22)
    assert.deepStrictEqual(success(Hold.decideAcquire(snapshot({ plan: Plan.Plans.pro, now }))), {
      _tag: "Create",
      heldAt: now,
      expiresAt: now + 48 * Time.HOUR
    })
    assert.deepStrictEqual(success(Hold.decideAcquire(snapshot({ plan: Plan.Plans.business, now }))), {
      _tag: "Create",
      heldAt: now,
      expiresAt: now + 168 * Time.HOUR
    })
  })

  it("returns the account's own running hold unchanged, even at the hold cap", () => {
    fc.assert(fc.property(holdPlan, instant, fc.nat({ max: 47 * Time.HOUR }), (plan, heldAt, elapsed) => {
      const own = runningHold(plan, heldAt)
      const decision = success(Hold.decideAcquire(snapshot({
        plan,
        now: heldAt + elapsed,
        runningOnListing: own,
        accountRunning: plan.concurrentHolds
      })))
      assert.strictEqual(decision._tag, "Existing")
      if (decision._tag === "Existing") assert.strictEqual(decision.hold, own)
    }))
  })

  it("refuses while another account's hold runs, with that hold's end and never its holder", () => {
    fc.assert(fc.property(holdPlan, instant, fc.nat({ max: 47 * Time.HOUR }), (plan, heldAt, elapsed) => {
      const theirs = runningHold(plan, heldAt, SOMEONE_ELSE)
      const error = failure(Hold.decideAcquire(snapshot({ plan, now: heldAt + elapsed, runningOnListing: theirs })))
      assert.instanceOf(error, Errors.HeldByOther)
      assert.strictEqual((error as Errors.HeldByOther).expiresAt, theirs.expiresAt)
      assert.notInclude(JSON.stringify(error), SOMEONE_ELSE)
    }))
  })

  it("refuses at the hold cap with the plan's limit", () => {
    fc.assert(fc.property(holdPlan, instant, fc.nat({ max: 5 }), (plan, now, over) => {
      const error = failure(Hold.decideAcquire(snapshot({ plan, now, accountRunning: plan.concurrentHolds + over })))
      assert.instanceOf(error, Errors.HoldCapReached)
      assert.strictEqual((error as Errors.HoldCapReached).limit, plan.concurrentHolds)
    }))
    assert.strictEqual(
      (failure(Hold.decideAcquire(snapshot({ plan: Plan.Plans.pro, now: 0, accountRunning: 3 }))) as Errors.HoldCapReached).limit,
      3
    )
    assert.strictEqual(
      (failure(Hold.decideAcquire(snapshot({ plan: Plan.Plans.business, now: 0, accountRunning: 20 }))) as Errors.HoldCapReached).limit,
      20
    )
  })

  it("refuses within 30 days of the account's own hold ending (released or registered), available 30 days after the end", () => {
    fc.assert(fc.property(holdPlan, instant, fc.nat({ max: 47 * Time.HOUR }), outcome, fc.nat({ max: COOLDOWN - 1 }), (plan, heldAt, held, how, wait) => {
      const endedAt = heldAt + held
      const ended = { ...runningHold(plan, heldAt), endedAt, outcome: how }
      const error = failure(Hold.decideAcquire(snapshot({ plan, now: endedAt + wait, lastOwnHold: ended })))
      assert.instanceOf(error, Errors.HoldCooldown)
      assert.strictEqual((error as Errors.HoldCooldown).availableAt, endedAt + COOLDOWN)
    }))
  })

  it("refuses within 30 days of the account's own hold expiring, counted from the expiry", () => {
    fc.assert(fc.property(holdPlan, instant, fc.nat({ max: COOLDOWN - 1 }), (plan, heldAt, wait) => {
      const expired = runningHold(plan, heldAt)
      const error = failure(Hold.decideAcquire(snapshot({ plan, now: expired.expiresAt + wait, lastOwnHold: expired })))
      assert.instanceOf(error, Errors.HoldCooldown)
      assert.strictEqual((error as Errors.HoldCooldown).availableAt, expired.expiresAt + COOLDOWN)
    }))
  })

  it("allows the account to hold again once 30 days have passed since its hold ended", () => {
    fc.assert(fc.property(holdPlan, instant, fc.boolean(), fc.nat({ max: 365 * Time.DAY }), (plan, heldAt, released, later) => {
      const own = runningHold(plan, heldAt)
      const ended = released ? { ...own, endedAt: heldAt + Time.HOUR, outcome: "released" as const } : own
      const end = released ? heldAt + Time.HOUR : own.expiresAt
      const now = end + COOLDOWN + later
      assert.strictEqual(success(Hold.decideAcquire(snapshot({ plan, now, lastOwnHold: ended })))._tag, "Create")
    }))
  })

  it("never puts an account in cooldown because another account's hold ended", () => {
    // The store hands decideAcquire only the account's own last hold: another account's ended
    // hold is neither running nor own, so the snapshot carries nothing for it.
    fc.assert(fc.property(holdPlan, instant, fc.nat({ max: COOLDOWN }), (plan, heldAt, wait) => {
      const theirs = runningHold(plan, heldAt, SOMEONE_ELSE)
      const now = theirs.expiresAt + wait
      assert.isFalse(Hold.isRunningAt(theirs, now))
      const decision = success(Hold.decideAcquire(snapshot({ plan, now })))
      assert.deepStrictEqual(decision, { _tag: "Create", heldAt: now, expiresAt: now + plan.holdHours * Time.HOUR })
    }))
  })
})

describe("decideExtend", () => {
  it("moves the end later by the plan's extension, counted from the scheduled end, once", () => {
    fc.assert(fc.property(holdPlan, instant, fc.nat({ max: 47 * Time.HOUR }), (plan, heldAt, elapsed) => {
      const running = runningHold(plan, heldAt)
      const extension = Plan.extensionMs(plan)
      const extended = success(Hold.decideExtend(running, heldAt + elapsed, extension))
      assert.deepStrictEqual(extended, { ...running, expiresAt: running.expiresAt + extension, extended: true })
      const again = failure(Hold.decideExtend(extended, heldAt + elapsed, extension))
      assert.instanceOf(again, Errors.AlreadyExtended)
    }))
  })

  it("refuses a second extension for as long as the extended hold runs, then reports it over", () => {
    const plan = Plan.Plans.pro
    const heldAt = Date.UTC(2026, 10, 22)
    const extended = success(Hold.decideExtend(runningHold(plan, heldAt), heldAt, Plan.extensionMs(plan)))
    assert.strictEqual(extended.expiresAt, heldAt + 72 * Time.HOUR)
    assert.instanceOf(failure(Hold.decideExtend(extended, heldAt + 71 * Time.HOUR, Plan.extensionMs(plan))), Errors.AlreadyExtended)
    const over = failure(Hold.decideExtend(extended, heldAt + 72 * Time.HOUR, Plan.extensionMs(plan)))
    assert.instanceOf(over, Errors.HoldOver)
    assert.strictEqual((over as Errors.HoldOver).state, "expired")
  })

  it("refuses an expired hold as over, from the instant of its scheduled end", () => {
    fc.assert(fc.property(holdPlan, instant, fc.nat({ max: 365 * Time.DAY }), (plan, heldAt, late) => {
      const running = runningHold(plan, heldAt)
      const error = failure(Hold.decideExtend(running, running.expiresAt + late, Plan.extensionMs(plan)))
      assert.instanceOf(error, Errors.HoldOver)
      assert.strictEqual((error as Errors.HoldOver).state, "expired")
      assert.isTrue(Result.isSuccess(Hold.decideExtend(running, running.expiresAt - 1, Plan.extensionMs(plan))))
    }))
  })

  it("refuses a released or registered hold as over, with its outcome, even before the scheduled end", () => {
    fc.assert(fc.property(holdPlan, instant, outcome, fc.nat({ max: 47 * Time.HOUR }), (plan, heldAt, how, elapsed) => {
      const ended = { ...runningHold(plan, heldAt), endedAt: heldAt, outcome: how }
      const error = failure(Hold.decideExtend(ended, heldAt + elapsed, Plan.extensionMs(plan)))
      assert.instanceOf(error, Errors.HoldOver)
      assert.strictEqual((error as Errors.HoldOver).state, how)
    }))
  })
})

describe("decideEnd", () => {
  it("ends a running hold now with the outcome asked for, starting the 30-day cooldown", () => {
    fc.assert(fc.property(holdPlan, instant, outcome, fc.nat({ max: 47 * Time.HOUR }), (plan, heldAt, how, elapsed) => {
      const now = heldAt + elapsed
      const running = runningHold(plan, heldAt)
      const ended = success(Hold.decideEnd(running, now, how))
      assert.deepStrictEqual(ended, { ...running, endedAt: now, outcome: how })
      assert.strictEqual(Hold.statusAt(ended, now), how)
      assert.strictEqual(Hold.endedAt(ended, now + Time.DAY), now)
      assert.strictEqual(Hold.cooldownEndsAt(ended, now), now + COOLDOWN)
    }))
  })

  it("refuses to end a hold that is already over", () => {
    fc.assert(fc.property(holdPlan, instant, outcome, outcome, (plan, heldAt, first, second) => {
      const running = runningHold(plan, heldAt)
      const expired = failure(Hold.decideEnd(running, running.expiresAt, second))
      assert.strictEqual((expired as Errors.HoldOver).state, "expired")
      const ended = success(Hold.decideEnd(running, heldAt, first))
      const again = failure(Hold.decideEnd(ended, heldAt + 1, second))
      assert.instanceOf(again, Errors.HoldOver)
      assert.strictEqual((again as Errors.HoldOver).state, first)
    }))
  })
})

describe("statusAt, endedAt and cooldownEndsAt", () => {
  it("run a hold until its scheduled end and expire it there, with no writer involved", () => {
    fc.assert(fc.property(holdPlan, instant, fc.nat({ max: 365 * Time.DAY }), (plan, heldAt, offset) => {
      const running = runningHold(plan, heldAt)
      const before = heldAt + (offset % (running.expiresAt - heldAt))
      assert.strictEqual(Hold.statusAt(running, before), "running")
      assert.isTrue(Hold.isRunningAt(running, before))
      assert.isNull(Hold.endedAt(running, before))
      assert.isNull(Hold.cooldownEndsAt(running, before))

      const after = running.expiresAt + offset
      assert.strictEqual(Hold.statusAt(running, after), "expired")
      assert.isFalse(Hold.isRunningAt(running, after))
      assert.strictEqual(Hold.endedAt(running, after), running.expiresAt)
      assert.strictEqual(Hold.cooldownEndsAt(running, after), running.expiresAt + COOLDOWN)
    }))
  })
})

describe("toHoldView", () => {
  const plan = Plan.Plans.pro
  const heldAt = Date.UTC(2026, 10, 22, 9, 30)

  it("shows a running hold that can still take its extension", () => {
    assert.deepStrictEqual(Hold.toHoldView(runningHold(plan, heldAt), heldAt + Time.HOUR, plan), {
      id: "hold-1",
      listing_id: "AbCd1234",
      state: "running",
      held_at: "2026-11-22T09:30:00.000Z",
      expires_at: "2026-11-24T09:30:00.000Z",
      ended_at: null,
      can_extend: true,
      extend_hours: 24
    })
  })

  it("says can_extend false once the hold is extended", () => {
    const extended = success(Hold.decideExtend(runningHold(plan, heldAt), heldAt, Plan.extensionMs(plan)))
    const view = Hold.toHoldView(extended, heldAt + Time.HOUR, plan)
    assert.isFalse(view.can_extend)
    assert.strictEqual(view.expires_at, "2026-11-25T09:30:00.000Z")
    assert.strictEqual(view.state, "running")
  })

  it("says can_extend false and gives ended_at once the hold has ended, however it ended", () => {
    fc.assert(fc.property(holdPlan, instant, fc.option(outcome, { nil: undefined }), fc.nat({ max: 30 * Time.DAY }), (plan, heldAt, how, later) => {
      const running = runningHold(plan, heldAt)
      const ended = how === undefined ? running : success(Hold.decideEnd(running, heldAt + 1, how))
      const end = how === undefined ? running.expiresAt : heldAt + 1
      const view = Hold.toHoldView(ended, end + later, plan)
      assert.isFalse(view.can_extend)
      assert.strictEqual(view.state, how ?? "expired")
      assert.strictEqual(view.ended_at, new Date(end).toISOString())
      assert.strictEqual(view.extend_hours, plan.extendHours)
    }))
  })

  it("shows the business plan's 168-hour window and extension", () => {
    const view = Hold.toHoldView(runningHold(Plan.Plans.business, heldAt), heldAt, Plan.Plans.business)
    assert.strictEqual(view.extend_hours, 168)
    assert.strictEqual(view.expires_at, "2026-11-29T09:30:00.000Z")
  })
})
