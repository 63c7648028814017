/**
 * The account area's security log on a real `dropshelf serve`: keys the operator's CLI created
 * and revoked (before the server started and beside it) appear in the account's log beside a
 * key revoked from the keys page.
 */
import { afterEach, describe, expect, it } from "vitest"
import { embeddedTargets, killStragglers, runJson, serve } from "./support.ts"

describe("the security log of a served account area", () => {
  const target = embeddedTargets({ migrated: true })
  afterEach(() => killStragglers())

  it("shows keys the CLI created and revoked, and a key revoked in the page", async () => {
    const on = { env: target().env }
    const account = await runJson(["accounts", "create", "--name", "logged", "--plan", "pro"], on)
    const made = await runJson(["keys", "create", account.id, "--name", "from-cli"], on)
    const { base, server } = await serve(on)
    try {
      const gone = await runJson(["keys", "create", account.id, "--name", "cli-revoked"], on)
      expect(await runJson(["keys", "revoke", gone.prefix], on)).toEqual({ revoked: gone.prefix })
      const link = await runJson(["accounts", "sign-in-link", account.id], on)
      const signIn = await fetch(`${base}/signin`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
        body: new URLSearchParams({ token: new URL(link.url).searchParams.get("token")! }).toString(),
        redirect: "manual"
      })
      expect(signIn.status).toBe(303)
      const cookie = signIn.headers.getSetCookie()[0]!.split(";")[0]!
      const keys = await (await fetch(`${base}/account/keys`, { headers: { cookie } })).text()
      const csrf = /name="csrf" value="([^"]+)"/.exec(keys)![1]!
      const id = new RegExp(`action="/account/keys/([^"/]+)/revoke">\\s*<input[^>]*>\\s*<button[^>]*aria-label="Revoke key ${made.prefix} `).exec(keys)![1]!
      const revoked = await fetch(`${base}/account/keys/${id}/revoke`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin", cookie },
        body: new URLSearchParams({ csrf }).toString()
      })
      expect(revoked.status).toBe(200)

      const log = await (await fetch(`${base}/account/security`, { headers: { cookie } })).text()
      const rows = [...log.matchAll(/<td data-label="What">([^<]*)<\/td>\s*<td data-label="Detail">([^<]*)<\/td>/g)].map(([, what, detail]) => `${what}: ${detail}`)
      expect(rows).toEqual([
        `Key revoked: ${made.prefix} (from-cli)`,
        "Signed in: with a one-time link",
        `Key revoked: ${gone.prefix} (cli-revoked)`,
        `Key created: ${gone.prefix} (cli-revoked)`,
        `Key created: ${made.prefix} (from-cli)`
      ])
    } finally {
      await server.stop("SIGTERM")
    }
  }, 120_000)
})
