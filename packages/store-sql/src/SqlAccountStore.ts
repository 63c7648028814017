import { AccountStore, Email, Errors, type Ids, type Keyset, type Plan } from "@dropshelf/core"
import { Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { KeyLookups } from "./KeyLookups.ts"
import { instant, textOrNull, toDate } from "./Rows.ts"

type Row = Record<string, unknown>

export const toAccount = (row: Row, prefix = ""): AccountStore.AccountRecord => ({
  id: row[`${prefix}id`] as Ids.AccountId,
  name: row[`${prefix}name`] as string,
  plan: row[`${prefix}plan`] as Plan.StoredPlan,
  createdAt: instant(row[`${prefix}created_at`]),
  email: textOrNull(row[`${prefix}email`])
})

/** The columns `toAccount` reads. */
export const ACCOUNT_COLUMNS = "id, name, plan, created_at, email"

/** A unique violation on the owner's address, as the domain's refusal; any other failure is a defect. */
const emailRefused = (email: string | null | undefined) => (error: SqlError.SqlError) =>
  error.reason._tag === "UniqueViolation" && email !== null && email !== undefined
    ? Effect.fail(new Errors.EmailTaken({ email }))
    : Effect.die(error)

export const newAccountId = () => `acct_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const keyLookups = yield* KeyLookups
  const columns = sql.literal(ACCOUNT_COLUMNS)

  const create = (request: {
    readonly name: string
    readonly plan: Plan.StoredPlan
    readonly at: number
    readonly email?: string | null | undefined
  }) =>
    sql<Row>`INSERT INTO accounts (id, name, plan, created_at, email)
      VALUES (${newAccountId()}, ${request.name}, ${request.plan}, ${toDate(request.at)}, ${request.email ?? null})
      RETURNING ${columns}`.pipe(
      Effect.map((rows) => toAccount(rows[0]!)),
      Effect.catchTag("SqlError", emailRefused(request.email))
    )

  const setEmail = (id: string, email: string | null) =>
    Effect.gen(function*() {
      const rows = yield* sql<Row>`UPDATE accounts SET email = ${email} WHERE id = ${id} RETURNING ${columns}`.pipe(
        Effect.catchTag("SqlError", emailRefused(email))
      )
      if (rows[0] === undefined) return yield* new Errors.AccountNotFound({ accountId: id })
      return toAccount(rows[0])
    })

  const setPlan = (id: string, plan: Plan.StoredPlan) =>
    Effect.gen(function*() {
      const rows = yield* sql<Row>`UPDATE accounts SET plan = ${plan} WHERE id = ${id}
        RETURNING ${columns}`.pipe(Effect.orDie)
      keyLookups.invalidate()
      if (rows[0] === undefined) return yield* new Errors.AccountNotFound({ accountId: id })
      return toAccount(rows[0])
    })

  const find = (id: string) =>
    sql<Row>`SELECT ${columns} FROM accounts WHERE id = ${id}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toAccount(rows[0]))),
      Effect.orDie
    )

  // By the unique index on lower(email) (migration 0016): Email.key is lower case.
  const findByEmail = (email: string) =>
    sql<Row>`SELECT ${columns} FROM accounts WHERE lower(email) = ${Email.key(email)}`.pipe(
      Effect.map((rows) => (rows[0] === undefined ? undefined : toAccount(rows[0]))),
      Effect.orDie
    )

  const list = (page: Keyset.KeysetRequest) =>
    sql<Row>`SELECT ${columns} FROM accounts
      WHERE ${
      page.after === undefined
        ? sql`TRUE`
        : sql`(created_at, id COLLATE "C") > (SELECT created_at, id COLLATE "C" FROM accounts WHERE id = ${page.after})`
    }
      ORDER BY created_at, id COLLATE "C" LIMIT ${page.limit}`.pipe(
      Effect.map((rows) => rows.map((row) => toAccount(row))),
      Effect.orDie
    )

  return AccountStore.AccountStore.of({ create, setPlan, setEmail, find, findByEmail, list })
})

export const layer = Layer.effect(AccountStore.AccountStore, make)
