import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { memoryAdapter, type Running, start } from "./harness.ts"
import { csrfOf, send, signIn } from "./accountSupport.ts"
import { accountWithKey, apiHolds, heldThroughApi } from "./accountApiSupport.ts"

/*
 * The holds page over HTTP as a browser sends it: it lists what GET /api/v1/holds lists, its
 * forms extend and end holds under the API's rules and refusals, another account's hold is
 * "No such hold", and every form needs the session's CSRF token.
 */

describe("the holds page", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter)
  })
  afterAll(() => server.close())

  const signedIn = async (plan: "free" | "pro" | "business", name: string) => {
    const person = await accountWithKey(server, plan, name)
    const session = await signIn(server, person.token)
    const csrf = csrfOf((await send(server, "GET", "/account/holds", { session })).text)
    return { ...person, session, csrf }
  }

  it("lists the holds the API lists; extend once, then the API's refusal", async () => {
    const person = await signedIn("pro", "holder")
    const hold = await heldThroughApi(server, person.secret)
    const shown = await send(server, "GET", "/account/holds", { session: person.session })
    expect(shown.status).toBe(200)
    expect(shown.text).toContain(`<code>${hold.listing_id}</code>`)
    expect(shown.text).toContain("1 of 3 holds running")

    const extended = await send(server, "POST", `/account/holds/${hold.id}/extend`, { session: person.session, form: { csrf: person.csrf } })
    expect(extended.status).toBe(200)
    expect(extended.text).toContain(`The hold on ${hold.listing_id} now ends`)
    const [afterExtend] = await apiHolds(server, person.secret)
    expect(afterExtend!.can_extend).toBe(false)
    expect(Date.parse(afterExtend!.expires_at)).toBeGreaterThan(Date.parse(hold.expires_at))

    const again = await send(server, "POST", `/account/holds/${hold.id}/extend`, { session: person.session, form: { csrf: person.csrf } })
    expect(again.status).toBe(400)
    expect(again.text).toContain("The hold has already used its one extension.")
  })

  it("ends a hold as registered or released, as the API then reads it; an ended hold cannot end again", async () => {
    const person = await signedIn("business", "ender")
    const first = await heldThroughApi(server, person.secret)
    const second = await heldThroughApi(server, person.secret)
    const registered = await send(server, "POST", `/account/holds/${first.id}/end`, {
      session: person.session,
      form: { csrf: person.csrf, outcome: "registered" }
    })
    expect(registered.status).toBe(200)
    expect(registered.text).toContain(`The hold on ${first.listing_id} is ended: registered.`)
    const released = await send(server, "POST", `/account/holds/${second.id}/end`, {
      session: person.session,
      form: { csrf: person.csrf, outcome: "released" }
    })
    expect(released.status).toBe(200)
    const states = Object.fromEntries((await apiHolds(server, person.secret)).map((hold) => [hold.id, hold.state]))
    expect(states).toEqual({ [first.id]: "registered", [second.id]: "released" })

    const over = await send(server, "POST", `/account/holds/${first.id}/end`, { session: person.session, form: { csrf: person.csrf, outcome: "released" } })
    expect(over.status).toBe(400)
    expect(over.text).toContain("The hold has already ended (registered).")
    const unknown = await send(server, "POST", `/account/holds/${second.id}/end`, { session: person.session, form: { csrf: person.csrf, outcome: "lost" } })
    expect(unknown.status).toBe(400)
    expect(unknown.text).toContain("Choose how the hold ended")
  })

  it("another account's hold is no such hold, and stays as it was", async () => {
    const owner = await signedIn("pro", "owner")
    const hold = await heldThroughApi(server, owner.secret)
    const intruder = await signedIn("pro", "intruder")
    for (const [path, form] of [[`/account/holds/${hold.id}/extend`, {}], [`/account/holds/${hold.id}/end`, { outcome: "released" }]] as const) {
      const answer = await send(server, "POST", path, { session: intruder.session, form: { csrf: intruder.csrf, ...form } })
      expect(answer.status, path).toBe(404)
      expect(answer.text).toContain("No such hold on your account.")
    }
    expect((await send(server, "GET", "/account/holds", { session: intruder.session })).text).not.toContain(hold.listing_id)
    const [unchanged] = await apiHolds(server, owner.secret)
    expect(unchanged).toMatchObject({ id: hold.id, state: "running", can_extend: true, expires_at: hold.expires_at })
  })

  it("a plan without holds is told so", async () => {
    const person = await signedIn("free", "no-holds")
    const shown = await send(server, "GET", "/account/holds", { session: person.session })
    expect(shown.text).toContain("Your plan has no holds.")
  })

  it("CSRF: each form without the session's token, or from another site, is refused 403 and changes nothing", async () => {
    const person = await signedIn("pro", "csrf-holds")
    const hold = await heldThroughApi(server, person.secret)
    for (const [path, form] of [[`/account/holds/${hold.id}/extend`, {}], [`/account/holds/${hold.id}/end`, { outcome: "released" }]] as const) {
      const missing = await send(server, "POST", path, { session: person.session, form })
      expect(missing.status, path).toBe(403)
      const crossSite = await send(server, "POST", path, {
        session: person.session,
        form: { ...form, csrf: person.csrf },
        headers: { "sec-fetch-site": "cross-site", origin: "https://evil.example" }
      })
      expect(crossSite.status, path).toBe(403)
    }
    const [unchanged] = await apiHolds(server, person.secret)
    expect(unchanged).toMatchObject({ state: "running", can_extend: true })
  })

  it("signed out, the page sends you to sign in; the boundary answers 405 with Allow", async () => {
    const answer = await send(server, "GET", "/account/holds")
    expect(answer.status).toBe(303)
    expect(answer.headers.get("location")).toBe("/signin")
    const wrong = await send(server, "GET", "/account/holds/x/extend")
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get("allow")).toContain("POST")
  })
})
