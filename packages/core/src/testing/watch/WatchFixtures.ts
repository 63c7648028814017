import { Effect } from "effect"
import type { StoredPlan } from "../../domain/Plan.ts"
import { HOUR } from "../../domain/Time.ts"
import { filtersOf, planRound } from "../../domain/Watch.ts"
import { AccountStore } from "../../ports/AccountStore.ts"
import type { HoldStore } from "../../ports/HoldStore.ts"
import type { ListingStore } from "../../ports/ListingStore.ts"
import type { RevealStore } from "../../ports/RevealStore.ts"
import { type WatchRecord, WatchStore } from "../../ports/WatchStore.ts"

/* What the watch contract's tests build on: watch records, a webhook, accounts, and rounds
 * decided by the core's own rule. */

export type WatchStores = ListingStore | AccountStore | WatchStore | HoldStore | RevealStore

let counter = 0
const newWatchId = () => `wch_contract${(++counter).toString(36)}${Math.floor(Math.random() * 1e9).toString(36)}`

export const watchOf = (accountId: string, overrides: Partial<WatchRecord> = {}): WatchRecord => ({
  id: newWatchId(),
  accountId,
  name: "test watch",
  query: {},
  webhook: null,
  paused: false,
  createdAt: Date.now() - HOUR,
  updatedAt: Date.now() - HOUR,
  ...overrides
})

export const webhook = { url: "https://example.com/hook", secret: "whsec_c2VjcmV0", previousSecret: null, previousSecretUntil: null, state: "active", stateReason: null } as const

export const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

export const account = (plan: StoredPlan) =>
  AccountStore.use((accounts) => accounts.create({ name: `watcher-${plan}`, plan, at: Date.now() }))

/** One round at `now`, deciding with the core's own rule. */
export const round = (now: number) =>
  WatchStore.use((store) =>
    store.matchRound({
      now,
      limit: 1000,
      plan: (due, candidates) =>
        planRound(due, candidates.map((row) => ({ ...row, filters: filtersOf(row.query) })), now)
    }))
