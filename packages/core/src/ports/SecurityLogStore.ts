import { Context, type Effect } from "effect"
import type { KeysetRequest } from "../domain/Keyset.ts"
import type { NewSecurityEvent, SecurityEventRecord } from "../domain/SecurityEvent.ts"

/** The accounts' security logs (domain/SecurityEvent.ts): append-only, read newest first. */
export class SecurityLogStore extends Context.Service<SecurityLogStore, {
  /** Appends an event; the store gives it its id, a decimal number above every id it gave before. */
  readonly record: (event: NewSecurityEvent) => Effect.Effect<SecurityEventRecord>
  /**
   * The account's events, the last recorded first (by id, descending); `after` names the id of
   * the last event of the previous page.
   */
  readonly forAccount: (accountId: string, page: KeysetRequest) => Effect.Effect<ReadonlyArray<SecurityEventRecord>>
}>()("@dropshelf/core/SecurityLogStore") {}
