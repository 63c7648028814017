import { type IncomingMessage, maxHeaderSize } from "node:http"
import type { Socket } from "node:net"
import type { ErrorFields } from "@dropshelf/api/ApiErrors"
import { requestIdOf } from "./RequestId.ts"

/** The status Node itself gives each error (decision 0200), and what the caller is told: never the bytes it sent. */
const refusalOf = (code: string | undefined): { readonly status: string; readonly message: string } => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        status: "431 Request Header Fields Too Large",
        message: `The request line and headers are larger than the server accepts (${Math.round(maxHeaderSize / 1024)} KB)`
      }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { status: "413 Payload Too Large", message: "The body's chunk extensions are larger than the server accepts" }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: "408 Request Timeout", message: "The request did not arrive in full in time" }
    default:
      return { status: "400 Bad Request", message: `The request is not valid HTTP/1.1${code === undefined ? "" : ` (${code})`}` }
  }
}

/**
 * Node answers a request it cannot parse (a broken request line, a bad chunk, headers over
 * its limit) itself, before any route sees it, with a bare status line. The spec wants every
 * refusal in the JSON error envelope, so this `clientError` listener writes one, with Node's
 * own status and `invalid_request` (the code set of eight stays closed, as for 413), and
 * closes the connection. As Node does, only when no response has started on the socket: a
 * half-written response must not be followed by another.
 */
export const answerClientError = (error: Error & { readonly code?: string }, socket: Socket): void => {
  const inFlight = (socket as Socket & { readonly _httpMessage?: { readonly headersSent?: boolean } | null })._httpMessage
  if (error.code === "ECONNRESET" || !socket.writable || (inFlight != null && inFlight.headersSent === true)) {
    socket.destroy()
    return
  }
  const { message, status } = refusalOf(error.code)
  // The request could not be read, so it has no id of its own.
  endWith(socket, status, { code: "invalid_request", message }, requestIdOf(undefined))
}

/** Writes a refusal in the envelope on a socket no response has started on, and closes it. */
const endWith = (socket: Socket, status: string, fields: ErrorFields, requestId: string): void => {
  const body = JSON.stringify({ error: fields })
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nAccess-Control-Allow-Origin: *\r\n` +
      `Access-Control-Expose-Headers: X-Request-Id\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  )
}

const firstOf = (value: string | ReadonlyArray<string> | undefined) => typeof value === "string" ? value : undefined

/**
 * Node hands a CONNECT request to a `connect` listener, or closes the socket without a word
 * when there is none. Its target is not origin-form, so it is the 404 every such target gets
 * (decision 0200); no key is read, as for the refusals above.
 */
export const answerConnect = (request: IncomingMessage, socket: Socket): void => {
  // Node has handed the socket over with no listener of its own left on it.
  socket.on("error", () => socket.destroy())
  if (!socket.writable) {
    socket.destroy()
    return
  }
  endWith(
    socket,
    "404 Not Found",
    { code: "not_found", message: "No route takes a CONNECT request: this is not a proxy" },
    requestIdOf(firstOf(request.headers["x-request-id"]))
  )
  // The client may keep its side open; the answer is out, so the socket does not wait for it long.
  socket.setTimeout(5_000, () => socket.destroy())
}
