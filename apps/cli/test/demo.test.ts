import { afterAll, describe, expect, it } from "vitest"
import { embeddedTarget, freePort, start } from "./support.ts"

/** `npm start`: first run seeds and prints working keys; a later run reuses the directory and rotates them. */

describe("dropshelf demo (npm start)", () => {
  // A new checkout's first `npm start`: no data directory yet.
  const target = embeddedTarget({ empty: true })
  afterAll(() => target.dispose())

  const runDemo = async (port: number) => {
    const demo = start(["demo", "--json"], { env: { ...target.env, PORT: String(port) } })
    try {
      await demo.waitFor(/serving/, 90_000)
      const document = JSON.parse(demo.stdout())
      return { demo, document }
    } catch (error) {
      await demo.stop()
      throw error
    }
  }

  const list = (port: number, key: string) =>
    fetch(`http://127.0.0.1:${port}/api/v1/domains?limit=2`, { headers: { authorization: `Bearer ${key}` } })

  it("seeds once, prints one working key per plan and a curl line, and rotates the keys on the next run", async () => {
    const port = await freePort()
    const first = await runDemo(port)
    let firstKeys: Array<{ plan: string; key: string }> = []
    try {
      expect(first.document.seeded).toBe(5000)
      firstKeys = first.document.keys
      expect(firstKeys.map((key) => key.plan)).toEqual(["free", "pro", "business"])
      for (const key of first.document.keys) {
        expect(key.signInUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/signin\\?token=dsl_[A-Za-z0-9_-]{43}$`))
      }
      expect(first.document.curl).toContain(`http://127.0.0.1:${port}/api/v1/domains?limit=2`)
      const business = firstKeys.find((key) => key.plan === "business")!
      expect(first.document.curl).toContain(business.key)
      const response = await list(port, business.key)
      expect(response.status).toBe(200)
      const page = await response.json() as { data: Array<unknown> }
      expect(page.data).toHaveLength(2)
    } finally {
      expect(await first.demo.stop("SIGINT")).toEqual({ code: 0, signal: null })
    }

    const second = await runDemo(port)
    try {
      expect(second.document.seeded).toBe(0)
      const accounts = (keys: Array<{ accountId: string }>) => keys.map((key) => key.accountId)
      expect(accounts(second.document.keys)).toEqual(accounts(firstKeys as never))
      const business = second.document.keys.find((key: { plan: string }) => key.plan === "business")
      expect((await list(port, business.key)).status).toBe(200)
      const oldBusiness = firstKeys.find((key) => key.plan === "business")!
      expect((await list(port, oldBusiness.key)).status).toBe(401)
    } finally {
      expect(await second.demo.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    }
  }, 240_000)
})
