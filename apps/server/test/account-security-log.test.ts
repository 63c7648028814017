import { Effect } from "effect"
import { Operators, SecurityLogStore } from "@dropshelf/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { memoryAdapter, type Running, start } from "./harness.ts"
import { accountWithLink, csrfOf, linkFor, send, signIn } from "./accountSupport.ts"

/*
 * The security log over HTTP: key events recorded by the operator's use cases (what the CLI
 * runs) and by the account area alike, sign-ins and sign-outs, one account's only, in pages,
 * and a kind recorded by another part shown as it is stored.
 */

describe("the security log page", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter)
  })
  afterAll(() => server.close())

  /** The rows of the log's table: [what, detail]. */
  const rowsOf = (page: string) =>
    [...page.matchAll(/<td data-label="What">([^<]*)<\/td>\s*<td data-label="Detail">([^<]*)<\/td>/g)].map(([, what, detail]) => [what, detail.replaceAll("&gt;", ">")])

  it("tells key and session events, from the operator and from the account area, the latest first", async () => {
    const { account, token } = await accountWithLink(server, "pro", "logged")
    const operator = await server.run(Operators.Operators.use((operators) => operators.createKey(account.id, "from-cli")))
    const session = await signIn(server, token)
    const keys = await send(server, "GET", "/account/keys", { session })
    const csrf = csrfOf(keys.text)
    expect((await send(server, "POST", "/account/keys", { session, form: { csrf, name: "from-page", expires: "never" } })).status).toBe(200)
    expect((await send(server, "POST", `/account/keys/${operator.key.id}/revoke`, { session, form: { csrf } })).status).toBe(200)
    const other = await signIn(server, await linkFor(server, account.id))
    expect((await send(server, "POST", "/signout", { session: other, form: { csrf: csrfOf((await send(server, "GET", "/account", { session: other })).text) } })).status).toBe(303)

    const log = await send(server, "GET", "/account/security", { session })
    expect(log.status).toBe(200)
    const rows = rowsOf(log.text)
    expect(rows).toEqual([
      ["Signed out", ""],
      ["Signed in", "with a one-time link"],
      ["Key revoked", `${operator.key.prefix} (from-cli)`],
      ["Key created", expect.stringMatching(/^dsk_\w+ \(from-page\)$/)],
      ["Signed in", "with a one-time link"],
      ["Key created", `${operator.key.prefix} (from-cli)`]
    ])

    const stranger = await accountWithLink(server, "pro", "stranger")
    const theirs = await send(server, "GET", "/account/security", { session: await signIn(server, stranger.token) })
    expect(rowsOf(theirs.text)).toEqual([["Signed in", "with a one-time link"]])
  })

  it("a rotation and signing out everywhere are told; an unknown kind is shown as stored", async () => {
    const { account, token } = await accountWithLink(server, "pro", "rotated")
    const made = await server.run(Operators.Operators.use((operators) => operators.createKey(account.id, "ci")))
    const session = await signIn(server, token)
    const csrf = csrfOf((await send(server, "GET", "/account/keys", { session })).text)
    const rotated = await send(server, "POST", `/account/keys/${made.key.id}/rotate`, { session, form: { csrf } })
    expect(rotated.status).toBe(200)
    await server.run(Effect.flatMap(SecurityLogStore.SecurityLogStore, (store) =>
      store.record({ accountId: account.id, kind: "recovery.codes_made", at: Date.now(), detail: "<b>laptop</b>" })))
    const [[what, detail], [rotation, about]] = rowsOf((await send(server, "GET", "/account/security", { session })).text)
    expect([what, detail]).toEqual(["recovery.codes_made", "&lt;b>laptop&lt;/b>"])
    expect(rotation).toBe("Key rotated")
    expect(about).toMatch(new RegExp(`^${made.key.prefix} \\(ci\\) → dsk_\\w+$`))

    const second = await signIn(server, await linkFor(server, account.id))
    const ended = await send(server, "POST", "/account/sessions/end-all", { session: second, form: { csrf: csrfOf((await send(server, "GET", "/account", { session: second })).text) } })
    expect(ended.status).toBe(303)
    const again = await signIn(server, await linkFor(server, account.id))
    expect(rowsOf((await send(server, "GET", "/account/security", { session: again })).text).slice(0, 2)).toEqual([
      ["Signed in", "with a one-time link"],
      ["Signed out everywhere", "2 sessions ended"]
    ])
  })

  it("pages back through older events", async () => {
    const { account, token } = await accountWithLink(server, "business", "busy")
    await server.run(Effect.flatMap(SecurityLogStore.SecurityLogStore, (store) =>
      Effect.forEach(Array.from({ length: 55 }, (_, i) => i), (i) =>
        store.record({ accountId: account.id, kind: "key.created", at: Date.now(), detail: `key ${i}` }))))
    const session = await signIn(server, token)
    const first = await send(server, "GET", "/account/security", { session })
    expect(rowsOf(first.text)).toHaveLength(50)
    const older = /<a href="([^"]+)">Older events<\/a>/.exec(first.text)![1]!
    const rest = rowsOf((await send(server, "GET", older, { session })).text)
    expect(rest).toEqual([["Key created", "key 5"], ["Key created", "key 4"], ["Key created", "key 3"], ["Key created", "key 2"], ["Key created", "key 1"], ["Key created", "key 0"]])
  })
})
