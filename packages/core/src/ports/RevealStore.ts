import { Context, type Effect } from "effect"
import type { Allowance, RevealEntry } from "../domain/RevealLedger.ts"
import type { KeysetRequest } from "../domain/Keyset.ts"
import type { Instant } from "../domain/Time.ts"

export interface RecordReveal {
  readonly accountId: string
  readonly listingId: string
  readonly at: Instant
  /** The allowance to charge, or `undefined` when this reveal is free. */
  readonly charge: Allowance | undefined
}

export type RecordOutcome =
  | { readonly _tag: "Recorded"; readonly entry: RevealEntry; readonly fresh: boolean }
  | { readonly _tag: "AllowanceSpent" }

/** The reveal ledger and the monthly usage counters. */
export class RevealStore extends Context.Service<RevealStore, {
  readonly find: (accountId: string, listingId: string) => Effect.Effect<RevealEntry | undefined>
  readonly revealedAmong: (accountId: string, listingIds: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>>
  /**
   * Atomically: an existing entry is returned unchanged (`fresh: false`) and nothing is charged;
   * otherwise the entry is written and, when `charge` is set, one unit of that month's
   * allowance is spent — or nothing at all is written and `AllowanceSpent` comes back.
   */
  readonly record: (request: RecordReveal) => Effect.Effect<RecordOutcome>
  readonly usedIn: (accountId: string, month: string) => Effect.Effect<number>
  /**
   * The account's ledger entries revealed in `[from, to)` (either bound optional), in order of
   * `revealedAt` then listing id; `after` names a listing id.
   */
  readonly forAccount: (
    accountId: string,
    range: { readonly from: Instant | undefined; readonly to: Instant | undefined },
    page: KeysetRequest
  ) => Effect.Effect<ReadonlyArray<RevealEntry>>
}>()("@dropshelf/core/RevealStore") {}
