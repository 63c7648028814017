import { AccountStore, Operators } from "@dropshelf/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { memoryAdapter, type Running, start, type StartOptions } from "./harness.ts"
import { accountWithLink, send, sessionSet, signIn } from "./accountSupport.ts"
import { type SmtpSink, startSmtpSink } from "./smtpSink.ts"

/*
 * Email sign-in and self sign-up over HTTP, with a local SMTP sink: the same answer for a known
 * and an unknown address (and mail only for the known one), sign-up by setting, the limits'
 * 429, and links that arrive by mail and sign in.
 */

const tokenOf = (link: string) => new URL(link).searchParams.get("token")!

/** Lets the background work after an answer (a look-up, maybe a mail) finish. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300))

const withMail = (sink: SmtpSink, options: StartOptions = {}) =>
  start(memoryAdapter, { mail: { smtpUrl: sink.url, from: "dropshelf <no-reply@dropshelf.test>" }, ...options })

const createOwned = (server: Running, name: string, email: string) =>
  server.run(Operators.Operators.use((operators) => operators.createAccount(name, "pro", email)))

describe("email sign-in and sign-up", () => {
  let sink: SmtpSink
  let server: Running
  beforeAll(async () => {
    sink = await startSmtpSink()
    server = await withMail(sink, { signUp: "open" })
  })
  afterAll(async () => {
    await server?.close()
    await sink?.close()
  })

  it("/signin offers the email form when mail is set up, and only then", async () => {
    const page = (await send(server, "GET", "/signin")).text
    expect(page).toContain(`<form method="post" action="/signin/email">`)
    expect(page).toContain(`<a href="/signup">Sign up</a>`)
    const plain = await start(memoryAdapter)
    try {
      const without = (await send(plain, "GET", "/signin")).text
      expect(without).not.toContain("/signin/email")
      expect(without).toContain("dropshelf accounts sign-in-link")
      const refused = await send(plain, "POST", "/signin/email", { form: { email: "a@example.com" } })
      expect(refused.status).toBe(404)
    } finally {
      await plain.close()
    }
  })

  it("a known and an unknown address get the same answer; only the known one gets mail, whose link signs in", async () => {
    const owner = await createOwned(server, "mailed", "Mailed@Example.com")
    const known = await send(server, "POST", "/signin/email", { form: { email: "mailed@example.com" } })
    const unknown = await send(server, "POST", "/signin/email", { form: { email: "nobody@example.com" } })
    expect(known.status).toBe(200)
    expect(unknown.status).toBe(200)
    expect(unknown.text.replaceAll("nobody@example.com", "ADDRESS")).toBe(known.text.replaceAll("mailed@example.com", "ADDRESS"))
    expect(known.text).toContain("If an account has the address mailed@example.com, a sign-in link is on its way to it.")
    expect(known.setCookies).toEqual([])

    const mail = await sink.waitFor("mailed@example.com")
    expect(mail.text).toMatch(/^From: dropshelf <no-reply@dropshelf\.test>/m)
    expect(mail.text).toMatch(/^Subject: Sign in to dropshelf/m)
    expect(mail.text).toContain("Content-Type: text/html")
    expect(mail.link!.startsWith(`${server.base}/signin?token=`)).toBe(true)
    await settle()
    expect(sink.to("nobody@example.com")).toEqual([])

    // A spent link's page offers to mail another.
    const spent = await send(server, "POST", "/signin", { form: { token: `dsl_${"x".repeat(43)}` } })
    expect(spent.status).toBe(400)
    expect(spent.text).toContain(`<form method="post" action="/signin/email">`)

    const continued = await fetch(mail.link!)
    expect(await continued.text()).toContain(`name="token" value="${tokenOf(mail.link!)}"`)
    const session = await signIn(server, tokenOf(mail.link!))
    expect((await send(server, "GET", "/account", { session })).text).toContain(owner.id)
  })

  it("a mistyped address is refused on the form; a cross-site request is refused", async () => {
    const mistyped = await send(server, "POST", "/signin/email", { form: { email: "not an address" } })
    expect(mistyped.status).toBe(400)
    expect(mistyped.text).toContain("Enter an email address, such as name@example.com.")
    expect(mistyped.text).toContain(`aria-invalid="true"`)
    expect(mistyped.text).toContain(`value="not an address"`)
    const foreign = await send(server, "POST", "/signin/email", {
      form: { email: "a@example.com" },
      headers: { "sec-fetch-site": "cross-site", origin: "https://evil.example" }
    })
    expect(foreign.status).toBe(403)
    const wrongMethod = await send(server, "GET", "/signin/email")
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.headers.get("allow")).toContain("POST")
  })

  it("open sign-up: a new address gets a free account and a link; a known one the same answer and a sign-in link", async () => {
    const created = await send(server, "POST", "/signup", { form: { email: "newcomer@example.com", name: "New <b>comer</b>" } })
    expect(created.status).toBe(200)
    expect(created.text).toContain("A sign-in link is on its way to newcomer@example.com.")
    const welcome = await sink.waitFor("newcomer@example.com")
    expect(welcome.text).toMatch(/^Subject: Welcome to dropshelf: sign in/m)
    const session = await signIn(server, tokenOf(welcome.link!))
    const overview = (await send(server, "GET", "/account", { session })).text
    expect(overview).toContain("New &lt;b&gt;comer&lt;/b&gt;")
    expect(overview).toMatch(/<dt>Plan<\/dt><dd>free<\/dd>/)

    await createOwned(server, "existing", "existing@example.com")
    const again = await send(server, "POST", "/signup", { form: { email: "existing@example.com" } })
    expect(again.status).toBe(200)
    expect(again.text.replaceAll("existing@example.com", "ADDRESS")).toBe(created.text.replaceAll("newcomer@example.com", "ADDRESS"))
    const signInMail = await sink.waitFor("existing@example.com")
    expect(signInMail.text).toMatch(/^Subject: Sign in to dropshelf/m)
    const owner = await server.run(AccountStore.AccountStore.use((accounts) => accounts.findByEmail("existing@example.com")))
    const existingSession = await signIn(server, tokenOf(signInMail.link!))
    expect((await send(server, "GET", "/account", { session: existingSession })).text).toContain(owner!.id)

    const badName = await send(server, "POST", "/signup", { form: { email: "x@example.com", name: "n".repeat(101) } })
    expect(badName.status).toBe(400)
    expect(badName.text).toContain("The account name must be at most 100 characters.")
  })

  it("sign-up by invitation, closed, or open without mail: a page that says so, and a refused POST", async () => {
    const cases: Array<[StartOptions, string]> = [
      [{}, "Accounts by invitation"],
      [{ signUp: "off" }, "Sign-up is closed"],
      [{ signUp: "open" }, "Sign-up needs mail"]
    ]
    for (const [options, heading] of cases) {
      const other = await start(memoryAdapter, options)
      try {
        const page = await send(other, "GET", "/signup")
        expect(page.status).toBe(200)
        expect(page.text).toContain(`<h1>${heading}</h1>`)
        expect(page.text).not.toContain(`action="/signup"`)
        const posted = await send(other, "POST", "/signup", { form: { email: "someone@example.com" } })
        expect(posted.status).toBe(403)
        expect(posted.text).toContain(`<h1>${heading}</h1>`)
      } finally {
        await other.close()
      }
    }
    expect(sink.to("someone@example.com")).toEqual([])
  })
})

// A day's window: a test that straddles the turn of a shorter one would see its counts reset.
const LIMITS = { requestsPerEmail: 2, requestsPerAddress: 8, badLinksPerAddress: 2, windowMs: 24 * 60 * 60_000 }

describe("sign-in attempt limits", () => {
  let sink: SmtpSink
  let server: Running
  beforeAll(async () => {
    sink = await startSmtpSink()
    server = await withMail(sink, { signUp: "open", signInLimits: LIMITS })
  })
  afterAll(async () => {
    await server?.close()
    await sink?.close()
  })

  const expectTooMany = (answer: { status: number; headers: Headers; text: string }) => {
    expect(answer.status).toBe(429)
    const retryAfter = Number(answer.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(LIMITS.windowMs / 1000)
    expect(answer.text).toMatch(/Try again after \d\d:\d\d UTC \(in about \d+ minutes\)/)
  }

  it("past the limit per email address, a known and an unknown address get the same 429", async () => {
    await createOwned(server, "limited", "limited@example.com")
    for (const email of ["limited@example.com", "unheard@example.com"]) {
      for (let attempt = 0; attempt < 2; attempt++) expect((await send(server, "POST", "/signin/email", { form: { email } })).status).toBe(200)
    }
    const known = await send(server, "POST", "/signin/email", { form: { email: "limited@example.com" } })
    const unknown = await send(server, "POST", "/signin/email", { form: { email: "unheard@example.com" } })
    expectTooMany(known)
    expect(unknown.status).toBe(429)
    expect(unknown.text).toBe(known.text)
    // Sign-up counts against the same address's limit, and its 429 is the same page.
    expectTooMany(await send(server, "POST", "/signup", { form: { email: "limited@example.com" } }))
    await settle()
    expect(sink.to("limited@example.com")).toHaveLength(2)
  })

  it("past the limit per client address, any address is refused", async () => {
    // Seven requests so far from this address, refused ones included; the eighth is the last admitted.
    expect((await send(server, "POST", "/signin/email", { form: { email: "eighth@example.com" } })).status).toBe(200)
    expectTooMany(await send(server, "POST", "/signin/email", { form: { email: "ninth@example.com" } }))
  })

  it("bad links are counted per client address: past the limit, a 429 even for a good link", async () => {
    const { token } = await accountWithLink(server, "free", "bad-links")
    for (let attempt = 0; attempt < 2; attempt++) {
      expect((await send(server, "POST", "/signin", { form: { token: `dsl_${"x".repeat(43)}` } })).status).toBe(400)
    }
    const refused = await send(server, "POST", "/signin", { form: { token } })
    expectTooMany(refused)
    expect(sessionSet(refused)).toBeUndefined()
  })
})

