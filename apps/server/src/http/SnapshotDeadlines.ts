import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Context } from "effect"
import type { HttpServerRequest } from "effect/http"
import { ServerResponse } from "node:http"

/**
 * How long a bulk snapshot's connection may last: `idleMs`, how long its client may leave bytes
 * the server wrote unread (`DROPSHELF_SNAPSHOT_IDLE_TIMEOUT_MS`), and `maxMs`, how long it may
 * last in all (`DROPSHELF_SNAPSHOT_MAX_MS`). Past either the connection is closed. A snapshot
 * holds its database snapshot (on server PostgreSQL an open transaction, which holds back vacuum)
 * and one of the process's snapshot slots until it ends: a reader that stopped reading, or one
 * that trickles, would otherwise hold both for as long as it likes.
 */
export interface SnapshotDeadlines {
  readonly idleMs: number
  readonly maxMs: number
}

export const DEFAULT_SNAPSHOT_DEADLINES: SnapshotDeadlines = { idleMs: 60_000, maxMs: 30 * 60_000 }

export const SnapshotDeadlines = Context.Reference<SnapshotDeadlines>("@dropshelf/server/SnapshotDeadlines", {
  defaultValue: () => DEFAULT_SNAPSHOT_DEADLINES
})

/**
 * The Node response a request's streamed body is written to, when it is an HTTP/1.1 one: what
 * the deadlines watch and the drain waits on.
 */
export const streamedResponseOf = (request: HttpServerRequest.HttpServerRequest): ServerResponse | undefined => {
  const raw = NodeHttpServerRequest.toServerResponse(request)
  return raw instanceof ServerResponse ? raw : undefined
}

/**
 * Destroys `response` once it has waited `idleMs` for its client to drain what was written, or
 * once it has lasted `maxMs`, and calls `onCut` with the reason first. A response that is merely
 * slow to produce (a snapshot spooling its rows before the first byte) is not cut for being
 * idle: only bytes the client leaves unread count.
 */
export const closeAtDeadlines = (response: ServerResponse, deadlines: SnapshotDeadlines, onCut: (reason: string) => void) => {
  let waitingSince: number | undefined
  const drained = () => {
    waitingSince = undefined
  }
  const cut = (reason: string) => {
    stop()
    onCut(reason)
    response.destroy()
  }
  const check = setInterval(() => {
    if (!response.writableNeedDrain) return drained()
    const now = Date.now()
    waitingSince ??= now
    if (now - waitingSince >= deadlines.idleMs) cut(`its client took no bytes for ${deadlines.idleMs} ms`)
  }, Math.max(10, Math.min(1_000, Math.floor(deadlines.idleMs / 4))))
  const whole = setTimeout(() => cut(`it lasted ${deadlines.maxMs} ms, the most a snapshot may`), deadlines.maxMs)
  check.unref()
  whole.unref()
  const stop = () => {
    clearInterval(check)
    clearTimeout(whole)
    response.off("drain", drained)
  }
  response.on("drain", drained)
  response.once("close", stop)
}
