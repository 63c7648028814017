import { Clock, Context, Effect, Layer, Result } from "effect"
import { type Caller, Directory } from "../Directory.ts"
import type { FeaturedRequiresPro, HeldByOther, ListingNotFound } from "../domain/errors.ts"
import type { ReaderListing } from "../domain/Listing.ts"
import { planReveal, remainingReveals } from "../domain/RevealLedger.ts"
import { type Instant, monthOf, startOfNextMonth } from "../domain/Time.ts"
import { RevealStore } from "../ports/RevealStore.ts"

/*
 * The directory as a signed-in person reads it in the account area. Pages, reveals and holds are
 * `Directory.list`, `reveal` and `hold` with the person's caller (`Directory.callerOf`); what is
 * added here is what a page says before a reveal: whether it would spend one of the month's
 * reveals, told by the ledger's own rule (`RevealLedger.planReveal`).
 */

/** What revealing a listing would do now, before anything is spent. */
export type RevealOutlook =
  /** Revealed before: a repeat, free. */
  | { readonly _tag: "Repeat"; readonly revealedAt: Instant }
  /** A first reveal at no cost (an `open` listing, or a plan without a monthly ceiling). */
  | { readonly _tag: "Free" }
  /** A first reveal that spends one of the month's reveals: `remaining` of `limit` are left. */
  | { readonly _tag: "Charged"; readonly remaining: number; readonly limit: number; readonly resetsAt: Instant }
  /** A first reveal that would be refused, and why. */
  | { readonly _tag: "Refused"; readonly error: FeaturedRequiresPro | HeldByOther }

/** One listing as the person reads it, and what revealing it would do. */
export interface ListingOutlook {
  readonly listing: ReaderListing
  readonly reveal: RevealOutlook
}

export class DirectoryArea extends Context.Service<DirectoryArea, {
  /**
   * `Directory.get` for `caller`, with the reveal's outlook. It only reads: the month's allowance
   * is charged by `Directory.reveal` alone, atomically, so a reveal that races another may still
   * be refused `QuotaExhausted` after a `Charged` outlook.
   */
  readonly listing: (caller: Caller, id: string) => Effect.Effect<ListingOutlook, ListingNotFound>
}>()("@dropshelf/core/DirectoryArea") {
  /** Needs `Directory` and the `RevealStore`. */
  static readonly layer = Layer.effect(
    DirectoryArea,
    Effect.gen(function*() {
      const directory = yield* Directory
      const reveals = yield* RevealStore

      const listing = Effect.fn("DirectoryArea.listing")(function*(caller: Caller, id: string) {
        const read = yield* directory.get(caller, id)
        const now = yield* Clock.currentTimeMillis
        const existing = yield* reveals.find(caller.accountId, read.listing.id)
        const planned = planReveal({
          plan: caller.plan,
          tier: read.listing.tier,
          existing,
          heldByOtherUntil: read.reader.holdState === "other" ? read.reader.holdExpiresAt ?? undefined : undefined
        })
        const outlook = (): Effect.Effect<RevealOutlook> => {
          if (Result.isFailure(planned)) return Effect.succeed({ _tag: "Refused", error: planned.failure })
          const plan = planned.success
          if (plan._tag === "Repeat") return Effect.succeed({ _tag: "Repeat", revealedAt: plan.entry.revealedAt })
          const limit = caller.plan.revealsPerMonth
          if (!plan.charged || limit === null) return Effect.succeed({ _tag: "Free" })
          return Effect.map(reveals.usedIn(caller.accountId, monthOf(now)), (used): RevealOutlook => ({
            _tag: "Charged",
            remaining: remainingReveals(caller.plan, used) ?? limit,
            limit,
            resetsAt: startOfNextMonth(now)
          }))
        }
        return { listing: read, reveal: yield* outlook() } satisfies ListingOutlook
      })

      return DirectoryArea.of({ listing })
    })
  )
}
