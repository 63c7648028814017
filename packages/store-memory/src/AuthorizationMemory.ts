import { AuthorizationStore, type Time } from "@dropshelf/core"
import { Effect } from "effect"

/** The authorization server's documents in memory: one map by kind and id, scanned for the rarer look-ups. */
export const make = () => {
  interface Entry {
    readonly document: AuthorizationStore.AuthorizationDocument
    consumedAt: Time.Instant | null
  }
  const entries = new Map<string, Entry>()
  const keyOf = (kind: string, id: string) => `${kind}\u0000${id}`
  const live = (entry: Entry | undefined, at: Time.Instant) =>
    entry !== undefined && (entry.document.expiresAt === null || entry.document.expiresAt > at) ? entry : undefined
  const payloadOf = (entry: Entry | undefined) =>
    entry === undefined
      ? undefined
      : entry.consumedAt === null
      ? entry.document.payload
      : { ...(entry.document.payload as object), consumed: Math.floor(entry.consumedAt / 1000) }
  const findBy = (kind: string, at: Time.Instant, matches: (document: AuthorizationStore.AuthorizationDocument) => boolean) => {
    for (const entry of entries.values()) {
      if (entry.document.kind === kind && matches(entry.document) && live(entry, at)) return payloadOf(entry)
    }
    return undefined
  }
  return AuthorizationStore.AuthorizationStore.of({
    upsert: (document) =>
      Effect.sync(() => {
        entries.set(keyOf(document.kind, document.id), { document, consumedAt: null })
      }),
    find: (kind, id, at) => Effect.sync(() => payloadOf(live(entries.get(keyOf(kind, id)), at))),
    findByUid: (kind, uid, at) => Effect.sync(() => findBy(kind, at, (document) => document.uid === uid)),
    findByUserCode: (kind, userCode, at) => Effect.sync(() => findBy(kind, at, (document) => document.userCode === userCode)),
    consume: (kind, id, at) =>
      Effect.sync(() => {
        const entry = entries.get(keyOf(kind, id))
        if (entry !== undefined && entry.consumedAt === null) entry.consumedAt = at
      }),
    destroy: (kind, id) =>
      Effect.sync(() => {
        entries.delete(keyOf(kind, id))
      }),
    revokeGrant: (grantId) =>
      Effect.sync(() => {
        for (const [key, entry] of entries) if (entry.document.grantId === grantId) entries.delete(key)
      }),
    keep: (kind, id, payload) =>
      Effect.sync(() => {
        const key = keyOf(kind, id)
        const existing = entries.get(key)
        if (existing !== undefined) return existing.document.payload
        entries.set(key, { document: { kind, id, payload, expiresAt: null }, consumedAt: null })
        return payload
      }),
    prune: (at) =>
      Effect.sync(() => {
        let pruned = 0
        for (const [key, entry] of entries) {
          if (live(entry, at) === undefined) {
            entries.delete(key)
            pruned++
          }
        }
        return pruned
      })
  })
}
