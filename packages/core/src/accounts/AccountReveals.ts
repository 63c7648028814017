import { Clock, Context, Effect, Layer } from "effect"
import { type Caller, Directory } from "../Directory.ts"
import { AccountNotFound, InvalidRequest } from "../domain/errors.ts"
import type { KeysetPage } from "../domain/Keyset.ts"
import type { RevealEntry } from "../domain/RevealLedger.ts"
import { monthOf } from "../domain/Time.ts"
import { Operators } from "../Operators.ts"
import { AccountStore } from "../ports/AccountStore.ts"
import { RevealStore } from "../ports/RevealStore.ts"

/*
 * The reveal ledger as its account reads it, a calendar month (UTC) at a time: the operator's
 * `listReveals` for the entries, the store's monthly counter for what was spent, and each
 * listing's name as the directory tells it to that account now.
 */

/** Entries a page of the ledger shows. */
export const LEDGER_PAGE = 50

export interface LedgerRow {
  readonly entry: RevealEntry
  /** The name as the directory tells it to the account now; `null` once it is no longer listed to it. */
  readonly domain: string | null
}

export interface LedgerMonth {
  /** `YYYY-MM`. */
  readonly month: string
  /** Reveals charged to the month's allowance. */
  readonly used: number
  /** The plan's monthly ceiling as it reads now; `null`: none. */
  readonly limit: number | null
  readonly rows: ReadonlyArray<LedgerRow>
  /** What to pass as `after` for the month's next page; `null` on its last page. */
  readonly next: string | null
  /** The month before, back to the account's first; `null` at it. */
  readonly earlier: string | null
  /** The month after, up to the current one; `null` at it. */
  readonly later: string | null
}

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/

const shift = (month: string, by: number): string => monthOf(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)) - 1 + by, 1))

export class AccountReveals extends Context.Service<AccountReveals, {
  /**
   * A page of the account's ledger for `month` (`YYYY-MM`; default the current month), after the
   * entry `after` names. A month that is not `YYYY-MM`, or after the current one, is refused.
   */
  readonly ledger: (
    caller: Caller,
    month: string | undefined,
    after: string | undefined
  ) => Effect.Effect<LedgerMonth, AccountNotFound | InvalidRequest>
}>()("@dropshelf/core/AccountReveals") {
  static readonly layer = Layer.effect(
    AccountReveals,
    Effect.gen(function*() {
      const operators = yield* Operators
      const directory = yield* Directory
      const reveals = yield* RevealStore
      const accounts = yield* AccountStore

      const ledger = Effect.fn("AccountReveals.ledger")(function*(caller: Caller, requested: string | undefined, after: string | undefined) {
        const now = yield* Clock.currentTimeMillis
        const current = monthOf(now)
        const month = requested ?? current
        if (!MONTH.test(month) || month > current) {
          return yield* new InvalidRequest({ parameter: "month", message: "month is YYYY-MM, not after the current month" })
        }
        const account = yield* accounts.find(caller.accountId)
        if (account === undefined) return yield* new AccountNotFound({ accountId: caller.accountId })
        const page: KeysetPage<RevealEntry> = yield* operators.listReveals(caller.accountId, month, { after, limit: LEDGER_PAGE })
        const rows = yield* Effect.forEach(page.data, (entry) =>
          directory.get(caller, entry.listingId).pipe(
            Effect.map((read): LedgerRow => ({ entry, domain: read.reader.disclosed ? read.listing.domain : null })),
            Effect.orElseSucceed((): LedgerRow => ({ entry, domain: null }))
          ), { concurrency: "unbounded" })
        const first = monthOf(account.createdAt)
        return {
          month,
          used: yield* reveals.usedIn(caller.accountId, month),
          limit: caller.plan.revealsPerMonth,
          rows,
          next: page.next,
          earlier: month > first ? shift(month, -1) : null,
          later: month < current ? shift(month, 1) : null
        } satisfies LedgerMonth
      })

      return AccountReveals.of({ ledger })
    })
  )
}
