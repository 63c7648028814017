import { Effect, Result } from "effect"
import { Mac } from "effect/crypto"
import { Base64 } from "effect/encoding"
import { InvalidRequest } from "./errors.ts"
import { DAY, HOUR, type Instant, MINUTE } from "./Time.ts"

/*
 * Webhooks as the Standard Webhooks specification (v1.0.0) defines them: secrets `whsec_` +
 * base64 of random bytes; each message signed as `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`
 * in `webhook-signature`, several space-separated while a rotated secret overlaps; retries on
 * the specification's example schedule. Only the rules live here; the HTTP is an adapter's.
 */

export const SECRET_PREFIX = "whsec_"
/** Random bytes in a new secret (the specification allows 24 to 64). */
export const SECRET_BYTES = 32
/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = DAY

/** A new secret from `bytes` random bytes. */
export const secretFrom = (bytes: Uint8Array): string => `${SECRET_PREFIX}${Base64.encode(bytes)}`

const keyBytes = (secret: string): Uint8Array => {
  const decoded = Base64.decode(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret)
  return Result.isSuccess(decoded) ? decoded.success : new TextEncoder().encode(secret)
}

/** The text a signature covers. */
export const signedContent = (id: string, timestampSeconds: number, body: string): string => `${id}.${timestampSeconds}.${body}`

/** `v1,<base64 signature>` of one message under one secret. */
export const sign = (secret: string, id: string, timestampSeconds: number, body: string) =>
  Effect.gen(function*() {
    const mac = yield* Mac.Mac
    const key = yield* Mac.key(Mac.hmacSha256, keyBytes(secret))
    const signature = yield* mac.sign(key, new TextEncoder().encode(signedContent(id, timestampSeconds, body)))
    return `v1,${Base64.encode(signature)}`
  }).pipe(Effect.orDie)

/** The `webhook-signature` value: one signature per secret that signs at `now`, space-separated. */
export const signatureHeader = (
  secrets: ReadonlyArray<string>,
  id: string,
  timestampSeconds: number,
  body: string
) => Effect.map(Effect.forEach(secrets, (secret) => sign(secret, id, timestampSeconds, body)), (all) => all.join(" "))

// ---------------------------------------------------------------------------------------------
// Retries

/**
 * The specification's example schedule: the delay before each attempt, the first immediate.
 * Ten attempts over about 3 days; after the last one fails, the webhook is paused.
 */
export const RETRY_SCHEDULE_MS: ReadonlyArray<number> = [
  0,
  5_000,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR
]

/** A receiver that answers later than this has not acknowledged. */
export const ATTEMPT_TIMEOUT_MS = 15_000
/** Bytes of a receiver's answer read (and kept as the attempt's note) at most. */
export const RESPONSE_BYTES_KEPT = 1_024
/** A `Retry-After` is honoured up to this long. */
export const MAX_RETRY_AFTER_MS = 24 * HOUR
/** Jitter: each delay is moved by up to this fraction either way. */
export const JITTER = 0.1

/** What one attempt came to. */
export type AttemptResult =
  | { readonly _tag: "Answered"; readonly status: number; readonly retryAfterMs: number | undefined }
  | { readonly _tag: "Failed"; readonly error: string }

export type AttemptOutcome =
  | { readonly _tag: "Delivered" }
  | { readonly _tag: "Retry"; readonly at: Instant }
  /** The schedule is spent: the delivery fails and the webhook is paused. */
  | { readonly _tag: "Exhausted"; readonly reason: string }
  /** The receiver answered 410 Gone: the webhook is disabled at once. */
  | { readonly _tag: "Gone"; readonly reason: string }
  /** A re-send asked by the owner failed: the delivery stays failed; the webhook is left as it is. */
  | { readonly _tag: "Failed"; readonly reason: string }

export const describeResult = (result: AttemptResult): string =>
  result._tag === "Answered" ? `HTTP ${result.status}` : result.error

/**
 * After attempt number `attempt` (1 for the first), what happens next. `jitter` is a number in
 * [0, 1) drawn per decision. Retry-After on 429 and 503 is honoured: the next attempt comes no
 * sooner than it asks (up to a day), and no sooner than the schedule's own delay.
 */
export const decideAfterAttempt = (
  input: {
    readonly attempt: number
    readonly result: AttemptResult
    readonly now: Instant
    readonly jitter: number
    readonly manual: boolean
  }
): AttemptOutcome => {
  const { attempt, jitter, manual, now, result } = input
  if (result._tag === "Answered" && result.status >= 200 && result.status < 300) return { _tag: "Delivered" }
  if (result._tag === "Answered" && result.status === 410) {
    return { _tag: "Gone", reason: "The receiver answered 410 Gone; the webhook is disabled until its URL is set again" }
  }
  if (manual) return { _tag: "Failed", reason: describeResult(result) }
  if (attempt >= RETRY_SCHEDULE_MS.length) {
    return {
      _tag: "Exhausted",
      reason: `${RETRY_SCHEDULE_MS.length} attempts failed (last: ${describeResult(result)}); the webhook is paused until the watch is resumed`
    }
  }
  const scheduled = RETRY_SCHEDULE_MS[attempt]!
  const jittered = Math.round(scheduled * (1 - JITTER + 2 * JITTER * jitter))
  const asked = result._tag === "Answered" && (result.status === 429 || result.status === 503) && result.retryAfterMs !== undefined
    ? Math.min(result.retryAfterMs, MAX_RETRY_AFTER_MS)
    : 0
  return { _tag: "Retry", at: now + Math.max(jittered, asked) }
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from `now`; undefined when unreadable. */
export const parseRetryAfter = (value: string | null | undefined, now: Instant): number | undefined => {
  if (value === null || value === undefined) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

// ---------------------------------------------------------------------------------------------
// URL safety

/**
 * Whether an IP address (v4 dotted or v6 text) is one a public receiver could have: not
 * loopback, private, link-local, carrier-grade NAT, multicast, reserved or unspecified, and no
 * IPv4-mapped form of one of those.
 */
export const isPublicAddress = (address: string): boolean => {
  const text = address.trim().toLowerCase().replace(/^\[|\]$/g, "")
  const v4 = parseV4(text)
  if (v4 !== undefined) return isPublicV4(v4)
  const v6 = parseV6(text)
  if (v6 === undefined) return false
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) forms are judged as IPv4.
  if (v6.slice(0, 5).every((part) => part === 0) && (v6[5] === 0xffff || v6[5] === 0)) {
    if (v6[5] === 0 && v6[6] === 0 && (v6[7] ?? 0) <= 1) return false
    return isPublicV4([v6[6]! >> 8, v6[6]! & 0xff, v6[7]! >> 8, v6[7]! & 0xff])
  }
  const first = v6[0]!
  if ((first & 0xfe00) === 0xfc00) return false // fc00::/7 unique local
  if ((first & 0xffc0) === 0xfe80) return false // fe80::/10 link-local
  if ((first & 0xffc0) === 0xfec0) return false // fec0::/10 site-local (deprecated)
  if ((first & 0xff00) === 0xff00) return false // ff00::/8 multicast
  if (first === 0x2001 && v6[1] === 0x0db8) return false // documentation
  if (first === 0x0064 && v6[1] === 0xff9b) return false // NAT64: may reach private IPv4
  if (first === 0x2002) return false // 6to4: may reach private IPv4
  return (first & 0xe000) === 0x2000 // only global unicast 2000::/3
}

const parseV4 = (text: string): ReadonlyArray<number> | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part))) return undefined
  const bytes = parts.map(Number)
  return bytes.every((byte) => byte <= 255) ? bytes : undefined
}

const isPublicV4 = ([a, b, c]: ReadonlyArray<number>): boolean => {
  if (a === 0 || a === 10 || a === 127) return false
  if (a === 100 && b! >= 64 && b! <= 127) return false
  if (a === 169 && b === 254) return false
  if (a === 172 && b! >= 16 && b! <= 31) return false
  if (a === 192 && b === 168) return false
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false
  if (a === 198 && (b === 18 || b === 19)) return false
  if (a === 198 && b === 51 && c === 100) return false
  if (a === 203 && b === 0 && c === 113) return false
  return a! < 224
}

const parseV6 = (text: string): ReadonlyArray<number> | undefined => {
  if (!/^[0-9a-f:.]+$/.test(text) || !text.includes(":")) return undefined
  let tail: Array<number> = []
  let body = text
  const lastColon = text.lastIndexOf(":")
  if (text.slice(lastColon + 1).includes(".")) {
    const v4 = parseV4(text.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    tail = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!]
    body = text.slice(0, lastColon + 1) + "0"
  }
  const halves = body.split("::")
  if (halves.length > 2) return undefined
  const groups = (half: string) => (half === "" ? [] : half.split(":"))
  const head = groups(halves[0]!)
  const rest = halves.length === 2 ? groups(halves[1]!) : []
  if (![...head, ...rest].every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined
  const wanted = 8 - (tail.length > 0 ? 2 : 0)
  const given = head.length + rest.length - (tail.length > 0 ? 1 : 0)
  if (halves.length === 1 ? given !== wanted : given >= wanted) return undefined
  const headValues = head.map((group) => Number.parseInt(group, 16))
  const restValues = rest.map((group) => Number.parseInt(group, 16))
  if (tail.length > 0) (restValues.length > 0 ? restValues : headValues).pop()
  const zeros = new Array<number>(8 - tail.length - headValues.length - restValues.length).fill(0)
  return [...headValues, ...zeros, ...restValues, ...tail]
}

/**
 * A webhook URL as given by its owner: absolute, `https` (or `http` where private receivers are
 * allowed), without user information, and, when its host is an address literal, a public one
 * (unless private receivers are allowed). Host names are resolved and checked when delivering.
 */
export const checkUrl = (raw: unknown, allowPrivate: boolean): Result.Result<string, InvalidRequest> => {
  const refuse = (why: string) => Result.fail(new InvalidRequest({ parameter: "webhook_url", message: `webhook_url ${why}` }))
  if (typeof raw !== "string" || raw.length === 0 || raw.length > 2048) return refuse("accepts an absolute https URL of at most 2048 characters")
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return refuse(`accepts an absolute https URL; got ${JSON.stringify(raw.slice(0, 100))}`)
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    return refuse(allowPrivate ? "accepts an http or https URL" : "accepts an https URL (http is allowed only where DROPSHELF_WEBHOOKS_ALLOW_PRIVATE=true)")
  }
  if (url.username !== "" || url.password !== "") return refuse("may not carry a user name or password")
  if (url.hash !== "") return refuse("may not carry a fragment")
  const host = url.hostname.replace(/^\[|\]$/g, "")
  const literal = parseV4(host) !== undefined || parseV6(host.toLowerCase()) !== undefined
  if (!allowPrivate && (host === "localhost" || host.endsWith(".localhost") || (literal && !isPublicAddress(host)))) {
    return refuse("must name a public host (private and loopback addresses are allowed only where DROPSHELF_WEBHOOKS_ALLOW_PRIVATE=true)")
  }
  return Result.succeed(url.toString())
}
