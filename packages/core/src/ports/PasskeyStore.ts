import { Context, type Effect } from "effect"
import type { ChallengeRecord, PasskeyRecord } from "../domain/Passkey.ts"
import type { Instant } from "../domain/Time.ts"

/**
 * Passkeys of the account area and the challenges of their ceremonies. The rules are
 * Passkey.ts's and Passkeys.ts's; a store takes a challenge atomically, so that of two requests
 * answering one challenge only one gets it.
 */
export class PasskeyStore extends Context.Service<PasskeyStore, {
  /** Keeps a new challenge; challenges expired before `challenge.createdAt` may be dropped then. */
  readonly addChallenge: (challenge: ChallengeRecord) => Effect.Effect<void>
  /** Atomically removes the challenge `id` and returns it, expired or not; `undefined` once taken. */
  readonly takeChallenge: (id: string) => Effect.Effect<ChallengeRecord | undefined>
  /** Adds a passkey; `false` (nothing changed) when a passkey with its credential id exists. */
  readonly addPasskey: (passkey: PasskeyRecord) => Effect.Effect<boolean>
  /** The passkey with this credential id, whatever its account. */
  readonly findPasskey: (id: string) => Effect.Effect<PasskeyRecord | undefined>
  /** The account's passkeys, oldest first. */
  readonly listPasskeys: (accountId: string) => Effect.Effect<ReadonlyArray<PasskeyRecord>>
  /** Records a sign-in with the passkey `id` at `at`, with the authenticator's new counter. */
  readonly usePasskey: (id: string, counter: number, at: Instant) => Effect.Effect<void>
  /** Deletes the account's passkey `id`; the record deleted, or `undefined` when the account has none of that id. */
  readonly deletePasskey: (accountId: string, id: string) => Effect.Effect<PasskeyRecord | undefined>
}>()("@dropshelf/core/PasskeyStore") {}
