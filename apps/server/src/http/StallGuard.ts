import { Context } from "effect"
import type { ServerResponse } from "node:http"

/**
 * How long a bulk snapshot's client may take no bytes while the server has bytes waiting for it
 * (`DROPSHELF_SNAPSHOT_IDLE_TIMEOUT_MS`): past it the connection is closed. A reader that stopped
 * reading would otherwise hold its database snapshot (on server PostgreSQL an open transaction,
 * which holds back vacuum) and one of the process's snapshot slots for as long as it keeps the
 * connection open.
 */
export const SnapshotIdleTimeoutMs = Context.Reference<number>("@dropshelf/server/SnapshotIdleTimeoutMs", {
  defaultValue: () => DEFAULT_SNAPSHOT_IDLE_TIMEOUT_MS
})

export const DEFAULT_SNAPSHOT_IDLE_TIMEOUT_MS = 60_000

/**
 * Destroys `response` once it has waited `idleMs` for its client to drain what was written, and
 * calls `onStall` first. A response that is merely slow to produce (a snapshot spooling its rows
 * before the first byte) is never cut: only bytes the client leaves unread count.
 */
export const closeWhenStalled = (response: ServerResponse, idleMs: number, onStall: () => void) => {
  let waitingSince: number | undefined
  const drained = () => {
    waitingSince = undefined
  }
  const check = setInterval(() => {
    if (!response.writableNeedDrain) return drained()
    const now = Date.now()
    waitingSince ??= now
    if (now - waitingSince < idleMs) return
    stop()
    onStall()
    response.destroy()
  }, Math.max(10, Math.min(1_000, Math.floor(idleMs / 4))))
  check.unref()
  const stop = () => {
    clearInterval(check)
    response.off("drain", drained)
  }
  response.on("drain", drained)
  response.once("close", stop)
}
