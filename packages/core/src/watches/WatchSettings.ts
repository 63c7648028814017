import { Context } from "effect"

/** How the watch worker runs; the server reads them from the environment (docs/operations.md). */
export interface WatchSettings {
  /** `DROPSHELF_WEBHOOKS_ALLOW_PRIVATE`: http and loopback or private receivers allowed. */
  readonly allowPrivate: boolean
  /** How often the worker looks for due events and deliveries when it found none. */
  readonly pollMs: number
  /** Events per matching round, deliveries per delivery round. */
  readonly batch: number
  /** How long a worker holds a delivery it took; past it another worker may take it. Must exceed 15 s. */
  readonly leaseMs: number
  /** Deliveries in flight at once per worker. */
  readonly concurrency: number
  /** `DROPSHELF_WATCH_RETENTION_DAYS`: matches (with their deliveries) and attempts older than this are pruned. */
  readonly retentionDays: number
}

export const DEFAULT_SETTINGS: WatchSettings = {
  allowPrivate: false,
  pollMs: 1_000,
  batch: 500,
  leaseMs: 60_000,
  concurrency: 16,
  retentionDays: 90
}

export const WatchSettingsRef = Context.Reference<WatchSettings>("@dropshelf/core/WatchSettings", {
  defaultValue: () => DEFAULT_SETTINGS
})
