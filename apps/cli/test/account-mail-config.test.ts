/**
 * The account area's mail and sign-up settings, as `dropshelf serve` reads them at start: an
 * unusable value stops the start with one line naming the variable and exit 2; open sign-up
 * without mail serves, with a warning; with mail, a sign-up is mailed a link to this server.
 */
import { afterEach, describe, expect, it } from "vitest"
import { startSmtpSink } from "../../server/test/smtpSink.ts"
import { embeddedTargets, expectOneLineFailure, killStragglers, run, serve } from "./support.ts"

describe("mail and sign-up settings", () => {
  const target = embeddedTargets({ migrated: true })
  afterEach(() => killStragglers())

  it("refuses a bad DROPSHELF_SIGNUP, DROPSHELF_SMTP_URL or DROPSHELF_MAIL_FROM with one line and exit 2", async () => {
    const env = target().env
    const refusals: Array<[Record<string, string>, RegExp]> = [
      [{ DROPSHELF_SIGNUP: "anyone" }, /DROPSHELF_SIGNUP/],
      [{ DROPSHELF_SMTP_URL: "not a url", DROPSHELF_MAIL_FROM: "a@example.com" }, /DROPSHELF_SMTP_URL is not a URL/],
      [{ DROPSHELF_SMTP_URL: "http://mail.example.com", DROPSHELF_MAIL_FROM: "a@example.com" }, /DROPSHELF_SMTP_URL has the scheme http/],
      [{ DROPSHELF_SMTP_URL: "smtp://mail.example.com:587" }, /DROPSHELF_MAIL_FROM is unset/],
      [{ DROPSHELF_SMTP_URL: "smtp://mail.example.com:587", DROPSHELF_MAIL_FROM: "dropshelf" }, /DROPSHELF_MAIL_FROM is not an address/]
    ]
    const outcomes = await Promise.all(refusals.map(([bad]) => run(["serve"], { env: { ...env, ...bad } })))
    outcomes.forEach((outcome, index) => expectOneLineFailure(outcome, 2, refusals[index]![1]))
  }, 60_000)

  it("open sign-up without mail serves, warns at start, and /signup says sign-up needs mail", async () => {
    const { base, server } = await serve({ env: { ...target().env, DROPSHELF_SIGNUP: "open" } })
    try {
      expect(server.stderr()).toContain("DROPSHELF_SIGNUP=open needs mail: until DROPSHELF_SMTP_URL is set, /signup says sign-up needs mail")
      expect(await (await fetch(`${base}/signup`)).text()).toContain("<h1>Sign-up needs mail</h1>")
    } finally {
      expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    }
  }, 60_000)

  it("with DROPSHELF_SMTP_URL, a sign-up is mailed a link on the server's own origin that signs in", async () => {
    const sink = await startSmtpSink()
    const env = { ...target().env, DROPSHELF_SMTP_URL: sink.url, DROPSHELF_MAIL_FROM: "dropshelf <no-reply@dropshelf.test>", DROPSHELF_SIGNUP: "open" }
    const { base, server } = await serve({ env })
    try {
      const form = (fields: Record<string, string>) => ({
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
        body: new URLSearchParams(fields).toString(),
        redirect: "manual" as const
      })
      expect((await fetch(`${base}/signup`, form({ email: "served@example.com" }))).status).toBe(200)
      const mail = await sink.waitFor("served@example.com", 1, 15_000)
      expect(mail.link!.startsWith(`${base}/signin?token=`)).toBe(true)
      const signedIn = await fetch(`${base}/signin`, form({ token: new URL(mail.link!).searchParams.get("token")! }))
      expect(signedIn.status).toBe(303)
      expect(signedIn.headers.get("location")).toBe("/account")
    } finally {
      expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
      await sink.close()
    }
  }, 60_000)
})
