/**
 * The webhook sender on its own, against real sockets: private receivers refused when they are
 * not allowed (by scheme, by address literal, by what a name resolves to when connecting), no
 * redirect followed, a receiver's long answer cut short.
 */
import * as http from "node:http"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WebhookDelivery } from "@dropshelf/server"

const request = (url: string) => ({ url, headers: { "content-type": "application/json", "webhook-id": "msg_test" }, body: "{}" })

describe("webhook sender", () => {
  let server: http.Server
  let port = 0
  let hits = 0

  beforeAll(async () => {
    server = http.createServer((incoming, response) => {
      hits++
      incoming.resume()
      if (incoming.url === "/redirect") return response.writeHead(307, { location: "/landing" }).end()
      if (incoming.url === "/huge") {
        response.writeHead(200)
        const chunk = Buffer.alloc(64 * 1024, 120)
        let sent = 0
        const more = () => {
          while (sent < 200 && response.write(chunk)) sent++
          if (sent < 200) response.once("drain", more)
          else response.end()
        }
        return more()
      }
      response.writeHead(204).end()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    port = (server.address() as { port: number }).port
  })

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it("without DROPSHELF_WEBHOOKS_ALLOW_PRIVATE, refuses http, private literals and names that resolve to loopback", async () => {
    const strict = WebhookDelivery.send(false)
    const before = hits
    for (const url of [`http://127.0.0.1:${port}/`, `https://127.0.0.1:${port}/`, `https://[::1]:${port}/`, `https://localhost:${port}/`]) {
      const { result } = await Effect.runPromise(strict(request(url)))
      expect(result._tag, url).toBe("Failed")
      expect(result._tag === "Failed" && result.error, url).toMatch(/refused/)
    }
    expect(hits).toBe(before)
    expect(await Effect.runPromise(WebhookDelivery.vet("https://localhost/hook"))).toMatch(/resolves to (127\.0\.0\.1|::1)/)
    expect(await Effect.runPromise(WebhookDelivery.vet("https://10.1.2.3/hook"))).toMatch(/not a public address/)
    expect(await Effect.runPromise(WebhookDelivery.vet("https://no-such-host.invalid/hook"))).toMatch(/does not/)
  })

  it("with private receivers allowed: delivers, follows no redirect, and reads no more than a little of a long answer", async () => {
    const lenient = WebhookDelivery.send(true)
    const ok = await Effect.runPromise(lenient(request(`http://127.0.0.1:${port}/hook`)))
    expect(ok.result).toEqual({ _tag: "Answered", status: 204, retryAfterMs: undefined })
    const before = hits
    const redirected = await Effect.runPromise(lenient(request(`http://127.0.0.1:${port}/redirect`)))
    expect(redirected.result).toMatchObject({ _tag: "Answered", status: 307 })
    expect(hits).toBe(before + 1)
    const huge = await Effect.runPromise(lenient(request(`http://127.0.0.1:${port}/huge`)))
    expect(huge.result).toMatchObject({ _tag: "Answered", status: 200 })
  })
})
