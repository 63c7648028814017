import { type SecurityEvent, SecurityLogStore } from "@dropshelf/core"
import { Effect } from "effect"

/** The security logs in memory: one array, appended to in order. */
export const make = () => {
  const events: Array<SecurityEvent.SecurityEventRecord> = []
  return SecurityLogStore.SecurityLogStore.of({
    record: (event) =>
      Effect.sync(() => {
        const record = { ...event, id: String(events.length + 1) }
        events.push(record)
        return record
      }),
    forAccount: (accountId, page) =>
      Effect.sync(() => {
        const after = page.after === undefined || !/^\d{1,18}$/.test(page.after) ? Infinity : Number(page.after)
        const found: Array<SecurityEvent.SecurityEventRecord> = []
        for (let index = events.length - 1; index >= 0 && found.length < page.limit; index--) {
          const event = events[index]!
          if (event.accountId === accountId && Number(event.id) < after) found.push(event)
        }
        return found
      })
  })
}
