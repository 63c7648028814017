import { maxHeaderSize } from "node:http"
import type { Socket } from "node:net"
import type { ErrorFields } from "../api/ApiErrors.ts"

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
  const body = JSON.stringify({ error: { code: "invalid_request", message } satisfies ErrorFields })
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  )
}
