import { AccountStore, Errors, type Ids, type Keyset, type Plan } from "@dropshelf/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { KeyLookups } from "./KeyLookups.ts"
import { instant, toDate } from "./Rows.ts"

type Row = Record<string, unknown>

export const toAccount = (row: Row, prefix = ""): AccountStore.AccountRecord => ({
  id: row[`${prefix}id`] as Ids.AccountId,
  name: row[`${prefix}name`] as string,
  plan: row[`${prefix}plan`] as Plan.StoredPlan,
  createdAt: instant(row[`${prefix}created_at`])
})

export const newAccountId = () => `acct_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const keyLookups = yield* KeyLookups

  const create = (request: { readonly name: string; readonly plan: Plan.StoredPlan; readonly at: number }) =>
    sql<Row>`INSERT INTO accounts (id, name, plan, created_at)
      VALUES (${newAccountId()}, ${request.name}, ${request.plan}, ${toDate(request.at)})
      RETURNING id, name, plan, created_at`.pipe(
      Effect.map((rows) => toAccount(rows[0]!)),
      Effect.orDie
    )

  const setPlan = (id: string, plan: Plan.StoredPlan) =>
    Effect.gen(function*() {
      const rows = yield* sql<Row>`UPDATE accounts SET plan = ${plan} WHERE id = ${id}
        RETURNING id, name, plan, created_at`.pipe(Effect.orDie)
      keyLookups.invalidate()
      if (rows[0] === undefined) return yield* new Errors.AccountNotFound({ accountId: id })
      return toAccount(rows[0])
    })

  const find = (id: string) =>
    sql<Row>`SELECT id, name, plan, created_at FROM accounts WHERE id = ${id}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toAccount(rows[0]))),
      Effect.orDie
    )

  const list = (page: Keyset.KeysetRequest) =>
    sql<Row>`SELECT id, name, plan, created_at FROM accounts
      WHERE ${
      page.after === undefined
        ? sql`TRUE`
        : sql`(created_at, id COLLATE "C") > (SELECT created_at, id COLLATE "C" FROM accounts WHERE id = ${page.after})`
    }
      ORDER BY created_at, id COLLATE "C" LIMIT ${page.limit}`.pipe(
      Effect.map((rows) => rows.map((row) => toAccount(row))),
      Effect.orDie
    )

  return AccountStore.AccountStore.of({ create, setPlan, find, list })
})

export const layer = Layer.effect(AccountStore.AccountStore, make)
