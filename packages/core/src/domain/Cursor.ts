import { Context, Effect, Layer, Result } from "effect"
import { Mac } from "effect/crypto"
import { Base64Url } from "effect/encoding"
import { InvalidRequest } from "./errors.ts"
import type { ListingId } from "./Ids.ts"
import { isListingId } from "./Ids.ts"
import type { ListOrder } from "./ListQuery.ts"
import type { Instant } from "./Time.ts"

/** The keyset position after the last row of a page, for one ordering. */
export type CursorPosition =
  | { readonly order: "id"; readonly id: ListingId }
  | { readonly order: "latest"; readonly discoveredAt: Instant; readonly id: ListingId }

/** The secret cursors are signed with; every instance of one deployment must share it. */
export class CursorSecret extends Context.Service<CursorSecret, Uint8Array>()("@dropshelf/core/CursorSecret") {}

const refused = (message: string) => new InvalidRequest({ parameter: "cursor", message })
const notIssued = () => refused("cursor accepts only a next_cursor value issued by this endpoint, unchanged")

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** The text a cursor signs: one per position, so also a position's key where one is kept. */
export const serialize = (position: CursorPosition): string =>
  position.order === "id" ? `i:${position.id}` : `l:${position.discoveredAt}:${position.id}`

const deserialize = (text: string): CursorPosition | undefined => {
  const parts = text.split(":")
  if (parts[0] === "i" && parts.length === 2 && isListingId(parts[1]!)) return { order: "id", id: parts[1] }
  if (parts[0] === "l" && parts.length === 3 && /^-?\d+$/.test(parts[1]!) && isListingId(parts[2]!)) {
    return { order: "latest", discoveredAt: Number(parts[1]), id: parts[2] }
  }
  return undefined
}

/**
 * Opaque, tamper-evident cursors: the position, then an HMAC-SHA-256 tag over it, both
 * base64url. Any edit (lower-casing included) breaks the tag; a cursor of the other ordering
 * is refused by name.
 */
export class CursorCodec extends Context.Service<CursorCodec, {
  readonly issue: (position: CursorPosition) => Effect.Effect<string>
  readonly read: (cursor: string, order: ListOrder) => Effect.Effect<CursorPosition, InvalidRequest>
}>()("@dropshelf/core/CursorCodec") {
  static readonly layer = Layer.effect(
    CursorCodec,
    Effect.gen(function*() {
      const mac = yield* Mac.Mac
      const secret = yield* CursorSecret
      const key = yield* Mac.key(Mac.hmacSha256, secret).pipe(Effect.orDie)

      const issue = Effect.fnUntraced(function*(position: CursorPosition) {
        const body = encoder.encode(serialize(position))
        const tag = yield* mac.sign(key, body).pipe(Effect.orDie)
        return `${Base64Url.encode(body)}.${Base64Url.encode(tag)}`
      })

      const inOrder = (position: CursorPosition, order: ListOrder) =>
        position.order === order ? Effect.succeed(position) : Effect.fail(refused(
          `cursor belongs to the ${position.order === "latest" ? "sort=latest" : "default (ascending id)"} ordering; pass the same sort on every page`
        ))

      const read = Effect.fnUntraced(function*(cursor: string, order: ListOrder) {
        const [bodyText, tagText, ...rest] = cursor.split(".")
        if (bodyText === undefined || tagText === undefined || rest.length > 0) return yield* notIssued()
        const body = Base64Url.decode(bodyText)
        const tag = Base64Url.decode(tagText)
        if (Result.isFailure(body) || Result.isFailure(tag)) return yield* notIssued()
        // Re-encoding must give back the same text, so no two spellings of one cursor are accepted.
        if (Base64Url.encode(body.success) !== bodyText || Base64Url.encode(tag.success) !== tagText) {
          return yield* notIssued()
        }
        const valid = yield* mac.verify(key, tag.success, body.success).pipe(Effect.orDie)
        if (!valid) return yield* notIssued()
        const position = deserialize(decoder.decode(body.success))
        if (position === undefined) return yield* notIssued()
        return yield* inOrder(position, order)
      })

      return CursorCodec.of({ issue, read })
    })
  )
}
