import { Effect, Result } from "effect"
import { InvalidRequest } from "./errors.ts"
import { storable } from "./Text.ts"
import { Digest, SecureRandom } from "effect/crypto"

/*
 * A key is `dsk_`, 43 random base62 characters (256 bits) and 6 base62 characters of the
 * CRC-32 of everything before them, the shape of GitHub's tokens: a mistyped or made-up key is
 * refused without a look-up, and a secret scanner can tell a real key from look-alike text.
 * Keys issued before the checksum (`ds_live_` + 43 base64url characters) keep working until
 * revoked; none is issued any more (docs/decisions/0009-keys-and-refused-requests.md).
 */

/** Every key issued starts with this, so a leaked one is easy to recognise and to scan for. */
export const KEY_MARKER = "dsk_"
/** The start of a connected application's key prefix: it has no secret of this shape (its grant is the secret). */
export const APPLICATION_PREFIX = "app_"
/** The start of a key of the earlier format, which carries no checksum. */
export const LEGACY_KEY_MARKER = "ds_live_"

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const RANDOM_LENGTH = 43
const CHECKSUM_LENGTH = 6
/** Characters of the random part shown in listings of keys and used to revoke one. */
const PREFIX_RANDOM_LENGTH = 8

/** What a secret scanner can match: a key of the current format, checksum included. */
export const KEY_PATTERN = `${KEY_MARKER}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}`
const keyShape = new RegExp(`^${KEY_PATTERN}$`)
const legacyShape = /^ds_live_[A-Za-z0-9_-]{43}$/

/** `current`: issued today, with a checksum; `legacy`: the earlier format, looked up only while one lives. */
export type KeyFormat = "current" | "legacy"

/** The format a bearer secret has the shape of, or `undefined` when it is no key at all. */
export const formatOf = (secret: string): KeyFormat | undefined =>
  keyShape.test(secret) ? "current" : legacyShape.test(secret) ? "legacy" : undefined

export const isWellFormedKey = (secret: string): boolean => formatOf(secret) !== undefined

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let bit = 0; bit < 8; bit++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/** CRC-32 (the zlib / ISO-HDLC polynomial) of an ASCII text. */
export const crc32 = (ascii: string): number => {
  let crc = 0xFFFFFFFF
  for (let index = 0; index < ascii.length; index++) crc = CRC_TABLE[(crc ^ ascii.charCodeAt(index)) & 0xFF]! ^ (crc >>> 8)
  return (crc ^ 0xFFFFFFFF) >>> 0
}

/** The 6-character checksum of a key's start: its CRC-32 in base62 (`0-9A-Za-z`), zero-padded. */
export const checksumOf = (start: string): string => {
  let value = crc32(start)
  let text = ""
  for (let digit = 0; digit < CHECKSUM_LENGTH; digit++) {
    text = BASE62[value % 62]! + text
    value = Math.floor(value / 62)
  }
  return text
}

/** Whether a key of the current format ends with the checksum of the rest. */
export const hasValidChecksum = (secret: string): boolean =>
  checksumOf(secret.slice(0, -CHECKSUM_LENGTH)) === secret.slice(-CHECKSUM_LENGTH)

/** The non-secret part shown in listings of keys and used to revoke one: the marker and 8 characters. */
export const prefixOf = (secret: string): string =>
  secret.slice(0, (secret.startsWith(LEGACY_KEY_MARKER) ? LEGACY_KEY_MARKER : KEY_MARKER).length + PREFIX_RANDOM_LENGTH)

export const digestOf = Effect.fnUntraced(function*(secret: string) {
  const digest = yield* Digest.Digest
  return yield* digest.digestHex(Digest.sha256, new TextEncoder().encode(secret))
})

/** 248 = 4 × 62: bytes at or above it are drawn again, so every character is equally likely. */
const UNBIASED_BELOW = BASE62.length * Math.floor(256 / BASE62.length)

/** A new key (256 random bits and its checksum); shown once, stored only as its digest. */
export const generateSecret = Effect.gen(function*() {
  const random = yield* SecureRandom.SecureRandom
  let start = KEY_MARKER
  const length = KEY_MARKER.length + RANDOM_LENGTH
  while (start.length < length) {
    for (const byte of yield* random.randomBytes(64)) {
      if (byte >= UNBIASED_BELOW) continue
      start += BASE62[byte % BASE62.length]
      if (start.length === length) break
    }
  }
  return start + checksumOf(start)
})

/** Whether a stored key authenticates at `now`: neither revoked nor past its expiry (expired reads as revoked). */
export const isLiveAt = (key: { readonly revokedAt: number | null; readonly expiresAt: number | null }, now: number): boolean =>
  key.revokedAt === null && (key.expiresAt === null || now < key.expiresAt)

/** What an operator's list says of a key at `now`. */
export type KeyState = "live" | "expired" | "revoked"

export const keyStateAt = (key: { readonly revokedAt: number | null; readonly expiresAt: number | null }, now: number): KeyState =>
  key.revokedAt !== null ? "revoked" : isLiveAt(key, now) ? "live" : "expired"

/** The longest name a person may give a key: a label, shown in lists. */
export const MAX_NAME_LENGTH = 100

/** A key's name as a person typed it, trimmed: 1 to MAX_NAME_LENGTH storable characters. */
export const decodeName = (text: string): Result.Result<string, InvalidRequest> =>
  Result.flatMap(storable("name", text.trim()), (name) =>
    name.length === 0 || name.length > MAX_NAME_LENGTH
      ? Result.fail(new InvalidRequest({ parameter: "name", message: `name accepts 1 to ${MAX_NAME_LENGTH} characters` }))
      : Result.succeed(name))

/**
 * The name a connected application's key is listed under: the name it registered with, as
 * storable text (a NUL or lone surrogate becomes U+FFFD) of at most MAX_NAME_LENGTH characters;
 * without one, its client id.
 */
export const applicationName = (clientName: string | undefined, clientId: string): string => {
  const name = (clientName ?? "").replaceAll("\u0000", "\uFFFD").toWellFormed().trim()
  return Array.from(name === "" ? clientId : name).slice(0, MAX_NAME_LENGTH).join("")
}
