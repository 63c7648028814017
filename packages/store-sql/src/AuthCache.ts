import type { AccountStore, KeyStore } from "@dropshelf/core"
import { Context, Layer } from "effect"

/*
 * Every authenticated request looks its key up by digest, and the answer (the key and its
 * account's plan) changes only when an operator revokes a key or changes a plan. So a look-up
 * is reused for a few seconds, and dropped at once when anything that would change it is
 * written: by this process directly, by another process through the database's
 * `dropshelf_auth` notification (StoreSql.layerServer listens). The spec asks for the plan to
 * be refreshed at least once a minute; TTL_MS is the bound when notifications are lost.
 */

/** How long a look-up may be reused when no change was announced. */
export const TTL_MS = 10_000

/** The channel the database notifies on when a key is revoked or a plan changes (migration 0002). */
export const CHANNEL = "dropshelf_auth"

/** At most this many keys are remembered; past it the cache starts over. */
const MAX_ENTRIES = 10_000

export interface Found {
  readonly key: KeyStore.KeyRecord
  readonly account: AccountStore.AccountRecord
}

interface Entry {
  readonly found: Found
  readonly expiresAt: number
}

/** Times are the reader's own (monotonic) milliseconds: the cache never trusts a test clock. */
export interface Shape {
  /** A look-up made within the TTL and not invalidated since. */
  readonly get: (digest: string) => Found | undefined
  /** The current generation: a look-up read from the database before a change must not be stored after it. */
  readonly generation: () => number
  /** Stores a look-up read while `generation` was current; ignored if anything was invalidated since. */
  readonly set: (digest: string, found: Found, generation: number) => void
  /** A key's `last_used_at` was written: remembered look-ups show it too. */
  readonly touched: (keyId: string, at: number) => void
  /** Forgets everything: a key was revoked or a plan changed, here or elsewhere. */
  readonly invalidate: () => void
}

export const make = (now: () => number = () => performance.now()): Shape => {
  const entries = new Map<string, Entry>()
  let generation = 0
  return {
    get: (digest) => {
      const entry = entries.get(digest)
      if (entry === undefined) return undefined
      if (entry.expiresAt <= now()) {
        entries.delete(digest)
        return undefined
      }
      return entry.found
    },
    generation: () => generation,
    set: (digest, found, readAt) => {
      if (readAt !== generation) return
      if (entries.size >= MAX_ENTRIES) entries.clear()
      entries.set(digest, { found, expiresAt: now() + TTL_MS })
    },
    touched: (keyId, at) => {
      for (const [digest, entry] of entries) {
        if (entry.found.key.id === keyId) {
          entries.set(digest, { ...entry, found: { ...entry.found, key: { ...entry.found.key, lastUsedAt: at } } })
        }
      }
    },
    invalidate: () => {
      generation++
      entries.clear()
    }
  }
}

/** One cache per storage layer, shared by the key store (reads, revokes) and the account store (plan changes). */
export class AuthCache extends Context.Service<AuthCache, Shape>()("@dropshelf/store-sql/AuthCache") {
  static readonly layer = Layer.sync(AuthCache, () => make())
}
