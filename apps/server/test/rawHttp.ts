/**
 * HTTP/1.1 spoken over a raw socket, for requests `fetch` cannot send (no `Host`, a broken
 * request line, a half-closed socket, headers in pieces) and answers it would hide.
 */
import { connect } from "node:net"

export interface RawAnswer {
  readonly status: number
  /** Lower-cased names. */
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
}

export interface RawOptions {
  /** Send the request and half-close at once (`socket.end(request)`). */
  readonly halfClose?: boolean | undefined
  /** Send the request in pieces of this many bytes, one every few milliseconds. */
  readonly trickle?: number | undefined
  /** Give up after this long: the server neither answered nor closed. */
  readonly timeoutMs?: number | undefined
}

/** The first response in `bytes`, once complete: by `Content-Length`, chunked, or up to the close; none to HEAD. */
const parse = (bytes: Buffer, closed: boolean, head: boolean): RawAnswer | undefined => {
  const end = bytes.indexOf("\r\n\r\n")
  if (end === -1) return undefined
  const [statusLine = "", ...lines] = bytes.subarray(0, end).toString("latin1").split("\r\n")
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1])
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  // An interim answer (100 Continue) is not the response.
  if (status === 100) return parse(bytes.subarray(end + 4), closed, head)
  if (head || status === 204 || status === 304) return { status, headers, text: "" }
  const body = bytes.subarray(end + 4)
  if (headers["content-length"] !== undefined) {
    const length = Number(headers["content-length"])
    return body.length >= length ? { status, headers, text: body.subarray(0, length).toString("utf8") } : undefined
  }
  if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
    const chunks: Array<Buffer> = []
    let at = 0
    for (;;) {
      const lineEnd = body.indexOf("\r\n", at)
      if (lineEnd === -1) return undefined
      const size = parseInt(body.subarray(at, lineEnd).toString("latin1"), 16)
      if (size === 0) return { status, headers, text: Buffer.concat(chunks).toString("utf8") }
      if (body.length < lineEnd + 2 + size + 2) return undefined
      chunks.push(body.subarray(lineEnd + 2, lineEnd + 2 + size))
      at = lineEnd + 2 + size + 2
    }
  }
  return closed ? { status, headers, text: body.toString("utf8") } : undefined
}

/**
 * Sends `request` exactly as given and resolves with the first response, or `undefined` when
 * the server closed the connection without answering. Rejects when neither happens in time.
 */
export const rawExchange = (base: string, request: string | Buffer, options: RawOptions = {}): Promise<RawAnswer | undefined> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base)
    const bytes = typeof request === "string" ? Buffer.from(request, "latin1") : request
    const head = bytes.subarray(0, 5).toString("latin1") === "HEAD "
    let received = Buffer.alloc(0)
    let settled = false
    const settle = (answer: RawAnswer | undefined, error?: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      if (error !== undefined) reject(error)
      else resolve(answer)
    }
    const timeoutMs = options.timeoutMs ?? 10_000
    const timer = setTimeout(
      () => settle(undefined, new Error(`no answer within ${timeoutMs} ms to ${JSON.stringify(bytes.toString("latin1").slice(0, 200))}`)),
      timeoutMs
    )
    const socket = connect(Number(port), hostname, async () => {
      if (options.trickle !== undefined) {
        for (let at = 0; at < bytes.length && !settled; at += options.trickle) {
          if (!socket.writable) return
          socket.write(bytes.subarray(at, at + options.trickle))
          await new Promise((wake) => setTimeout(wake, 2))
        }
        if (options.halfClose) socket.end()
      } else if (options.halfClose) {
        socket.end(bytes)
      } else {
        socket.write(bytes)
      }
    })
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      const answer = parse(received, false, head)
      if (answer !== undefined) settle(answer)
    })
    socket.on("error", () => {})
    socket.on("close", () => settle(parse(received, true, head)))
  })
