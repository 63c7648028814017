import { Context, type Effect } from "effect"
import type { KeyLimitReached, KeyNotFound } from "../domain/errors.ts"
import type { KeyId } from "../domain/Ids.ts"
import type { Instant } from "../domain/Time.ts"
import type { AccountRecord } from "./AccountStore.ts"

export interface KeyRecord {
  /** `key_` and letters or digits: never a name the rate limiter counts anything else under. */
  readonly id: KeyId
  readonly accountId: string
  readonly name: string
  /** The recognisable, non-secret start of the key, unique. */
  readonly prefix: string
  /** SHA-256 of the whole secret, lowercase hex. The secret itself is never stored. */
  readonly digest: string
  readonly createdAt: Instant
  readonly lastUsedAt: Instant | null
  readonly revokedAt: Instant | null
}

export class KeyStore extends Context.Service<KeyStore, {
  /** Refuses when the account already has `liveLimit` unrevoked keys (checked atomically). */
  readonly create: (request: {
    readonly accountId: string
    readonly name: string
    readonly prefix: string
    readonly digest: string
    readonly liveLimit: number
    readonly at: Instant
  }) => Effect.Effect<KeyRecord, KeyLimitReached>
  /** The key with this digest and its account, revoked or not. */
  readonly findByDigest: (
    digest: string
  ) => Effect.Effect<{ readonly key: KeyRecord; readonly account: AccountRecord } | undefined>
  /** Whether any unrevoked key's prefix starts with `start` (taken literally, not as a pattern). */
  readonly anyLiveWithPrefix: (start: string) => Effect.Effect<boolean>
  readonly touch: (id: KeyId, at: Instant) => Effect.Effect<void>
  readonly revoke: (prefix: string, at: Instant) => Effect.Effect<KeyRecord, KeyNotFound>
}>()("@dropshelf/core/KeyStore") {}
