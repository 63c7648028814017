import { Clock, Effect, Metric } from "effect"
import * as DirectoryMetrics from "../DirectoryMetrics.ts"
import { holdStateOf, readerViewOf } from "../domain/Disclosure.ts"
import { ListingNotFound, QuotaExhausted } from "../domain/errors.ts"
import { type RevealedListingView, toListingView } from "../domain/Listing.ts"
import { allowanceAt, planReveal } from "../domain/RevealLedger.ts"
import { type Instant, startOfNextMonth, toIso } from "../domain/Time.ts"
import { AvailabilityCheck } from "../ports/AvailabilityCheck.ts"
import { ListingStore } from "../ports/ListingStore.ts"
import { RevealStore } from "../ports/RevealStore.ts"
import { span as useCase } from "../Spans.ts"
import type { Caller } from "./Authentication.ts"
import type { FindReadable } from "./Listings.ts"

/*
 * `Directory.reveal`: the ledger's rules (`RevealLedger.planReveal`), the availability check,
 * and the store's atomic charge of the month's allowance.
 */

export const make = (findReadable: FindReadable) => Effect.gen(function*() {
  const listings = yield* ListingStore
  const reveals = yield* RevealStore
  const availability = yield* AvailabilityCheck

  const reveal = Effect.fnUntraced(function*(caller: Caller, id: string) {
    const now = yield* Clock.currentTimeMillis
    const found = yield* findReadable(caller, id, now, caller.accountId)
    let listing = found.listing
    // The entry itself (its first instant) only for a repeat: a first reveal reads nothing more.
    const existing = found.revealed ? yield* reveals.find(caller.accountId, listing.id) : undefined
    const running = found.running
    const holdState = holdStateOf(caller.accountId, running)
    let plan = yield* Effect.fromResult(planReveal({
      plan: caller.plan,
      tier: listing.tier,
      existing,
      heldByOtherUntil: holdState === "other" ? running!.expiresAt : undefined
    }))
    let allowance = plan._tag === "First" && plan.charged ? allowanceAt(caller.plan, now) : undefined
    // The allowance looked spent; the unit may have gone to a concurrent reveal of this very
    // listing, and then this one is its repeat.
    const repeatOfConcurrent = Effect.flatMap(reveals.find(caller.accountId, listing.id), (entry) =>
      entry === undefined ? Effect.fail(new QuotaExhausted({ resetsAt: startOfNextMonth(now) })) : Effect.succeed(entry))
    // A cheap early refusal; the store's conditional charge below is what guarantees the ceiling.
    if (allowance !== undefined && (yield* reveals.usedIn(caller.accountId, allowance.month)) >= allowance.limit) {
      plan = { _tag: "Repeat", entry: yield* repeatOfConcurrent }
      allowance = undefined
    }
    const checked = yield* availability.check(listing.domain)
    if (checked._tag === "Registered") {
      yield* listings.delist([listing.id], "delisted")
      return yield* new ListingNotFound({ listingId: listing.id })
    }
    if (checked._tag === "Unregistered") {
      listing = (yield* listings.stampAvailability(listing.id, checked.checkedAt)) ?? listing
    }
    let revealedAt: Instant
    let first = false
    if (plan._tag === "Repeat") {
      revealedAt = plan.entry.revealedAt
    } else {
      const outcome = yield* reveals.record({
        accountId: caller.accountId,
        listingId: listing.id,
        at: now,
        charge: allowance
      })
      first = outcome._tag === "Recorded" && outcome.fresh
      revealedAt = outcome._tag === "AllowanceSpent" ? (yield* repeatOfConcurrent).revealedAt : outcome.entry.revealedAt
    }
    yield* Metric.update(first ? DirectoryMetrics.firstReveals : DirectoryMetrics.repeatReveals, 1)
    const view = toListingView(
      listing,
      readerViewOf({ plan: caller.plan, accountId: caller.accountId, tier: listing.tier, hold: running, revealed: true })
    )
    return { ...view, revealed_at: toIso(revealedAt) } satisfies RevealedListingView
  }, useCase("Directory.reveal"))

  return { reveal }
})
