import { Clock, Effect, Metric } from "effect"
import * as DirectoryMetrics from "../DirectoryMetrics.ts"
import { HeldByOther, HoldNotFound, HoldsRequirePro, RevealRequired } from "../domain/errors.ts"
import {
  ENDED_HOLD_LISTING_MS,
  type HoldList,
  type HoldOutcome,
  type HoldRecord,
  type HoldResponse,
  toHoldView
} from "../domain/Hold.ts"
import { extensionMs } from "../domain/Plan.ts"
import type { Instant } from "../domain/Time.ts"
import { HoldStore } from "../ports/HoldStore.ts"
import { span as useCase } from "../Spans.ts"
import type { Caller } from "./Authentication.ts"
import type { FindReadable } from "./Listings.ts"

/*
 * Holds: `Directory.hold`, `extend`, `end` and `holds`. The rules that need the store's
 * atomicity (one running hold a listing, the cap, the cooldown) are `HoldStore`'s.
 */

export const make = (findReadable: FindReadable) => Effect.gen(function*() {
  const holdStore = yield* HoldStore

  const holdResponse = Effect.fnUntraced(function*(caller: Caller, hold: HoldRecord, now: Instant) {
    const active = yield* holdStore.countRunning(caller.accountId, now)
    return {
      hold: toHoldView(hold, now, caller.plan),
      holds: {
        active,
        hold_hours: caller.plan.holdHours,
        limit: caller.plan.concurrentHolds,
        plan: caller.plan.name
      }
    } satisfies HoldResponse
  })

  const hold = Effect.fnUntraced(function*(caller: Caller, id: string) {
    const now = yield* Clock.currentTimeMillis
    const { listing, running, revealed } = yield* findReadable(caller, id, now, caller.accountId)
    if (caller.plan.concurrentHolds === 0) return yield* new HoldsRequirePro()
    // Another account's hold is reported first, with when it ends, even to an account that has
    // not revealed: it could not reveal while the hold runs, and needs to know when to retry.
    if (running !== undefined && running.accountId !== caller.accountId) {
      return yield* new HeldByOther({ expiresAt: running.expiresAt })
    }
    if (!revealed) return yield* new RevealRequired()
    const { hold } = yield* holdStore.acquire({ accountId: caller.accountId, listingId: listing.id, plan: caller.plan, now })
    yield* Metric.update(DirectoryMetrics.holds, 1)
    return yield* holdResponse(caller, hold, now)
  }, useCase("Directory.hold"))

  const extend = Effect.fnUntraced(function*(caller: Caller, holdId: string) {
    const now = yield* Clock.currentTimeMillis
    const own = yield* holdStore.findOwn(caller.accountId, holdId)
    if (own === undefined) return yield* new HoldNotFound({ holdId })
    if (caller.plan.concurrentHolds === 0) return yield* new HoldsRequirePro()
    const extended = yield* holdStore.extend({
      accountId: caller.accountId,
      holdId,
      now,
      extensionMs: extensionMs(caller.plan)
    })
    return yield* holdResponse(caller, extended, now)
  }, useCase("Directory.extend"))

  const end = Effect.fnUntraced(function*(caller: Caller, holdId: string, outcome: HoldOutcome) {
    const now = yield* Clock.currentTimeMillis
    const ended = yield* holdStore.end({ accountId: caller.accountId, holdId, now, outcome })
    return yield* holdResponse(caller, ended, now)
  }, useCase("Directory.end"))

  const holds = Effect.fnUntraced(function*(caller: Caller) {
    const now = yield* Clock.currentTimeMillis
    const records = yield* holdStore.forAccount(caller.accountId, now - ENDED_HOLD_LISTING_MS, now)
    return { data: records.map((record) => toHoldView(record, now, caller.plan)) } satisfies HoldList
  }, useCase("Directory.holds"))

  return { hold, extend, end, holds }
})
