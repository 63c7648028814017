import { Errors, Hold, HoldStore, type Ids, type Keyset, type Time } from "@dropshelf/core"
import { Effect, Layer, Result, Scope } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import type { Fragment } from "effect/sql/Statement"
import { instant, instantOrNull, int, sqlState, storable, toDate } from "./Rows.ts"
import * as ReadReplicas from "./ReadReplicas.ts"
import * as SharedReads from "./SharedReads.ts"
import { StoreCaches } from "./StoreCaches.ts"

/*
 * Holds. The rules are the core's (`Hold.decideAcquire`, `decideExtend`, `decideEnd`); the
 * database supplies the atomicity they assume:
 *
 * - one running hold per listing across all accounts: the exclusion constraint on
 *   (listing_id, [held_at, ends_at)), so two accounts racing for a listing cannot both insert;
 * - the per-account cap and the cooldown: every acquire of one account runs under a
 *   transaction-scoped advisory lock keyed by the account, taken before the snapshot is read
 *   (READ COMMITTED then sees every hold the previous holder of the lock committed);
 * - one extension, one end: conditional UPDATEs that only match a running, unextended hold.
 */

type Row = Record<string, unknown>
type HoldRecord = Hold.HoldRecord

/** A hold's columns, in the order every read selects them (`toHoldAt` takes them apart by position). */
export const HOLD_COLUMN_NAMES = ["id", "listing_id", "account_id", "held_at", "expires_at", "extended", "ended_at", "outcome"] as const
const HOLD_COLUMNS = HOLD_COLUMN_NAMES.join(", ")

/** A hold from a row read with `.values`, whose columns from `start` on are `HOLD_COLUMN_NAMES`. */
export const toHoldAt = (row: ReadonlyArray<unknown>, start: number): HoldRecord => ({
  id: row[start] as Ids.HoldId,
  listingId: row[start + 1] as string,
  accountId: row[start + 2] as string,
  heldAt: instant(row[start + 3]),
  expiresAt: instant(row[start + 4]),
  extended: row[start + 5] === true,
  endedAt: instantOrNull(row[start + 6]),
  outcome: (row[start + 7] ?? null) as Hold.HoldOutcome | null
})

/** A hold from a row read as an object, keyed by its column names. */
export const toHold = (row: Row): HoldRecord => toHoldAt(HOLD_COLUMN_NAMES.map((name) => row[name]), 0)

/** The insert lost the race for the listing: another account's hold now runs on it. */
class ListingTaken {
  readonly _tag = "ListingTaken"
}

/** Advisory-lock namespace of per-account hold decisions. */
const ACCOUNT_HOLD_LOCK = 0x68_6f_6c_64 // "hold"

const EXCLUSION_VIOLATION = "23P01"

/**
 * A running hold at `at` (a timestamp parameter, or a fragment giving one): not ended and not
 * yet expired. The one definition, for the statements here and for the hold a listing page
 * joins (PageStatement).
 */
export const runningAt = (sql: SqlClient.SqlClient, at: Date | Fragment) => sql`outcome IS NULL AND expires_at > ${at}`

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const scope = yield* Scope.Scope
  const { sharedReads } = yield* StoreCaches
  const columns = sql.literal(HOLD_COLUMNS)

  /** Running at `now`: not ended by its holder and not past its scheduled end (`Hold.isRunningAt`). */
  const runningOnListing = (listingId: string, now: Time.Instant) =>
    sql<Row>`SELECT ${columns} FROM holds
      WHERE listing_id = ${listingId} AND ${runningAt(sql, toDate(now))}
      ORDER BY held_at DESC LIMIT 1`.pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : toHold(rows[0]))))

  const attemptAcquire = (request: HoldStore.AcquireHold) =>
    Effect.gen(function*() {
      const { accountId, listingId, now } = request
      const at = toDate(now)
      yield* sql`SELECT pg_advisory_xact_lock(${ACCOUNT_HOLD_LOCK}, hashtext(${accountId}))`
      const running = yield* runningOnListing(listingId, now)
      const counted = yield* sql<{ running: unknown }>`SELECT count(*) AS running FROM holds
        WHERE account_id = ${accountId} AND ${runningAt(sql, at)}`
      // The most recently ended own hold on the listing: its end starts the cooldown.
      const lastOwn = yield* sql<Row>`SELECT ${columns} FROM holds
        WHERE account_id = ${accountId} AND listing_id = ${listingId}
          AND (outcome IS NOT NULL OR expires_at <= ${at})
        ORDER BY ends_at DESC LIMIT 1`
      const decision = Hold.decideAcquire({
        accountId,
        plan: request.plan,
        now,
        runningOnListing: running,
        accountRunning: int(counted[0]!.running),
        lastOwnHold: lastOwn[0] === undefined ? undefined : toHold(lastOwn[0])
      })
      if (Result.isFailure(decision)) return yield* Effect.fail(decision.failure)
      if (decision.success._tag === "Existing") return { hold: decision.success.hold, created: false }
      // ON CONFLICT DO NOTHING with no target also covers the exclusion constraint: a hold
      // another account committed meanwhile turns the insert into no row, not an error.
      const inserted = yield* sql<Row>`INSERT INTO holds (id, listing_id, account_id, held_at, expires_at)
        VALUES (${request.id ?? `h_${crypto.randomUUID().replaceAll("-", "")}`}, ${listingId}, ${accountId},
          ${toDate(decision.success.heldAt)}, ${toDate(decision.success.expiresAt)})
        ON CONFLICT DO NOTHING
        RETURNING ${columns}`
      if (inserted[0] === undefined) return yield* Effect.fail(new ListingTaken())
      return { hold: toHold(inserted[0]), created: true }
    })

  const acquire = (
    request: HoldStore.AcquireHold,
    retries = 3
  ): Effect.Effect<{ readonly hold: HoldRecord; readonly created: boolean }, Errors.HeldByOther | Errors.HoldCapReached | Errors.HoldCooldown> =>
    sql.withTransaction(attemptAcquire(request)).pipe(
      Effect.catchIf(
        (error): error is ListingTaken | SqlError => error instanceof ListingTaken || sqlState(error) === EXCLUSION_VIOLATION,
        () =>
          Effect.gen(function*() {
            const running = yield* runningOnListing(request.listingId, request.now)
            // The winner's hold already ended again: the listing is free, so try once more.
            if (running === undefined && retries > 0) return yield* acquire(request, retries - 1)
            return yield* new Errors.HeldByOther({ expiresAt: running?.expiresAt ?? request.now })
          })
      ),
      Effect.catchTag("SqlError", Effect.die),
      Effect.withSpan("SqlHoldStore.acquire")
    )

  const findOwn = (accountId: string, holdId: string) =>
    storable(holdId)
      ? sql<Row>`SELECT ${columns} FROM holds WHERE id = ${holdId} AND account_id = ${accountId}`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : toHold(rows[0]))),
        Effect.orDie
      )
      : Effect.succeed(undefined)

  /** Why a conditional update matched nothing, in the core's words. */
  const refusal = <E>(
    accountId: string,
    holdId: string,
    decide: (hold: HoldRecord) => Result.Result<HoldRecord, E>
  ) =>
    Effect.gen(function*() {
      const hold = yield* findOwn(accountId, holdId)
      if (hold === undefined) return yield* new Errors.HoldNotFound({ holdId })
      const decision = decide(hold)
      if (Result.isFailure(decision)) return yield* Effect.fail(decision.failure)
      // The hold changed between the update and this read: report it as it is now.
      return decision.success
    })

  const extend = (request: { readonly accountId: string; readonly holdId: string; readonly now: Time.Instant; readonly extensionMs: number }) =>
    Effect.gen(function*() {
      if (!storable(request.holdId)) return yield* new Errors.HoldNotFound({ holdId: request.holdId })
      const rows = yield* sql<Row>`UPDATE holds
        SET expires_at = expires_at + make_interval(secs => ${request.extensionMs / 1000}::float8), extended = true
        WHERE id = ${request.holdId} AND account_id = ${request.accountId}
          AND NOT extended AND ${runningAt(sql, toDate(request.now))}
        RETURNING ${columns}`.pipe(Effect.orDie)
      if (rows[0] !== undefined) return toHold(rows[0])
      return yield* refusal(request.accountId, request.holdId, (hold) => Hold.decideExtend(hold, request.now, request.extensionMs))
    }).pipe(Effect.withSpan("SqlHoldStore.extend"))

  const end = (request: { readonly accountId: string; readonly holdId: string; readonly now: Time.Instant; readonly outcome: Hold.HoldOutcome }) =>
    Effect.gen(function*() {
      if (!storable(request.holdId)) return yield* new Errors.HoldNotFound({ holdId: request.holdId })
      const at = toDate(request.now)
      const rows = yield* sql<Row>`UPDATE holds SET ended_at = ${at}, outcome = ${request.outcome}
        WHERE id = ${request.holdId} AND account_id = ${request.accountId}
          AND ${runningAt(sql, at)}
        RETURNING ${columns}`.pipe(Effect.orDie)
      if (rows[0] !== undefined) return toHold(rows[0])
      return yield* refusal(request.accountId, request.holdId, (hold) => Hold.decideEnd(hold, request.now, request.outcome))
    }).pipe(Effect.withSpan("SqlHoldStore.end"))

  const runningAmong = (listingIds: ReadonlyArray<string>, now: Time.Instant) =>
    listingIds.length === 0
      ? Effect.succeed(new Map<string, HoldRecord>())
      : sql<Row>`SELECT ${columns} FROM holds
        WHERE listing_id = ANY(${[...listingIds]}::text[]) AND ${runningAt(sql, toDate(now))}`.pipe(
        Effect.map((rows): ReadonlyMap<string, HoldRecord> => new Map(rows.map((row) => [row.listing_id as string, toHold(row)]))),
        Effect.orDie
      )

  /*
   * A single listing's running hold is what every read and reveal of it asks; concurrent asks
   * share a statement (SharedReads), run at the latest clock among them: each answer is still
   * the holds at an instant inside its own call.
   */
  const sharedRunning = SharedReads.make(scope, (batch: ReadonlyArray<{ readonly listingId: string; readonly now: Time.Instant }>) => {
    const { listingId, now } = SharedReads.latest(batch, (ask) => ask.now)
    return Effect.map(runningAmong([listingId], now), (running) => batch.map(() => running))
  }, sharedReads)

  const runningOn = (listingIds: ReadonlyArray<string>, now: Time.Instant) =>
    listingIds.length === 1
      ? SharedReads.unlessInTransaction(
        sql,
        sharedRunning.read(listingIds[0]!, { listingId: listingIds[0]!, now }),
        runningAmong(listingIds, now)
      )
      : runningAmong(listingIds, now)

  interface AccountAsk {
    readonly accountId: string
    readonly endedSince: Time.Instant
    readonly now: Time.Instant
  }

  /**
   * The holds of every ask's account, at the latest clock among them, since the earliest
   * `endedSince`; each ask then keeps its account's holds running at that clock or ended at or
   * after its own `endedSince`, the statement's order kept.
   */
  const forAccounts = (batch: ReadonlyArray<AccountAsk>) => {
    const { now } = SharedReads.latest(batch, (ask) => ask.now)
    const since = batch.reduce((earliest, ask) => Math.min(earliest, ask.endedSince), Infinity)
    return sql<Row>`SELECT ${columns} FROM holds
      WHERE account_id = ANY(${[...new Set(batch.map((ask) => ask.accountId))]}::text[])
        AND ((${runningAt(sql, toDate(now))}) OR COALESCE(ended_at, expires_at) >= ${toDate(since)})
      ORDER BY held_at DESC, id COLLATE "C" DESC`.pipe(
      Effect.map((rows) => {
        const holds = rows.map((row) => toHold(row))
        return batch.map((ask) =>
          holds.filter((hold) =>
            hold.accountId === ask.accountId &&
            (Hold.isRunningAt(hold, now) || (hold.endedAt ?? hold.expiresAt) >= ask.endedSince)
          )
        )
      }),
      Effect.orDie
    )
  }

  /*
   * Every `/holds` asks its account's holds: concurrent asks, of any accounts, share one
   * statement (SharedReads), as `/me`'s reveal counts do.
   */
  const sharedForAccounts = SharedReads.makeOutsideTransactions(sql, scope, forAccounts, sharedReads)

  const forAccount = (accountId: string, endedSince: Time.Instant, now: Time.Instant) =>
    sharedForAccounts("forAccount", { accountId, endedSince, now })

  const countRunning = (accountId: string, now: Time.Instant) =>
    sql<{ running: unknown }>`SELECT count(*) AS running FROM holds
      WHERE account_id = ${accountId} AND ${runningAt(sql, toDate(now))}`.pipe(
      Effect.map((rows) => int(rows[0]!.running)),
      Effect.orDie
    )

  const list = (
    filter: { readonly accountId: string | undefined; readonly runningAt: Time.Instant | undefined },
    page: Keyset.KeysetRequest
  ) =>
    sql<Row>`SELECT ${columns} FROM holds
      WHERE ${filter.accountId === undefined ? sql`TRUE` : sql`account_id = ${filter.accountId}`}
        AND ${filter.runningAt === undefined ? sql`TRUE` : runningAt(sql, toDate(filter.runningAt))}
        AND ${
      page.after === undefined
        ? sql`TRUE`
        : sql`(held_at, id COLLATE "C") > (SELECT held_at, id COLLATE "C" FROM holds WHERE id = ${page.after})`
    }
      ORDER BY held_at, id COLLATE "C" LIMIT ${page.limit}`.pipe(
      Effect.map((rows) => rows.map((row) => toHold(row))),
      Effect.orDie
    )

  // Once a write has ended, the account's reads wait for a replica that has replayed it (ReadReplicas.ts).
  const replicas = yield* ReadReplicas.ReadReplicas
  const noting = <A extends { readonly accountId: string }, B, E>(write: (request: A) => Effect.Effect<B, E>) => (request: A) =>
    write(request).pipe(Effect.ensuring(Effect.sync(() => replicas.wrote(request.accountId))))

  return HoldStore.HoldStore.of({
    acquire: noting((request: HoldStore.AcquireHold) => acquire(request)),
    extend: noting(extend),
    end: noting(end),
    findOwn,
    runningOn,
    forAccount,
    countRunning,
    list
  })
})

export const layer = Layer.effect(HoldStore.HoldStore, make)
