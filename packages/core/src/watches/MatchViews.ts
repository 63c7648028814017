import { Effect } from "effect"
import { isReadableAt, readerViewOf, revealsOf } from "../domain/Disclosure.ts"
import { isListingId } from "../domain/Ids.ts"
import { type ListingView, toListingView } from "../domain/Listing.ts"
import type { PlanLimits } from "../domain/Plan.ts"
import { type Instant, toIso } from "../domain/Time.ts"
import type { MatchView } from "../domain/WatchView.ts"
import { ListingStore } from "../ports/ListingStore.ts"
import type { MatchRecord } from "../ports/WatchStore.ts"

/*
 * A match as its watch's account reads it: the owner's matches page and the worker's deliveries
 * render a match's listing when it is read or delivered, not when it matched.
 */

/** A match with its listing as the account on `plan` reads it at `now` (null when it cannot). */
export type MatchViewOf = (
  accountId: string,
  plan: PlanLimits,
  match: Pick<MatchRecord, "id" | "listingId" | "matchedAt">,
  now: Instant
) => Effect.Effect<MatchView>

export const make = Effect.gen(function*() {
  const listings = yield* ListingStore

  /**
   * The listing as an account on `plan` reads it at `now`: null when it cannot (gone,
   * inactive, inside the delay). The row, its running hold and the account's reveal in one
   * look-up, a single read's.
   */
  const readAs = Effect.fnUntraced(function*(accountId: string, plan: PlanLimits, listingId: string, now: Instant) {
    if (!isListingId(listingId)) return null
    // Latest: a webhook sends it, about a change its match has just seen.
    const found = yield* listings.findForReader(listingId, { at: now, revealsOf: revealsOf(plan, accountId), latest: true })
    if (found === undefined) return null
    const { listing } = found
    if (!isReadableAt(listing, plan, now)) return null
    return toListingView(
      listing,
      readerViewOf({ plan, accountId, tier: listing.tier, hold: found.running, revealed: found.revealed })
    ) satisfies ListingView
  })

  const matchView = (accountId: string, plan: PlanLimits, match: Pick<MatchRecord, "id" | "listingId" | "matchedAt">, now: Instant) =>
    Effect.map(readAs(accountId, plan, match.listingId, now), (listing): MatchView => ({
      id: match.id,
      matched_at: toIso(match.matchedAt),
      listing
    }))

  return { matchView: matchView satisfies MatchViewOf }
})
