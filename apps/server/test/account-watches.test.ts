import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addListings, call, listing, memoryAdapter, newId, type Running, start } from "./harness.ts"
import { csrfOf, send, signIn } from "./accountSupport.ts"
import { accountWithKey } from "./accountApiSupport.ts"
import { eventually, receiver } from "./receiver.ts"

/*
 * The watches pages over HTTP as a browser sends them: a form makes the body the API takes (the
 * same validation and messages), pause, webhook, rotation, deletion and "send again" run the
 * Watches use cases, names and URLs are shown inert, another account's watch is "No such watch"
 * (404), and every form needs the session's CSRF token.
 */

describe("the watches pages", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter, { watchWorker: true })
  })
  afterAll(() => server.close())

  const signedIn = async (plan: "free" | "pro" | "business", name: string) => {
    const person = await accountWithKey(server, plan, name)
    const session = await signIn(server, person.token)
    const csrf = csrfOf((await send(server, "GET", "/account/watches", { session })).text)
    return { ...person, session, csrf }
  }
  const apiWatches = async (secret: string) => (await call(server, "GET", "/api/v1/watches", { key: secret })).body.data as Array<any>
  const watchIdIn = (location: string | null) => /^\/account\/watches\/(wch_\w+)$/.exec(location ?? "")![1]!

  it("creates a watch from the form as the API stores it; refuses what the API refuses, with its message", async () => {
    const person = await signedIn("pro", "watcher")
    const made = await send(server, "POST", "/account/watches", {
      session: person.session,
      form: { csrf: person.csrf, name: "short coms", query: "?tld=com&ageMin=5", webhook_url: "" }
    })
    expect(made.status).toBe(303)
    const id = watchIdIn(made.headers.get("location"))
    expect(await apiWatches(person.secret)).toMatchObject([{ id, name: "short coms", query: { tld: "com", ageMin: "5" }, webhook: null, paused: false }])
    const shown = await send(server, "GET", `/account/watches/${id}`, { session: person.session })
    expect(shown.status).toBe(200)
    expect(shown.text).toContain("<code>ageMin=5&amp;tld=com</code>")

    for (const [form, message] of [
      [{ name: "", query: "" }, "name accepts text of 1 to 100 characters"],
      [{ name: "sorted", query: "sort=price" }, "sort is not part of a watch"],
      [{ name: "typo", query: "tdl=com" }, "is not a GET /domains filter"],
      [{ name: "bad hook", query: "", webhook_url: "ftp://example.com/hook" }, "webhook_url"]
    ] as const) {
      const refused = await send(server, "POST", "/account/watches", { session: person.session, form: { csrf: person.csrf, ...form } })
      expect(refused.status, form.name).toBe(400)
      expect(refused.text, form.name).toContain(message)
      expect(refused.text).toContain('role="alert"')
    }
    expect(await apiWatches(person.secret)).toHaveLength(1)

    expect(shown.text).toContain(">Add a webhook</button>")
    const added = await send(server, "POST", `/account/watches/${id}/webhook`, {
      session: person.session,
      form: { csrf: person.csrf, webhook_url: "http://127.0.0.1:9/added" }
    })
    expect(added.text).toContain("<h1>Webhook added</h1>")
    expect(added.text).toMatch(/<code id="secret">whsec_[^<]+<\/code>/)
    expect((await apiWatches(person.secret))[0].webhook.url).toBe("http://127.0.0.1:9/added")
  })

  it("a directory search becomes a watch: its filters, without order or size, fill the form", async () => {
    const person = await signedIn("pro", "from-search")
    const searched = await send(server, "GET", "/account/directory?tld=com&rsMin=40&sort=latest&limit=10", { session: person.session })
    expect(searched.status).toBe(200)
    const href = /<a href="([^"]+)">Watch this search<\/a>/.exec(searched.text)?.[1]?.replaceAll("&amp;", "&")
    expect(href).toBe("/account/watches?query=tld%3Dcom%26rsMin%3D40#new-watch")
    const form = await send(server, "GET", href!.split("#")[0]!, { session: person.session })
    expect(form.text).toContain('name="query" value="tld=com&amp;rsMin=40"')
    const made = await send(server, "POST", "/account/watches", {
      session: person.session,
      form: { csrf: person.csrf, name: "tech coms", query: "tld=com&rsMin=40", webhook_url: "" }
    })
    expect(made.status).toBe(303)
    expect(await apiWatches(person.secret)).toMatchObject([{ name: "tech coms", query: { tld: "com", rsMin: "40" } }])
  })

  it("with a webhook: the secret shown once; URL change, rotation, pause, resume and delete as the API then reads them", async () => {
    const person = await signedIn("business", "hooked")
    const made = await send(server, "POST", "/account/watches", {
      session: person.session,
      form: { csrf: person.csrf, name: "hooked", query: "tier=open", webhook_url: "http://127.0.0.1:9/hook" }
    })
    expect(made.status).toBe(200)
    const secret = /<code id="secret">(whsec_[^<]+)<\/code>/.exec(made.text)![1]!
    const [watch] = await apiWatches(person.secret)
    expect(watch.webhook.url).toBe("http://127.0.0.1:9/hook")
    expect((await send(server, "GET", `/account/watches/${watch.id}`, { session: person.session })).text).not.toContain(secret)

    const post = (path: string, form: Record<string, string> = {}) =>
      send(server, "POST", `/account/watches/${watch.id}/${path}`, { session: person.session, form: { csrf: person.csrf, ...form } })
    const moved = await post("webhook", { webhook_url: "http://127.0.0.1:10/hook" })
    expect(moved.text).toContain("The webhook URL is changed")
    expect((await apiWatches(person.secret))[0].webhook.url).toBe("http://127.0.0.1:10/hook")
    const rotated = await post("rotate")
    const next = /<code id="secret">(whsec_[^<]+)<\/code>/.exec(rotated.text)![1]!
    expect(next).not.toBe(secret)
    expect((await apiWatches(person.secret))[0].webhook.previous_secret_expires_at).toEqual(expect.any(String))
    expect((await post("pause", { paused: "true" })).text).toContain("The watch is paused.")
    expect((await apiWatches(person.secret))[0].paused).toBe(true)
    expect((await post("pause", { paused: "false" })).text).toContain("The watch is running again.")
    expect((await apiWatches(person.secret))[0].paused).toBe(false)
    const deleted = await post("delete")
    expect(deleted.text).toContain("The watch hooked is deleted.")
    expect(await apiWatches(person.secret)).toEqual([])
  })

  it("shows each delivery with its attempts, and sends one again", async () => {
    const hook = await receiver()
    try {
      const person = await signedIn("business", "deliveries")
      const made = await send(server, "POST", "/account/watches", {
        session: person.session,
        form: { csrf: person.csrf, name: "open names", query: "tier=open", webhook_url: hook.url }
      })
      const [watch] = await apiWatches(person.secret)
      expect(made.status).toBe(200)
      await addListings(server, [listing({ domain: `delivered-${newId().toLowerCase()}.com`, tier: "open" })])
      expect(await eventually(() => hook.received.length >= 1)).toBe(true)
      const eventId = hook.received[0]!.headers["webhook-id"]!
      let shown = ""
      expect(await eventually(async () => {
        shown = (await send(server, "GET", `/account/watches/${watch.id}`, { session: person.session })).text
        return shown.includes("HTTP 204")
      })).toBe(true)
      expect(shown).toContain(`<code>${eventId}</code>`)
      expect(shown).toMatch(/Attempt 1, <time[^>]*>[^<]+<\/time>: HTTP 204, \d+ ms/)

      const again = await send(server, "POST", `/account/watches/${watch.id}/deliveries/${eventId}/resend`, {
        session: person.session,
        form: { csrf: person.csrf }
      })
      expect(again.status).toBe(200)
      expect(again.text).toContain(`Delivery ${eventId} will be sent again shortly.`)
      expect(await eventually(() => hook.received.length >= 2)).toBe(true)
      expect(hook.received[1]!.headers["webhook-id"]).toBe(eventId)
      const none = await send(server, "POST", `/account/watches/${watch.id}/deliveries/msg_nosuch/resend`, {
        session: person.session,
        form: { csrf: person.csrf }
      })
      expect(none.status).toBe(404)
      expect(none.text).toContain("No such delivery of this watch.")
    } finally {
      await hook.close()
    }
  })

  it("a watch's name and webhook URL are shown as text, never markup", async () => {
    const person = await signedIn("business", "xss")
    const name = `<script>alert("name")</script><img src=x onerror=alert(1)>`
    const url = `http://127.0.0.1:9/hook?x="><script>alert(2)</script>&y='onmouseover='alert(3)`
    const made = await send(server, "POST", "/account/watches", { session: person.session, form: { csrf: person.csrf, name, query: "", webhook_url: url } })
    expect(made.status).toBe(200)
    const [watch] = await apiWatches(person.secret)
    // Stored as the URL parser writes it (quotes and brackets percent-encoded), and shown escaped.
    expect(watch.webhook.url).toBe(new URL(url).href)
    const escaped = watch.webhook.url.replaceAll("&", "&amp;").replaceAll("\"", "&quot;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    expect((await send(server, "GET", `/account/watches/${watch.id}`, { session: person.session })).text).toContain(`<code>${escaped}</code>`)
    for (const path of ["/account/watches", `/account/watches/${watch.id}`]) {
      const page = (await send(server, "GET", path, { session: person.session })).text
      expect(page, path).not.toContain("<script>alert")
      expect(page, path).not.toContain("<img src=x")
      expect(page, path).toContain("&lt;script&gt;alert(")
    }
    const scripted = await send(server, "POST", "/account/watches", {
      session: person.session,
      form: { csrf: person.csrf, name: "js", query: "", webhook_url: "javascript:alert(1)" }
    })
    expect(scripted.status).toBe(400)
  })

  it("another account's watch is no such watch (404), and stays as it was", async () => {
    const owner = await signedIn("pro", "owner")
    const made = await send(server, "POST", "/account/watches", { session: owner.session, form: { csrf: owner.csrf, name: "mine", query: "" } })
    const id = watchIdIn(made.headers.get("location"))
    const intruder = await signedIn("pro", "intruder")
    expect((await send(server, "GET", `/account/watches/${id}`, { session: intruder.session })).status).toBe(404)
    for (const [path, form] of [["pause", { paused: "true" }], ["webhook", { webhook_url: "http://127.0.0.1:9/x" }], ["rotate", {}], ["delete", {}], ["deliveries/msg_x/resend", {}]] as const) {
      const answer = await send(server, "POST", `/account/watches/${id}/${path}`, { session: intruder.session, form: { csrf: intruder.csrf, ...form } })
      expect(answer.status, path).toBe(404)
      expect(answer.text, path).toContain("No such watch on your account.")
    }
    expect(await apiWatches(owner.secret)).toMatchObject([{ id, name: "mine", paused: false, webhook: null }])
  })

  it("CSRF: each form without the session's token, or from another site, is refused 403 and changes nothing", async () => {
    const person = await signedIn("pro", "csrf-watches")
    const made = await send(server, "POST", "/account/watches", { session: person.session, form: { csrf: person.csrf, name: "kept", query: "" } })
    const id = watchIdIn(made.headers.get("location"))
    const forms: ReadonlyArray<readonly [string, Record<string, string>]> = [
      ["/account/watches", { name: "forged", query: "" }],
      [`/account/watches/${id}/pause`, { paused: "true" }],
      [`/account/watches/${id}/webhook`, { webhook_url: "http://127.0.0.1:9/x" }],
      [`/account/watches/${id}/rotate`, {}],
      [`/account/watches/${id}/delete`, {}],
      [`/account/watches/${id}/deliveries/msg_x/resend`, {}]
    ]
    for (const [path, form] of forms) {
      expect((await send(server, "POST", path, { session: person.session, form })).status, path).toBe(403)
      const crossSite = await send(server, "POST", path, {
        session: person.session,
        form: { ...form, csrf: person.csrf },
        headers: { "sec-fetch-site": "cross-site", origin: "https://evil.example" }
      })
      expect(crossSite.status, path).toBe(403)
    }
    expect(await apiWatches(person.secret)).toMatchObject([{ id, name: "kept", paused: false, webhook: null }])
  })
})
