import { randomUUID } from "node:crypto"

/*
 * Every response carries an `X-Request-Id`, the same id is in the request's log line and in the
 * message of any 5xx, so that a question about one answer can be traced to what the server did.
 */

/**
 * A caller's `X-Request-Id` is kept when it is 1 to 128 characters among letters, digits and
 * `-_.:+/=` (UUIDs, ULIDs, base64 and most tracing ids): it goes into a response header and the
 * log as it is, so nothing else is taken. Any other value, or none, gets a new UUID.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9\-_.:+/=]{1,128}$/

export const requestIdOf = (sent: string | undefined): string =>
  sent !== undefined && SANE_REQUEST_ID.test(sent) ? sent : randomUUID()

/** The message of a 5xx: what to do, and the request id to quote when asking about it. */
export const serverFaultMessage = (advice: string, requestId: string) => `${advice} (request id ${requestId})`
