import { Context, Effect, Layer } from "effect"
import { type KeysetPage, pageOf } from "../domain/Keyset.ts"
import type { SecurityEventRecord } from "../domain/SecurityEvent.ts"
import { SecurityLogStore } from "../ports/SecurityLogStore.ts"

/*
 * An account's security log as its owner reads it. The events are recorded by the use cases
 * that do what they tell (Operators' key use cases, Sessions), so the CLI's actions appear too.
 */

/** Events a page of the log shows. */
export const LOG_PAGE = 50

export class SecurityLog extends Context.Service<SecurityLog, {
  /** The account's events, the last first, after the event `after` names. */
  readonly events: (accountId: string, after: string | undefined) => Effect.Effect<KeysetPage<SecurityEventRecord>>
}>()("@dropshelf/core/SecurityLog") {
  static readonly layer = Layer.effect(
    SecurityLog,
    Effect.gen(function*() {
      const store = yield* SecurityLogStore
      const events = Effect.fn("SecurityLog.events")(function*(accountId: string, after: string | undefined) {
        const rows = yield* store.forAccount(accountId, { after, limit: LOG_PAGE + 1 })
        return pageOf(rows, LOG_PAGE, (event) => event.id)
      })
      return SecurityLog.of({ events })
    })
  )
}
