/**
 * The /docs page on the wire: about 5 MB of inline script, sent gzip-compressed to a client that
 * accepts it, and as is to one that does not.
 */
import { type IncomingMessage, request } from "node:http"
import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { memoryAdapter, type Running, start } from "./harness.ts"

/** A raw GET (fetch would decode the body): status, headers and the bytes as sent. */
const rawGet = (url: string, headers: Record<string, string>) =>
  new Promise<{ readonly response: IncomingMessage; readonly bytes: Buffer }>((resolve, reject) => {
    request(url, { headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ response, bytes: Buffer.concat(chunks) }))
      response.on("error", reject)
    }).on("error", reject).end()
  })

describe("GET /docs on the wire", () => {
  let server: Running
  beforeAll(async () => {
    server = await start(memoryAdapter)
  })
  afterAll(() => server.close())

  it("is gzip-compressed for a client whose Accept-Encoding names gzip, and plain otherwise", async () => {
    const plain = await rawGet(`${server.base}/docs`, {})
    expect(plain.response.statusCode).toBe(200)
    expect(plain.response.headers["content-encoding"]).toBeUndefined()
    expect(plain.response.headers.vary).toMatch(/accept-encoding/i)
    expect(plain.bytes.length).toBeGreaterThan(1_000_000)
    expect(plain.bytes.toString("utf8")).toContain("<title>dropshelf")

    for (const acceptEncoding of ["gzip, deflate, br", "br;q=1, gzip;q=0.5"]) {
      const compressed = await rawGet(`${server.base}/docs`, { "accept-encoding": acceptEncoding })
      expect(compressed.response.statusCode).toBe(200)
      expect(compressed.response.headers["content-encoding"]).toBe("gzip")
      expect(compressed.response.headers["content-type"]).toBe(plain.response.headers["content-type"])
      expect(compressed.response.headers.vary).toMatch(/accept-encoding/i)
      expect(Number(compressed.response.headers["content-length"])).toBe(compressed.bytes.length)
      expect(compressed.bytes.length).toBeLessThan(plain.bytes.length / 3)
      expect(gunzipSync(compressed.bytes).equals(plain.bytes)).toBe(true)
    }

    const refused = await rawGet(`${server.base}/docs`, { "accept-encoding": "gzip;q=0, identity" })
    expect(refused.response.headers["content-encoding"]).toBeUndefined()
    expect(refused.bytes.equals(plain.bytes)).toBe(true)
  })
})
