import { Keyset, type RevealLedger, RevealStore } from "@dropshelf/core"
import { Effect } from "effect"
import { compareIds } from "./IdOrder.ts"

/** Reveals and monthly usage in memory; `revealedAmong` is also read by the listing store. */
export const makeRevealStore = Effect.sync(() => {
  const entries = new Map<string, RevealLedger.RevealEntry>()
  const usage = new Map<string, number>()
  const entryKey = (accountId: string, listingId: string) => `${accountId}\u0000${listingId}`
  const usageKey = (accountId: string, month: string) => `${accountId}\u0000${month}`

  const revealedAmong = (accountId: string, listingIds: ReadonlyArray<string>): ReadonlySet<string> =>
    new Set(listingIds.filter((id) => entries.has(entryKey(accountId, id))))

  const store = RevealStore.RevealStore.of({
    find: (accountId, listingId) => Effect.sync(() => entries.get(entryKey(accountId, listingId))),
    revealedAmong: (accountId, listingIds) => Effect.sync(() => revealedAmong(accountId, listingIds)),
    record: (request) =>
      Effect.sync((): RevealStore.RecordOutcome => {
        const key = entryKey(request.accountId, request.listingId)
        const existing = entries.get(key)
        if (existing !== undefined) return { _tag: "Recorded", entry: existing, fresh: false }
        if (request.charge !== undefined) {
          const counter = usageKey(request.accountId, request.charge.month)
          const used = usage.get(counter) ?? 0
          if (used >= request.charge.limit) return { _tag: "AllowanceSpent" }
          usage.set(counter, used + 1)
        }
        const entry = {
          accountId: request.accountId,
          listingId: request.listingId,
          revealedAt: request.at,
          charged: request.charge !== undefined
        }
        entries.set(key, entry)
        return { _tag: "Recorded", entry, fresh: true }
      }),
    usedIn: (accountId, month) => Effect.sync(() => usage.get(usageKey(accountId, month)) ?? 0),
    forAccount: (accountId, range, page) =>
      Effect.sync(() => {
        const rows = [...entries.values()]
          .filter((entry) =>
            entry.accountId === accountId &&
            (range.from === undefined || entry.revealedAt >= range.from) &&
            (range.to === undefined || entry.revealedAt < range.to)
          )
          .sort((a, b) => a.revealedAt - b.revealedAt || compareIds(a.listingId, b.listingId))
        return Keyset.window(rows, page, (entry) => entry.listingId)
      })
  })
  return { store, revealedAmong }
})
