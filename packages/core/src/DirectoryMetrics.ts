import { Metric } from "effect"

/*
 * The directory's own counts, kept where the operations happen so REST and MCP count alike.
 * Effect's metrics are values in the process's registry: exporting them (OTLP, Prometheus) is
 * the server's business, not the core's.
 */

/** Reveals answered, `dropshelf.reveal.kind` `first` (a new ledger entry) or `repeat` (free again). */
const reveals = (kind: "first" | "repeat") =>
  Metric.counter("dropshelf.reveals", {
    description: "Reveals answered, by kind: first (a new ledger entry) or repeat",
    incremental: true,
    attributes: { "dropshelf.reveal.kind": kind }
  })
export const firstReveals = reveals("first")
export const repeatReveals = reveals("repeat")

/** Webhook deliveries not yet acknowledged, retries included (the watch worker samples it). */
export const pendingDeliveries = Metric.gauge("dropshelf.webhooks.pending", {
  description: "Webhook deliveries not yet acknowledged, retries included"
})

/** How long the oldest unacknowledged delivery's match has waited, in seconds (0 when none waits). */
export const oldestPendingAge = Metric.gauge("dropshelf.webhooks.oldest_pending_age", {
  description: "Seconds since the match of the oldest unacknowledged webhook delivery"
})

/** Holds started. */
export const holds = Metric.counter("dropshelf.holds", {
  description: "Holds started",
  incremental: true
})
