import { Effect } from "effect"
import { Digest, SecureRandom } from "effect/crypto"
import { Base64Url } from "effect/encoding"

/** Every key starts with this, so a leaked one is easy to recognise and to scan for. */
export const KEY_MARKER = "ds_live_"
const SECRET_BYTES = 32
const PREFIX_LENGTH = KEY_MARKER.length + 8
const keyShape = /^ds_live_[A-Za-z0-9_-]{43}$/

export const isWellFormedKey = (secret: string): boolean => keyShape.test(secret)

/** The non-secret part shown in listings of keys and used to revoke one. */
export const prefixOf = (secret: string): string => secret.slice(0, PREFIX_LENGTH)

export const digestOf = Effect.fnUntraced(function*(secret: string) {
  const digest = yield* Digest.Digest
  return yield* digest.digestHex(Digest.sha256, new TextEncoder().encode(secret))
})

/** A new high-entropy secret (256 bits); shown once, stored only as its digest. */
export const generateSecret = Effect.gen(function*() {
  const random = yield* SecureRandom.SecureRandom
  const bytes = yield* random.randomBytes(SECRET_BYTES)
  return `${KEY_MARKER}${Base64Url.encode(bytes)}`
})
