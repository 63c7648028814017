/**
 * DROPSHELF_SINCE_HORIZON_DAYS from the environment to the served answers: `serve` refuses a
 * value out of range before opening anything, and a valid one is the horizon /me tells a
 * business key and the one a since past it is refused by.
 */
import { afterEach, describe, expect, it } from "vitest"
import { embeddedTargets, expectOneLineFailure, killStragglers, run, runJson, serve } from "./support.ts"

describe("DROPSHELF_SINCE_HORIZON_DAYS", () => {
  const target = embeddedTargets({ migrated: true })
  afterEach(() => killStragglers())

  it("is refused out of range at start, naming it", async () => {
    const made = target()
    for (const value of ["0", "3651", "ten"]) {
      expectOneLineFailure(
        await run(["serve", "--port", "0"], { env: { ...made.env, DROPSHELF_SINCE_HORIZON_DAYS: value } }),
        2,
        /DROPSHELF_SINCE_HORIZON_DAYS/
      )
    }
  })

  it("reaches /me and the refusal of an older since", async () => {
    const made = target()
    const env = { ...made.env, DROPSHELF_SINCE_HORIZON_DAYS: "7" }
    const { server, port } = await serve({ env })
    try {
      const account = await runJson(["accounts", "create", "--name", "horizon", "--plan", "business"], { env })
      const { key } = await runJson(["keys", "create", account.id, "--name", "horizon"], { env })
      const get = (path: string) =>
        fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${key}` } }).then(async (response) => ({
          status: response.status,
          body: await response.json() as any
        }))
      expect((await get("/api/v1/me")).body.since_horizon_days).toBe(7)
      const since = new Date(Date.now() - 8 * 86_400_000).toISOString()
      const refused = await get(`/api/v1/domains?since=${since}`)
      expect(refused.status).toBe(400)
      expect(refused.body.error).toMatchObject({ code: "invalid_request", parameter: "since", horizon_days: 7 })
    } finally {
      await server.stop()
    }
  })
})
