/**
 * Hostile input against the real server, on every storage adapter: generated query strings for
 * `GET /domains` and generated ids for every path that takes one. Whatever arrives, the answer
 * is a clear refusal or a page, never a fault: no 5xx, always JSON, and a 400 names a
 * documented parameter. (A NUL in `q` or in a hold id once reached Postgres and answered 500;
 * `since=0000-01-01T00:00:00Z` did the same on PGlite.)
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ListQuery } from "@dropshelf/core"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, addListings, call, listing, type Running, start } from "./harness.ts"

/** Values a careless or hostile client sends: control characters, encodings, edge numbers and dates. */
const hostileValue = fc.oneof(
  { arbitrary: fc.string({ unit: "binary", maxLength: 40 }), weight: 1 },
  { arbitrary: fc.constantFrom(
    "\u0000", "a\u0000b", "%", "_", "\\", "'", "\"", "%00", "%ZZ", "\uFFFD", "\uD800", "😀", " ", "",
    "-1", "0", "1e309", "99999999999999999999", "1.5", "0x10", "+5", "NaN",
    "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "1970-01-01T00:00:00Z", "2026-02-30T00:00:00Z",
    "true", "false", "latest", "open", "low", "com", "co.uk", "under-100", "1000+"
  ), weight: 3 }
)

/** Every byte of the UTF-8 percent-encoded (a lone surrogate becomes U+FFFD, as a client's encoder makes it). */
const percentEncoded = (text: string) =>
  Array.from(new TextEncoder().encode(text), (byte) => `%${byte.toString(16).padStart(2, "0")}`).join("")

const queryOf = (pairs: ReadonlyArray<readonly [string, string]>) =>
  pairs.map(([name, value]) => `${percentEncoded(name)}=${percentEncoded(value)}`).join("&")

for (const adapter of adapters) {
  describe.skipIf(adapter.skip !== undefined)(`hostile input on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let server: Running
    /** Keys used in turn, so the generated requests stay under each key's per-minute limit. */
    const keys: Array<string> = []
    let sent = 0
    const nextKey = () => keys[Math.floor(sent++ / 100) % keys.length]!

    beforeAll(async () => {
      server = await start(adapter)
      await addListings(server, [listing({ domain: "hostile-one.com", category: "tech" }), listing({ domain: "hostile-two.net" })])
      for (let index = 0; index < 10; index++) keys.push((await account(server, "business", `hostile-${index}`)).secret)
    })

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    const expectNoFault = (response: { readonly status: number; readonly body: any; readonly text: string }, what: string) => {
      expect(response.status, `${what} → ${response.text.slice(0, 300)}`).toBeLessThan(500)
      expect(response.body, what).toBeTypeOf("object")
      if (response.status >= 400) expect(response.body.error.code, what).toBeTypeOf("string")
    }

    it("GET /domains answers any query with a page or a 400 naming a documented parameter", async () => {
      const name = fc.oneof({ arbitrary: fc.constantFrom(...ListQuery.LIST_PARAMETERS), weight: 4 }, { arbitrary: fc.string({ maxLength: 8 }), weight: 1 })
      const pair = fc.tuple(name, hostileValue)
      await fc.assert(
        fc.asyncProperty(fc.array(pair, { minLength: 1, maxLength: 4 }), async (pairs) => {
          const path = `/api/v1/domains?${queryOf(pairs)}`
          const response = await call(server, "GET", path, { key: nextKey() })
          expectNoFault(response, path)
          expect([200, 400], path).toContain(response.status)
          if (response.status === 400) expect(ListQuery.LIST_PARAMETERS as ReadonlyArray<string>, path).toContain(response.body.error.parameter)
        }),
        { numRuns: 300 }
      )
    })

    it("every path that takes an id answers any id without a fault", async () => {
      const id = fc.oneof(fc.string({ unit: "binary", minLength: 1, maxLength: 24 }), fc.constantFrom("\u0000", "h_\u0000", "AAAA\u0000AAA", "..", "%2F"))
      await fc.assert(
        fc.asyncProperty(id, async (raw) => {
          const segment = percentEncoded(raw)
          for (const [method, path] of [
            ["GET", `/api/v1/domains/${segment}`],
            ["POST", `/api/v1/domains/${segment}/reveal`],
            ["POST", `/api/v1/domains/${segment}/hold`],
            ["POST", `/api/v1/holds/${segment}/extend`],
            ["DELETE", `/api/v1/holds/${segment}`]
          ] as const) {
            expectNoFault(await call(server, method, path, { key: nextKey() }), `${method} ${path}`)
          }
        }),
        { numRuns: 60 }
      )
    })
  })
}
