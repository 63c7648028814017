import { Effect } from "effect"
import { AccountStore, Operators, RevealStore, Sessions } from "@dropshelf/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addListings, call, listing, memoryAdapter, newId, type Running, start } from "./harness.ts"
import { send, signIn } from "./accountSupport.ts"
import { accountWithKey, revealedListing } from "./accountApiSupport.ts"

/*
 * The reveal ledger's page over HTTP: what the API revealed appears with its name and whether it
 * was charged, the month's use against the plan's limit, paging within a month and between months.
 */

const DAY = 86_400_000

describe("the reveals page", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter)
  })
  afterAll(() => server.close())

  const month = (instant: number) => new Date(instant).toISOString().slice(0, 7)

  it("shows reveals made through the API, charged or not, against the month's limit", async () => {
    const person = await accountWithKey(server, "free", "revealer")
    const session = await signIn(server, person.token)
    const charged = await revealedListing(server, person.secret)
    const open = listing({ domain: `open-${newId().toLowerCase()}.com`, tier: "open" })
    await addListings(server, [open])
    expect((await call(server, "POST", `/api/v1/domains/${open.id}/reveal`, { key: person.secret })).status).toBe(200)
    const other = await accountWithKey(server, "free", "someone-else")
    const theirs = await revealedListing(server, other.secret)

    const shown = await send(server, "GET", "/account/reveals", { session })
    expect(shown.status).toBe(200)
    expect(shown.text).toContain(`1 of 10 reveals used in ${month(Date.now())}`)
    const rows = [...shown.text.matchAll(/<tr>\s*<td data-label="Revealed">.*?<\/tr>/gs)].map(([row]) => row)
    expect(rows).toHaveLength(2)
    expect(rows.find((row) => row.includes(charged.domain))).toContain(`<td data-label="Charged">yes</td>`)
    expect(rows.find((row) => row.includes(open.domain))).toContain(`<td data-label="Charged">no</td>`)
    expect(shown.text).not.toContain(theirs.domain)
    expect(shown.text).not.toContain("Earlier month")
    expect(shown.text).not.toContain("Later month")
  })

  it("pages through a month of more than one page", async () => {
    const person = await accountWithKey(server, "business", "many-reveals")
    const session = await signIn(server, person.token)
    for (let i = 0; i < 52; i++) await revealedListing(server, person.secret)
    const first = await send(server, "GET", "/account/reveals", { session })
    // A plan without a ceiling is charged nothing, as the overview counts it.
    expect(first.text).toContain("0 charged (no monthly limit)")
    expect(first.text.match(/data-label="Revealed"/g)).toHaveLength(50)
    const more = /<a href="([^"]+)">More of \d{4}-\d{2}<\/a>/.exec(first.text)![1]!.replaceAll("&amp;", "&")
    const second = await send(server, "GET", more, { session })
    expect(second.status).toBe(200)
    expect(second.text.match(/data-label="Revealed"/g)).toHaveLength(2)
    expect(second.text).not.toContain("More of")
  })

  it("goes back a month to the account's first, and forward to this one; other months are refused", async () => {
    const now = Date.now()
    const lastMonth = month(Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() - 1, 15))
    const twoBack = month(Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() - 2, 15))
    const { accountId, token } = await server.run(Effect.gen(function*() {
      const created = yield* (yield* AccountStore.AccountStore).create({
        name: "old-timer",
        plan: "pro",
        email: null,
        at: Date.parse(`${lastMonth}-02T00:00:00Z`)
      })
      const item = listing({ domain: `last-month-${newId().toLowerCase()}.com` })
      yield* (yield* Operators.Operators).upsertListings([item])
      yield* (yield* RevealStore.RevealStore).record({
        accountId: created.id,
        listingId: item.id,
        at: Date.parse(`${lastMonth}-10T12:00:00Z`),
        charge: { month: lastMonth, limit: 100 }
      })
      const link = yield* (yield* Sessions.Sessions).issueSignInLink(created.id)
      return { accountId: created.id, token: link.token, domain: item.domain }
    }))
    expect(accountId).toBeTruthy()
    const session = await signIn(server, token)
    const current = await send(server, "GET", "/account/reveals", { session })
    expect(current.text).toContain(`No reveals in ${month(now)}.`)
    expect(current.text).toContain(`<a href="/account/reveals?month=${lastMonth}">Earlier month (${lastMonth})</a>`)
    const earlier = await send(server, "GET", `/account/reveals?month=${lastMonth}`, { session })
    expect(earlier.text).toContain(`1 of 500 reveals used in ${lastMonth}`)
    expect(earlier.text).toContain("last-month-")
    expect(earlier.text).not.toContain("Earlier month")
    expect(earlier.text).toContain(`<a href="/account/reveals?month=${month(now)}">Later month (${month(now)})</a>`)
    // Before the account existed there is nothing, but asking is no error.
    expect((await send(server, "GET", `/account/reveals?month=${twoBack}`, { session })).status).toBe(200)
    for (const refused of ["2026-13", "last", month(now + 40 * DAY)]) {
      const answer = await send(server, "GET", `/account/reveals?month=${refused}`, { session })
      expect(answer.status, refused).toBe(400)
      expect(answer.text).toContain("Choose a month as YYYY-MM")
    }
  })
})
