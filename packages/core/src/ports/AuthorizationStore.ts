import { Context, type Effect } from "effect"
import type { Instant } from "../domain/Time.ts"

/*
 * What the OAuth authorization server keeps between requests: registered clients, sign-in
 * interactions, authorization codes, access and refresh tokens, grants. Each is a JSON document
 * of its library's own shape, found by kind and id, gone once past `expiresAt`. The core reads
 * none of them; it only revokes a grant's documents when its key is revoked.
 */

export interface AuthorizationDocument {
  readonly kind: string
  readonly id: string
  /** The document as the authorization server wrote it. */
  readonly payload: unknown
  /** `null`: kept until destroyed. */
  readonly expiresAt: Instant | null
  /** The grant it belongs to (codes, tokens; a grant's own document carries its own id). */
  readonly grantId?: string | undefined
  /** A second id it is found by (an interaction session's `uid`). */
  readonly uid?: string | undefined
  /** A third id it is found by (a device flow's `userCode`). */
  readonly userCode?: string | undefined
}

export class AuthorizationStore extends Context.Service<AuthorizationStore, {
  /** Writes the document, replacing any of the same kind and id. */
  readonly upsert: (document: AuthorizationDocument) => Effect.Effect<void>
  /**
   * The document's payload, with `consumed` (epoch seconds) added once `consume` marked it;
   * `undefined` when absent or expired at `at`.
   */
  readonly find: (kind: string, id: string, at: Instant) => Effect.Effect<unknown>
  readonly findByUid: (kind: string, uid: string, at: Instant) => Effect.Effect<unknown>
  readonly findByUserCode: (kind: string, userCode: string, at: Instant) => Effect.Effect<unknown>
  /** Marks the document used (a code exchanged, a refresh token rotated); the first mark stays. */
  readonly consume: (kind: string, id: string, at: Instant) => Effect.Effect<void>
  readonly destroy: (kind: string, id: string) => Effect.Effect<void>
  /** Deletes every document of the grant, the grant's own included: its tokens stop working. */
  readonly revokeGrant: (grantId: string) => Effect.Effect<void>
  /** The document of this kind and id, written with `payload` first if there was none (one writer wins). */
  readonly keep: (kind: string, id: string, payload: unknown) => Effect.Effect<unknown>
  /** Deletes documents expired at `at`; how many. */
  readonly prune: (at: Instant) => Effect.Effect<number>
}>()("@dropshelf/core/AuthorizationStore") {}
