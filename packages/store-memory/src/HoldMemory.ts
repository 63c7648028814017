import { Errors, Hold, HoldStore, type Ids, Keyset } from "@dropshelf/core"
import { Effect, Result } from "effect"
import { compareIds } from "./IdOrder.ts"

type HoldRecord = Hold.HoldRecord

/** Holds in memory; `runningOn` is also read by the listing store. */
export const makeHoldStore = Effect.sync(() => {
  const holds = new Map<string, HoldRecord>()
  let sequence = 0

  const all = () => [...holds.values()]
  const runningOnListing = (listingId: string, now: number) =>
    all().find((hold) => hold.listingId === listingId && Hold.isRunningAt(hold, now))

  const own = (accountId: string, holdId: string) => {
    const hold = holds.get(holdId)
    return hold !== undefined && hold.accountId === accountId ? hold : undefined
  }

  const runningOn = (listingIds: ReadonlyArray<string>, now: number): ReadonlyMap<string, HoldRecord> => {
    const wanted = new Set(listingIds)
    const running = new Map<string, HoldRecord>()
    for (const hold of holds.values()) {
      if (wanted.has(hold.listingId) && Hold.isRunningAt(hold, now)) running.set(hold.listingId, hold)
    }
    return running
  }

  const store = HoldStore.HoldStore.of({
    acquire: (request) =>
      Effect.suspend((): Effect.Effect<
        { readonly hold: HoldRecord; readonly created: boolean },
        Errors.HeldByOther | Errors.HoldCapReached | Errors.HoldCooldown
      > => {
        const { accountId, listingId, now } = request
        const lastOwnHold = all()
          .filter((hold) => hold.accountId === accountId && hold.listingId === listingId && !Hold.isRunningAt(hold, now))
          .sort((a, b) => (Hold.endedAt(b, now) ?? 0) - (Hold.endedAt(a, now) ?? 0))[0]
        const decision = Hold.decideAcquire({
          accountId,
          plan: request.plan,
          now,
          runningOnListing: runningOnListing(listingId, now),
          accountRunning: all().filter((hold) => hold.accountId === accountId && Hold.isRunningAt(hold, now)).length,
          lastOwnHold
        })
        if (Result.isFailure(decision)) return Effect.fail(decision.failure)
        if (decision.success._tag === "Existing") return Effect.succeed({ hold: decision.success.hold, created: false })
        const hold: HoldRecord = {
          id: (request.id ?? `h_${(++sequence).toString(36).padStart(8, "0")}`) as Ids.HoldId,
          listingId,
          accountId,
          heldAt: decision.success.heldAt,
          expiresAt: decision.success.expiresAt,
          extended: false,
          endedAt: null,
          outcome: null
        }
        holds.set(hold.id, hold)
        return Effect.succeed({ hold, created: true })
      }),
    extend: (request) =>
      Effect.suspend((): Effect.Effect<HoldRecord, Errors.HoldNotFound | Errors.AlreadyExtended | Errors.HoldOver> => {
        const hold = own(request.accountId, request.holdId)
        if (hold === undefined) return Effect.fail(new Errors.HoldNotFound({ holdId: request.holdId }))
        const decision = Hold.decideExtend(hold, request.now, request.extensionMs)
        if (Result.isFailure(decision)) return Effect.fail(decision.failure)
        holds.set(hold.id, decision.success)
        return Effect.succeed(decision.success)
      }),
    end: (request) =>
      Effect.suspend((): Effect.Effect<HoldRecord, Errors.HoldNotFound | Errors.HoldOver> => {
        const hold = own(request.accountId, request.holdId)
        if (hold === undefined) return Effect.fail(new Errors.HoldNotFound({ holdId: request.holdId }))
        const decision = Hold.decideEnd(hold, request.now, request.outcome)
        if (Result.isFailure(decision)) return Effect.fail(decision.failure)
        holds.set(hold.id, decision.success)
        return Effect.succeed(decision.success)
      }),
    findOwn: (accountId, holdId) => Effect.sync(() => own(accountId, holdId)),
    runningOn: (listingIds, now) => Effect.sync(() => runningOn(listingIds, now)),
    forAccount: (accountId, endedSince, now) =>
      Effect.sync(() =>
        all()
          .filter((hold) => {
            if (hold.accountId !== accountId) return false
            const ended = Hold.endedAt(hold, now)
            return ended === null || ended >= endedSince
          })
          .sort((a, b) => b.heldAt - a.heldAt || compareIds(b.id, a.id))
      ),
    countRunning: (accountId, now) =>
      Effect.sync(() => all().filter((hold) => hold.accountId === accountId && Hold.isRunningAt(hold, now)).length),
    list: (filter, page) =>
      Effect.sync(() =>
        Keyset.window(
          all()
            .filter((hold) =>
              (filter.accountId === undefined || hold.accountId === filter.accountId) &&
              (filter.runningAt === undefined || Hold.isRunningAt(hold, filter.runningAt))
            )
            .sort((a, b) => a.heldAt - b.heldAt || compareIds(a.id, b.id)),
          page,
          (hold) => hold.id
        )
      )
  })
  return { store, runningOn }
})
