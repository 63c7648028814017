import { Idempotency, IdempotencyStore } from "@dropshelf/core"
import { Effect } from "effect"

/** Idempotency keys by account and key; each method is one synchronous step, so `begin` is atomic. */
export const makeIdempotencyStore = Effect.sync(() => {
  const records = new Map<string, Idempotency.IdempotencyRecord>()
  const slot = (accountId: string, key: string) => `${accountId}\u0000${key}`
  const ownedBy = (run: IdempotencyStore.RunOf) => {
    const record = records.get(slot(run.accountId, run.key))
    return record !== undefined && record.startedAt === run.startedAt && record.outcome === null ? record : undefined
  }
  return IdempotencyStore.IdempotencyStore.of({
    begin: (request) =>
      Effect.sync(() => {
        const decision = Idempotency.decideBegin(records.get(slot(request.accountId, request.key)), request)
        if (decision._tag === "Run") {
          records.set(slot(request.accountId, request.key), {
            accountId: request.accountId,
            key: request.key,
            fingerprint: request.fingerprint,
            startedAt: request.now,
            outcome: null
          })
        }
        return decision
      }),
    complete: (run) =>
      Effect.sync(() => {
        const record = ownedBy(run)
        if (record === undefined) return false
        records.set(slot(run.accountId, run.key), { ...record, outcome: run.outcome })
        return true
      }),
    release: (run) =>
      Effect.sync(() => {
        if (ownedBy(run) !== undefined) records.delete(slot(run.accountId, run.key))
      }),
    find: (accountId, key) => Effect.sync(() => records.get(slot(accountId, key))),
    prune: (before) =>
      Effect.sync(() => {
        let pruned = 0
        for (const [name, record] of records) {
          if (record.startedAt < before) {
            records.delete(name)
            pruned++
          }
        }
        return pruned
      })
  })
})
