import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Mac, SecureRandom } from "effect/crypto"
import fc from "fast-check"
import { layerCrypto } from "../src/Runtime.ts"

/*
 * The server signs cursors with its own HMAC primitive (node:crypto with each key imported
 * once). Whatever the key and the data, tags must be Web Crypto's, and a key used again must
 * still give its own tags, not those of the key before it.
 */

const tagsOf = (keyBytes: Uint8Array, data: Uint8Array) =>
  Effect.gen(function*() {
    const mac = yield* Mac.Mac
    const key = yield* Mac.key(Mac.hmacSha256, keyBytes)
    return { tag: yield* mac.sign(key, data), valid: yield* mac.verify(key, yield* mac.sign(key, data), data) }
  })

describe("the CLI's crypto layer", () => {
  it.effect("HMAC-SHA-256 tags equal Web Crypto's for any key and data, a key reused included", () =>
    Effect.promise(() =>
      fc.assert(fc.asyncProperty(
        fc.array(fc.record({ key: fc.uint8Array({ minLength: 1, maxLength: 80 }), data: fc.uint8Array({ maxLength: 200 }) }), {
          minLength: 1,
          maxLength: 4
        }),
        async (cases) => {
          for (const { data, key } of [...cases, ...cases]) {
            const ours = await Effect.runPromise(tagsOf(key, data).pipe(Effect.provide(layerCrypto)))
            const webCrypto = await Effect.runPromise(tagsOf(key, data).pipe(Effect.provide(Mac.layerWebCrypto), Effect.provide(SecureRandom.layerWebCrypto)))
            assert.deepStrictEqual(ours.tag, webCrypto.tag)
            assert.isTrue(ours.valid)
          }
        }
      ), { numRuns: 50 })
    ))
})
