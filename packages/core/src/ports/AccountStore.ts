import { Context, type Effect } from "effect"
import type { AccountNotFound, EmailTaken } from "../domain/errors.ts"
import type { AccountId } from "../domain/Ids.ts"
import type { StoredPlan } from "../domain/Plan.ts"
import type { KeysetRequest } from "../domain/Keyset.ts"
import type { Instant } from "../domain/Time.ts"

export interface AccountRecord {
  readonly id: AccountId
  readonly name: string
  /** As set by the operator; `lapsed` reads as free. */
  readonly plan: StoredPlan
  readonly createdAt: Instant
  /** The owner's address (Email.decode), unique among accounts case aside; `null`: none set. */
  readonly email: string | null
}

export class AccountStore extends Context.Service<AccountStore, {
  readonly create: (request: {
    readonly name: string
    readonly plan: StoredPlan
    readonly at: Instant
    /** Absent or `null`: none. */
    readonly email?: string | null | undefined
  }) => Effect.Effect<AccountRecord, EmailTaken>
  readonly setPlan: (id: string, plan: StoredPlan) => Effect.Effect<AccountRecord, AccountNotFound>
  /** Sets (or with `null` clears) the owner's address; refused when another account has it, case aside. */
  readonly setEmail: (id: string, email: string | null) => Effect.Effect<AccountRecord, AccountNotFound | EmailTaken>
  readonly find: (id: string) => Effect.Effect<AccountRecord | undefined>
  /** The account whose owner has this address, case aside (Email.key); none: `undefined`. */
  readonly findByEmail: (email: string) => Effect.Effect<AccountRecord | undefined>
  /** Accounts in creation order (then id); `after` names an account (an unknown one: no rows). */
  readonly list: (page: KeysetRequest) => Effect.Effect<ReadonlyArray<AccountRecord>>
}>()("@dropshelf/core/AccountStore") {}
