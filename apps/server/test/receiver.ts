/** A webhook receiver on loopback for the watch tests, and a poll for what it should have received. */
import * as http from "node:http"

export interface Received {
  readonly headers: Record<string, string>
  readonly body: string
}

/**
 * A webhook receiver on loopback. `answer` decides each request's status (and may hold the
 * answer back); every request is kept in `received`.
 */
export const receiver = async (answer: (request: Received, index: number) => number | Promise<number> = () => 204) => {
  const received: Array<Received> = []
  const server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", async () => {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]))
      const got = { headers, body: Buffer.concat(chunks).toString("utf8") }
      received.push(got)
      const status = await answer(got, received.length - 1)
      response.writeHead(status, status === 503 ? { "retry-after": "1" } : {}).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Polls `condition` every 50 ms until it holds or `ms` pass; whether it held. */
export const eventually = async (condition: () => boolean | Promise<boolean>, ms = 10_000) => {
  const until = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > until) return false
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return true
}

