import { Errors, Listing, type Plan, type Time, Watch, WatchStore } from "@dropshelf/core"
import { Effect } from "effect"

/*
 * Watches in memory. Every operation is one synchronous step, so a round of matching, a claim
 * of deliveries or a limit check is atomic as the SQL store's transactions make it. Change
 * events come from the listing store in the same step as the write (`written`).
 */

type WatchRecord = WatchStore.WatchRecord
type Instant = Time.Instant

interface Event extends Watch.DueEvent {
  readonly seq: number
}

interface Job extends WatchStore.DeliveryJob {
  readonly leaseUntil: Instant | null
}

interface StoredMatch extends WatchStore.MatchRecord {
  readonly generation: number
}

export const make = (options: {
  readonly planOf: (accountId: string) => Plan.StoredPlan | undefined
  readonly findListing: (id: string) => Listing.ListingRecord | undefined
  readonly allListings: () => Iterable<Listing.ListingRecord>
}) => {
  const watches = new Map<string, WatchRecord>()
  const events: Array<Event> = []
  const generations = new Map<string, number>()
  const matches: Array<StoredMatch> = []
  const matchKeys = new Set<string>()
  const jobs = new Map<string, Job>()
  const attempts: Array<WatchStore.AttemptRecord & { readonly watchId: string }> = []
  let sequence = 0
  let matchIds = 0

  const matchKey = (watchId: string, listingId: string, generation: number) => `${watchId}\u0000${listingId}\u0000${generation}`

  /** Called by the listing store on every write of a row, in the same step. */
  const written = (before: Listing.ListingRecord | undefined, after: Listing.ListingRecord) => {
    if (before !== undefined && Listing.isTombstone(before.status) && !Listing.isTombstone(after.status)) {
      generations.set(after.id, (generations.get(after.id) ?? 0) + 1)
    }
    // Only while some watch exists: a directory nobody watches keeps no queue.
    if (watches.size === 0) return
    events.push(
      before === undefined
        ? { seq: ++sequence, listingId: after.id, dueAt: after.updatedAt, kind: "insert" }
        : { seq: ++sequence, listingId: after.id, dueAt: after.updatedAt, kind: "update", previous: before }
    )
  }

  const own = (accountId: string, watchId: string) => {
    const watch = watches.get(watchId)
    return watch !== undefined && watch.accountId === accountId ? watch : undefined
  }

  const store = WatchStore.WatchStore.of({
    create: (watch, limit) =>
      Effect.suspend(() => {
        const count = [...watches.values()].filter((existing) => existing.accountId === watch.accountId).length
        if (count >= limit) return Effect.fail(new Errors.WatchLimitReached({ limit }))
        const first = watches.size === 0
        watches.set(watch.id, watch)
        if (first) {
          // Nothing was recorded while no watch existed (Watch.catchUpFrom).
          const from = Watch.catchUpFrom(watch.createdAt)
          for (const row of options.allListings()) {
            if (row.status === "active" && row.discoveredAt > from) {
              events.push({ seq: ++sequence, listingId: row.id, dueAt: row.updatedAt, kind: "change" })
            }
          }
        }
        return Effect.succeed(watch)
      }),
    forAccount: (accountId) =>
      Effect.sync(() =>
        [...watches.values()].filter((watch) => watch.accountId === accountId).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
      ),
    find: (accountId, watchId) => Effect.sync(() => own(accountId, watchId)),
    update: (accountId, watchId, change) =>
      Effect.sync(() => {
        const current = own(accountId, watchId)
        if (current === undefined) return undefined
        const next = change(current)
        watches.set(watchId, next)
        return next
      }),
    remove: (accountId, watchId) =>
      Effect.sync(() => {
        if (own(accountId, watchId) === undefined) return false
        watches.delete(watchId)
        for (let i = matches.length - 1; i >= 0; i--) {
          const match = matches[i]!
          if (match.watchId !== watchId) continue
          matches.splice(i, 1)
          matchKeys.delete(matchKey(match.watchId, match.listingId, match.generation))
          jobs.delete(match.id)
        }
        for (let i = attempts.length - 1; i >= 0; i--) if (attempts[i]!.watchId === watchId) attempts.splice(i, 1)
        return true
      }),
    matches: (watchId, afterSeq, limit) =>
      Effect.sync(() => matches.filter((match) => match.watchId === watchId && (afterSeq === undefined || match.seq > afterSeq)).slice(0, limit)),
    findMatch: (watchId, matchId) => Effect.sync(() => matches.find((match) => match.watchId === watchId && match.id === matchId)),
    attempts: (watchId, limit) =>
      Effect.sync(() =>
        attempts.filter((attempt) => attempt.watchId === watchId).sort((a, b) => b.at - a.at || b.attempt - a.attempt).slice(0, limit)
          .map(({ watchId: _, ...attempt }) => attempt)
      ),
    findDelivery: (watchId, eventId) =>
      Effect.sync(() => {
        const job = jobs.get(eventId)
        if (job === undefined || job.watchId !== watchId) return undefined
        const { leaseUntil: _, ...delivery } = job
        return delivery
      }),
    resend: (watchId, eventId, at) =>
      Effect.sync(() => {
        const job = jobs.get(eventId)
        if (job === undefined || job.watchId !== watchId) return false
        jobs.set(eventId, { ...job, state: "pending", nextAttemptAt: at, manual: true, leaseUntil: null })
        return true
      }),

    matchRound: ({ limit, now, plan }) =>
      Effect.sync(() => {
        const due = events.filter((event) => event.dueAt <= now).sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq).slice(0, limit)
        if (due.length === 0) return { events: 0, matches: 0 }
        const taken = new Set(due.map((event) => event.seq))
        for (let i = events.length - 1; i >= 0; i--) if (taken.has(events[i]!.seq)) events.splice(i, 1)
        const candidates: Array<WatchStore.CandidateRow> = []
        for (const watch of watches.values()) {
          const accountPlan = options.planOf(watch.accountId)
          if (watch.paused || accountPlan === undefined) continue
          candidates.push({ watchId: watch.id, accountId: watch.accountId, plan: accountPlan, query: watch.query, createdAt: watch.createdAt })
        }
        const round = plan(
          due.map((event) => ({
            event: { listingId: event.listingId, dueAt: event.dueAt, kind: event.kind, previous: event.previous },
            listing: options.findListing(event.listingId),
            generation: generations.get(event.listingId) ?? 0
          })),
          candidates
        )
        let recorded = 0
        for (const match of round.matches) {
          const key = matchKey(match.watchId, match.listingId, match.generation)
          const watch = watches.get(match.watchId)
          if (matchKeys.has(key) || watch === undefined) continue
          matchKeys.add(key)
          const seq = ++matchIds
          const id = match.id ?? `msg_${seq.toString(36).padStart(10, "0")}`
          const stored: StoredMatch = { id, seq, watchId: match.watchId, listingId: match.listingId, matchedAt: now, generation: match.generation }
          matches.push(stored)
          recorded++
          if (watch.webhook !== null) {
            jobs.set(id, {
              eventId: id,
              watchId: watch.id,
              listingId: match.listingId,
              matchedAt: now,
              attempts: 0,
              state: "pending",
              nextAttemptAt: now,
              manual: false,
              leaseUntil: null
            })
          }
        }
        for (const later of round.followUps) events.push({ seq: ++sequence, listingId: later.listingId, dueAt: later.dueAt, kind: "clock" })
        return { events: due.length, matches: recorded }
      }),
    pendingEvents: Effect.sync(() => ({
      count: events.length,
      nextDueAt: events.length === 0 ? null : Math.min(...events.map((event) => event.dueAt))
    })),

    pendingDeliveries: Effect.sync(() => {
      const pending = [...jobs.values()].filter((job) => job.state === "pending")
      return {
        count: pending.length,
        oldestMatchedAt: pending.length === 0 ? null : Math.min(...pending.map((job) => job.matchedAt))
      }
    }),

    claimDeliveries: ({ leaseUntil, limit, now }) =>
      Effect.sync(() => {
        const claimed: Array<WatchStore.ClaimedDelivery> = []
        const due = [...jobs.values()].filter((job) => job.state === "pending" && job.nextAttemptAt <= now && (job.leaseUntil === null || job.leaseUntil <= now))
          .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || (a.eventId < b.eventId ? -1 : 1))
        for (const job of due) {
          if (claimed.length >= limit) break
          const watch = watches.get(job.watchId)
          const accountPlan = watch === undefined ? undefined : options.planOf(watch.accountId)
          if (watch === undefined || accountPlan === undefined || watch.paused || watch.webhook === null || watch.webhook.state !== "active") continue
          jobs.set(job.eventId, { ...job, leaseUntil })
          const { leaseUntil: _, ...delivery } = job
          claimed.push({ job: delivery, watch, accountPlan })
        }
        return claimed
      }),
    releaseLeases: Effect.sync(() => {
      let released = 0
      for (const job of jobs.values()) {
        if (job.leaseUntil === null) continue
        jobs.set(job.eventId, { ...job, leaseUntil: null })
        released++
      }
      return released
    }),
    finishAttempt: (attempt, outcome) =>
      Effect.sync(() => {
        const job = jobs.get(attempt.eventId)
        if (job === undefined) return
        attempts.push({ ...attempt, watchId: job.watchId })
        const attemptsMade = job.attempts + 1
        switch (outcome._tag) {
          case "Delivered":
            jobs.set(job.eventId, { ...job, attempts: attemptsMade, state: "delivered", manual: false, leaseUntil: null })
            return
          case "Retry":
            jobs.set(job.eventId, { ...job, attempts: attemptsMade, nextAttemptAt: outcome.at, leaseUntil: null })
            return
          case "Failed":
            jobs.set(job.eventId, { ...job, attempts: attemptsMade, state: "failed", manual: false, leaseUntil: null })
            return
          case "Exhausted":
          case "Gone": {
            jobs.set(job.eventId, { ...job, attempts: attemptsMade, state: "failed", manual: false, leaseUntil: null })
            const watch = watches.get(job.watchId)
            if (watch?.webhook != null) {
              watches.set(watch.id, {
                ...watch,
                webhook: { ...watch.webhook, state: outcome._tag === "Gone" ? "disabled" : "paused", stateReason: outcome.reason }
              })
            }
          }
        }
      }),
    prune: (before) =>
      Effect.sync(() => {
        let prunedMatches = 0
        let prunedAttempts = 0
        const gone = new Set<string>()
        for (let i = matches.length - 1; i >= 0; i--) {
          const match = matches[i]!
          if (match.matchedAt >= before) continue
          matches.splice(i, 1)
          matchKeys.delete(matchKey(match.watchId, match.listingId, match.generation))
          jobs.delete(match.id)
          gone.add(match.id)
          prunedMatches++
        }
        for (let i = attempts.length - 1; i >= 0; i--) {
          const attempt = attempts[i]!
          if (attempt.at >= before && !gone.has(attempt.eventId)) continue
          attempts.splice(i, 1)
          // Counted as the SQL store counts them: by age (a pruned match's later attempts go uncounted).
          if (attempt.at < before) prunedAttempts++
        }
        return { matches: prunedMatches, attempts: prunedAttempts }
      })
  })

  return { store, written }
}
