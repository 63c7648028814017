import { DAY, type Instant } from "./Time.ts"

/*
 * How far back the since feed reaches (docs/decisions/0011-since-horizon.md). Tombstones are
 * what tell a consumer that a row left; once they are pruned, changes since an older instant can
 * no longer be told in full, so a `since` older than the horizon is refused and the consumer
 * resynchronises with a full run.
 */

/** The horizon when the operator sets none (`DROPSHELF_SINCE_HORIZON_DAYS`). */
export const DEFAULT_HORIZON_DAYS = 30
/** The settings an operator may choose, in whole days. */
export const MIN_HORIZON_DAYS = 1
export const MAX_HORIZON_DAYS = 3650

/**
 * A run whose first page was inside the horizon may follow its cursors for this much longer:
 * a long pull that started in time is never refused halfway.
 */
export const RUN_GRACE_MS = DAY

/** Tombstones outlive the oldest `since` any request is accepted with by this much more. */
export const PRUNE_MARGIN_MS = DAY

/**
 * The oldest `since` accepted at `now`: the horizon for the first page of a run, the horizon
 * and the run's grace for a page that follows a cursor. The instant itself is accepted.
 */
export const oldestAcceptedSince = (now: Instant, horizonDays: number, followsCursor: boolean): Instant =>
  now - horizonDays * DAY - (followsCursor ? RUN_GRACE_MS : 0)

export const isAccepted = (since: Instant, now: Instant, horizonDays: number, followsCursor: boolean): boolean =>
  since >= oldestAcceptedSince(now, horizonDays, followsCursor)

/**
 * Tombstones last changed before this instant may be pruned at `now`: later than the horizon,
 * the grace and a margin, so every `since` accepted up to now still finds each tombstone at or
 * after it, and a run's cursor never names a pruned row.
 */
export const pruneBefore = (now: Instant, horizonDays: number): Instant =>
  oldestAcceptedSince(now, horizonDays, true) - PRUNE_MARGIN_MS
