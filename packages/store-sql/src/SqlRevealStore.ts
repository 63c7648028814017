import { type Keyset, type RevealLedger, RevealStore, type Time } from "@dropshelf/core"
import { Effect, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as ReadReplicas from "./ReadReplicas.ts"
import { instant, int, toDate } from "./Rows.ts"
import * as SharedReads from "./SharedReads.ts"
import { StoreCaches } from "./StoreCaches.ts"

/*
 * The reveal ledger: one row per (account, listing), so a repeat finds the original and pays
 * nothing. A charged first reveal spends one unit of the month's allowance with a single
 * conditional upsert in the same READ COMMITTED transaction: concurrent reveals queue on the
 * usage row's lock and each re-checks `used < limit` against the committed count, so the
 * ceiling holds however many arrive at once.
 */

type Row = Record<string, unknown>

const toEntry = (row: Row): RevealLedger.RevealEntry => ({
  accountId: row.account_id as string,
  listingId: row.listing_id as string,
  revealedAt: instant(row.revealed_at),
  charged: row.charged === true
})

/** Rolls the transaction back: the allowance was spent, so nothing of this reveal stays. */
class AllowanceSpent {
  readonly _tag = "AllowanceSpent"
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const scope = yield* Scope.Scope
  const { sharedReads } = yield* StoreCaches
  const replicas = yield* ReadReplicas.ReadReplicas

  const find = (accountId: string, listingId: string) =>
    sql<Row>`SELECT account_id, listing_id, revealed_at, charged FROM reveals
      WHERE account_id = ${accountId} AND listing_id = ${listingId}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toEntry(rows[0]))),
      Effect.orDie
    )

  const revealedAmong = (accountId: string, listingIds: ReadonlyArray<string>) =>
    listingIds.length === 0
      ? Effect.succeed(new Set<string>())
      : sql<{ listing_id: string }>`SELECT listing_id FROM reveals
        WHERE account_id = ${accountId} AND listing_id = ANY(${[...listingIds]}::text[])`.pipe(
        Effect.map((rows): ReadonlySet<string> => new Set(rows.map((row) => row.listing_id))),
        Effect.orDie
      )

  const attempt = (request: RevealStore.RecordReveal) =>
    Effect.gen(function*() {
      const inserted = yield* sql<Row>`INSERT INTO reveals (account_id, listing_id, revealed_at, charged)
        VALUES (${request.accountId}, ${request.listingId}, ${toDate(request.at)}, ${request.charge !== undefined})
        ON CONFLICT (account_id, listing_id) DO NOTHING
        RETURNING account_id, listing_id, revealed_at, charged`
      if (inserted[0] === undefined) {
        // Another reveal of the same pair committed first (the insert waited for it): repeat.
        const existing = yield* sql<Row>`SELECT account_id, listing_id, revealed_at, charged FROM reveals
          WHERE account_id = ${request.accountId} AND listing_id = ${request.listingId}`
        return { _tag: "Recorded", entry: toEntry(existing[0]!), fresh: false } as const
      }
      const charge = request.charge
      if (charge !== undefined) {
        if (charge.limit <= 0) return yield* Effect.fail(new AllowanceSpent())
        // The month's first unit creates its row; a later one waits for the row's lock and sees
        // the committed count, so no two reveals take the last unit.
        const spent = yield* sql`INSERT INTO reveal_usage (account_id, month, used) VALUES (${request.accountId}, ${charge.month}, 1)
          ON CONFLICT (account_id, month) DO UPDATE SET used = reveal_usage.used + 1 WHERE reveal_usage.used < ${charge.limit}
          RETURNING used`
        if (spent.length === 0) return yield* Effect.fail(new AllowanceSpent())
      }
      return { _tag: "Recorded", entry: toEntry(inserted[0]), fresh: true } as const
    })

  /*
   * No look-up first: the directory records only a reveal it found no entry for, and a repeat
   * that raced it is found by the insert's conflict inside the transaction.
   */
  const record = (request: RevealStore.RecordReveal): Effect.Effect<RevealStore.RecordOutcome> =>
    sql.withTransaction(attempt(request)).pipe(
      Effect.ensuring(Effect.sync(() => replicas.wrote(request.accountId))),
      Effect.catchIf(
        (error): error is AllowanceSpent => error instanceof AllowanceSpent,
        () => Effect.succeed({ _tag: "AllowanceSpent" } as const)
      ),
      Effect.orDie,
      Effect.withSpan("SqlRevealStore.record")
    )

  /*
   * Every `/me` and every charged reveal asks a month's count: concurrent asks, of any accounts,
   * share one statement (SharedReads), so `/me` under load costs what a single read does. On a
   * read replica when one has replayed the account's last reveal through this process: a count
   * behind elsewhere only lets the early check of a reveal pass, and the charge refuses it.
   */
  const usageOn = (sql: SqlClient.SqlClient) => {
    const usedInOne = (accountId: string, month: string) =>
      sql<{ used: unknown }>`SELECT used FROM reveal_usage WHERE account_id = ${accountId} AND month = ${month}`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? 0 : int(rows[0].used))),
        Effect.orDie
      )
    const sharedUsage = SharedReads.make(scope, (batch: ReadonlyArray<readonly [accountId: string, month: string]>) =>
      sql<{ account_id: string; month: string; used: unknown }>`SELECT account_id, month, used FROM reveal_usage
        WHERE (account_id, month) IN (SELECT * FROM unnest(${batch.map((ask) => ask[0])}::text[], ${
        batch.map((ask) => ask[1])
      }::text[]))`.pipe(
        Effect.map((rows) => {
          const used = new Map(rows.map((row) => [`${row.account_id}\u0000${row.month}`, int(row.used)]))
          return batch.map(([accountId, month]) => used.get(`${accountId}\u0000${month}`) ?? 0)
        }),
        Effect.orDie
      ), sharedReads)
    return { usedInOne, sharedUsage }
  }
  const onPrimary = usageOn(sql)
  const onReplicas = replicas.replicas.map((replica) => usageOn(replica.sql))

  const usedIn = (accountId: string, month: string) =>
    SharedReads.unlessInTransaction(
      sql,
      ReadReplicas.route(replicas, replicas.floorOf(accountId), (replica) =>
        (replica === undefined ? onPrimary : onReplicas[replica.index]!).sharedUsage.read("usage", [accountId, month])),
      onPrimary.usedInOne(accountId, month)
    )

  const forAccount = (
    accountId: string,
    range: { readonly from: Time.Instant | undefined; readonly to: Time.Instant | undefined },
    page: Keyset.KeysetRequest
  ) =>
    sql<Row>`SELECT account_id, listing_id, revealed_at, charged FROM reveals
      WHERE account_id = ${accountId}
        AND ${range.from === undefined ? sql`TRUE` : sql`revealed_at >= ${toDate(range.from)}`}
        AND ${range.to === undefined ? sql`TRUE` : sql`revealed_at < ${toDate(range.to)}`}
        AND ${
      page.after === undefined
        ? sql`TRUE`
        : sql`(revealed_at, listing_id) > (SELECT revealed_at, listing_id FROM reveals
            WHERE account_id = ${accountId} AND listing_id = ${page.after})`
    }
      ORDER BY revealed_at, listing_id LIMIT ${page.limit}`.pipe(
      Effect.map((rows) => rows.map(toEntry)),
      Effect.orDie
    )

  return RevealStore.RevealStore.of({
    forAccount, find, revealedAmong, record, usedIn })
})

export const layer = Layer.effect(RevealStore.RevealStore, make)
