import type { AccountStore, KeyStore } from "@dropshelf/core"
import { Context, Effect, Layer } from "effect"
import { StoreCaches } from "./StoreCaches.ts"

/*
 * Who is this key: every authenticated request looks its key up by digest, and the answer (the
 * key and its account's plan, or that no such key exists) changes only when a key is created,
 * rotated or revoked or a plan changes. So an answer is reused for a few seconds, and all are
 * dropped at once when anything that would change one is written: by this process directly, by
 * another through the database's `dropshelf_auth` notification (StoreSql.layerServer listens).
 * An unknown and a revoked key are remembered alike, so a dead key costs one statement, not
 * one a request, and neither tells by its timing whether it ever lived. The spec asks for the
 * plan to be refreshed at least once a minute; TTL_MS is the bound when notifications are lost.
 */

/** How long an answer may be reused when no change was announced. */
export const TTL_MS = 10_000

/** The channel the database notifies on when a key is revoked or a plan changes (migration 0002). */
export const CHANNEL = "dropshelf_auth"

/** At most this many digests are remembered; past it the cache starts over. */
const MAX_ENTRIES = 10_000

/** A look-up's answer: the key and its account, or `undefined` when no key has the digest. */
export type Found = { readonly key: KeyStore.KeyRecord; readonly account: AccountStore.AccountRecord } | undefined

interface Entry {
  readonly found: Found
  readonly expiresAt: number
}

/** Times are the reader's own (monotonic) milliseconds: the cache never trusts a test clock. */
export interface Shape {
  /** An answer read within the TTL and not invalidated since, wrapped; `undefined` when none is kept. */
  readonly get: (digest: string) => { readonly found: Found } | undefined
  /** The current generation: an answer read from the database before a change must not be kept after it. */
  readonly generation: () => number
  /** Keeps an answer read while `generation` was current; ignored if anything was invalidated since. */
  readonly set: (digest: string, found: Found, generation: number) => void
  /** A key's `last_used_at` was written: remembered answers show it too. */
  readonly touched: (keyId: string, at: number) => void
  /** Forgets everything: a key was created, rotated or revoked or a plan changed, here or elsewhere. */
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
      return { found: entry.found }
    },
    generation: () => generation,
    set: (digest, found, readAt) => {
      if (readAt !== generation) return
      if (entries.size >= MAX_ENTRIES) entries.clear()
      entries.set(digest, { found, expiresAt: now() + TTL_MS })
    },
    touched: (keyId, at) => {
      for (const [digest, entry] of entries) {
        if (entry.found?.key.id === keyId) {
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

/** Keeps nothing: every look-up reads the database (StoreCaches.keyLookups off). */
export const none: Shape = {
  get: () => undefined,
  generation: () => 0,
  set: () => {},
  touched: () => {},
  invalidate: () => {}
}

/** One per storage layer, shared by the key store (reads, creates, revokes) and the account store (plan changes). */
export class KeyLookups extends Context.Service<KeyLookups, Shape>()("@dropshelf/store-sql/KeyLookups") {
  static readonly layer = Layer.effect(KeyLookups, Effect.gen(function*() {
    return (yield* StoreCaches).keyLookups ? make() : none
  }))
}
