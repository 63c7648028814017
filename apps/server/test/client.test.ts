/**
 * The contract in `@dropshelf/api` is usable by a client on its own: a typed
 * HttpApiClient built from it talks to the real server, decodes successes, and surfaces
 * refusals as the contract's error classes. Its modules import no server code.
 */
import { readdirSync, readFileSync } from "node:fs"
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api, ApiErrors } from "@dropshelf/api"
import { account, addListings, listing, memoryAdapter, type Running, start } from "./harness.ts"

const withKey = (key: string) =>
  HttpApiMiddleware.layerClient(Api.ApiKeyAuth, ({ next, request }) => next(HttpClientRequest.bearerToken(request, key)))

describe("typed client from the contract", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter)
  })
  afterAll(() => server.close())

  const client = (key: string) =>
    <A, E>(use: (client: HttpApiClient.ForApi<typeof Api.DropshelfApi>) => Effect.Effect<A, E>) =>
      Effect.runPromise(
        Effect.flatMap(HttpApiClient.make(Api.DropshelfApi, { baseUrl: server.base }), use).pipe(
          Effect.provide(Layer.mergeAll(withKey(key), FetchHttpClient.layer))
        )
      )

  it("calls the endpoints and decodes the answers", async () => {
    const row = listing({ domain: "typed-client.com" })
    await addListings(server, [row])
    const key = await account(server, "pro", "typed")
    const me = await client(key.secret)((api) => api.account.me())
    expect(me.plan).toBe("pro")
    const page = await client(key.secret)((api) => api.domains.list({ query: { limit: 5, order: "id", cursor: undefined, since: undefined, filters: {} } }))
    expect(page.data.length).toBeGreaterThan(0)
    const revealed = await client(key.secret)((api) => api.domains.reveal({ params: { id: row.id } }))
    expect(revealed.domain).toBe("typed-client.com")
    const held = await client(key.secret)((api) => api.domains.hold({ params: { id: row.id } }))
    const ended = await client(key.secret)((api) => api.holds.end({ params: { id: held.hold.id }, payload: { outcome: "registered" } }))
    expect(ended.hold.state).toBe("registered")
  })

  it("surfaces refusals as the contract's error classes", async () => {
    const key = await account(server, "pro", "typed-refused")
    const error = await client(key.secret)((api) => Effect.flip(api.domains.get({ params: { id: "ZZZZZZZZ" } })))
    expect(error).toBeInstanceOf(ApiErrors.NotFoundError)
    const unauthorized = await client("ds_live_nope")((api) => Effect.flip(api.account.me()))
    expect(unauthorized).toBeInstanceOf(ApiErrors.UnauthorizedError)
  })

  it("the contract's modules import nothing from the server side", () => {
    const dir = new URL("../../../packages/api/src/", import.meta.url)
    for (const file of readdirSync(dir)) {
      const text = readFileSync(new URL(file, dir), "utf8")
      const imports = [...text.matchAll(/from\s+"([^"]+)"/g)].map((match) => match[1]!)
      for (const specifier of imports) {
        expect(specifier, `${file} imports ${specifier}`).not.toMatch(/@dropshelf\/server|\.\.\/|platform-node|node:/)
      }
    }
  })
})
