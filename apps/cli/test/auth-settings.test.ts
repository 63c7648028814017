/**
 * The settings for refused keys, from the environment to the served answers:
 * DROPSHELF_AUTH_FAILURES_PER_MINUTE and DROPSHELF_TRUSTED_PROXIES, refused when out of range,
 * and with REDIS_URL one count per address shared by two instances.
 */
import { afterEach, describe, expect, it } from "vitest"
import { embeddedTargets, expectOneLineFailure, killStragglers, run, serve as serveCli, type Target } from "./support.ts"

const redisUrl = process.env.REDIS_URL?.trim() || undefined
if (redisUrl === undefined) console.info("auth-settings: the two-instance test is skipped: it needs REDIS_URL")

/** A client address this run alone speaks from (198.18.0.0/15 is for benchmarks), so a shared Redis holds no earlier count of it. */
const freshAddress = () => `198.18.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`

const serve = async (target: Target, env: Record<string, string>) => {
  const { server, port } = await serveCli({ env: { ...target.env, ...env } })
  const me = (forwardedFor: string) =>
    fetch(`http://127.0.0.1:${port}/api/v1/me`, { headers: { "x-forwarded-for": forwardedFor } }).then(async (response) => {
      await response.arrayBuffer()
      return response.status
    })
  return { server, me }
}

describe("refused-key settings", () => {
  const target = embeddedTargets({ migrated: true })
  afterEach(() => killStragglers())

  it("DROPSHELF_AUTH_FAILURES_PER_MINUTE and DROPSHELF_TRUSTED_PROXIES reach the server", async () => {
    const { me, server } = await serve(target(), {
      DROPSHELF_AUTH_FAILURES_PER_MINUTE: "2",
      DROPSHELF_TRUSTED_PROXIES: "10.0.0.0/8, 127.0.0.1/32"
    })
    try {
      const client = freshAddress()
      expect([await me(client), await me(client), await me(client)]).toEqual([401, 401, 429])
      expect(await me(freshAddress())).toBe(401)
    } finally {
      await server.stop()
    }
  })

  it("a setting out of range is refused at start, naming it", async () => {
    const made = target()
    expectOneLineFailure(
      await run(["serve", "--port", "0"], { env: { ...made.env, DROPSHELF_AUTH_FAILURES_PER_MINUTE: "0" } }),
      2,
      /DROPSHELF_AUTH_FAILURES_PER_MINUTE/
    )
    expectOneLineFailure(
      await run(["serve", "--port", "0"], { env: { ...made.env, DROPSHELF_TRUSTED_PROXIES: "10.0.0.1" } }),
      2,
      /DROPSHELF_TRUSTED_PROXIES/
    )
  })

  it.skipIf(redisUrl === undefined)(`with REDIS_URL two instances share one count per address${redisUrl === undefined ? " (skipped: REDIS_URL is not set)" : ""}`, async () => {
    const env = { REDIS_URL: redisUrl!, DROPSHELF_AUTH_FAILURES_PER_MINUTE: "3", DROPSHELF_TRUSTED_PROXIES: "127.0.0.1/32" }
    const first = await serve(target(), env)
    const second = await serve(target(), env)
    try {
      // Clear of the minute's end, so the four refusals fall in one window.
      const secondOfMinute = new Date().getUTCSeconds()
      if (secondOfMinute >= 55) await new Promise((resolve) => setTimeout(resolve, (61 - secondOfMinute) * 1000))
      const client = freshAddress()
      expect([await first.me(client), await second.me(client), await first.me(client)]).toEqual([401, 401, 401])
      expect(await second.me(client)).toBe(429)
    } finally {
      await first.server.stop()
      await second.server.stop()
    }
  }, 120_000)
})
