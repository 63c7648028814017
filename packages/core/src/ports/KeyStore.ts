import { Context, type Effect } from "effect"
import type { KeyLimitReached, KeyNotFound } from "../domain/errors.ts"
import type { KeyId } from "../domain/Ids.ts"
import type { KeysetRequest } from "../domain/Keyset.ts"
import type { Scope } from "../domain/Scope.ts"
import type { Instant } from "../domain/Time.ts"
import type { AccountRecord } from "./AccountStore.ts"

/**
 * A key that is an OAuth grant: an application a person connected by signing in. Its secret is
 * the grant's id, which only the authorization server holds; its tokens are what the
 * application sends.
 */
export interface Application {
  readonly clientId: string
  readonly clientName: string
  readonly grantId: string
  readonly scopes: ReadonlyArray<Scope>
}

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
  /** From this instant on the key reads as revoked; `null`: it never expires. */
  readonly expiresAt: Instant | null
  /** Set when the key is a connected application's grant; absent or `null` for an API key. */
  readonly application?: Application | null | undefined
}

/** A new key's fields, computed by the core: the secret itself never reaches a store. */
export interface NewKey {
  readonly name: string
  readonly prefix: string
  readonly digest: string
  /** Absent or `null`: never expires. */
  readonly expiresAt?: Instant | null | undefined
  readonly application?: Application | null | undefined
}

export class KeyStore extends Context.Service<KeyStore, {
  /** Refuses when the account already has `liveLimit` keys live at `at` (checked atomically). */
  readonly create: (request: NewKey & {
    readonly accountId: string
    readonly liveLimit: number
    readonly at: Instant
  }) => Effect.Effect<KeyRecord, KeyLimitReached>
  /** The key with this digest and its account, revoked or not. */
  readonly findByDigest: (
    digest: string
  ) => Effect.Effect<{ readonly key: KeyRecord; readonly account: AccountRecord } | undefined>
  readonly touch: (id: KeyId, at: Instant) => Effect.Effect<void>
  readonly revoke: (prefix: string, at: Instant) => Effect.Effect<KeyRecord, KeyNotFound>
  /** The key with this display prefix and its account, whatever its state. */
  readonly findByPrefix: (
    prefix: string
  ) => Effect.Effect<{ readonly key: KeyRecord; readonly account: AccountRecord } | undefined>
  /** The account's keys, every state, in creation order (then id); `after` names a key id. */
  readonly forAccount: (accountId: string, page: KeysetRequest) => Effect.Effect<ReadonlyArray<KeyRecord>>
  /**
   * Atomically: the key `prefix` (live at `at`, else `KeyNotFound`) gets a successor on its
   * account, and expires at `retireAt` unless it already expires sooner. The ceiling counts the
   * account's live keys other than the one retiring, so a full account can still rotate.
   */
  readonly rotate: (request: {
    readonly prefix: string
    readonly successor: NewKey
    readonly liveLimit: number
    readonly retireAt: Instant
    readonly at: Instant
  }) => Effect.Effect<{ readonly retired: KeyRecord; readonly successor: KeyRecord }, KeyNotFound | KeyLimitReached>
}>()("@dropshelf/core/KeyStore") {}
