import { assert, describe, it } from "@effect/vitest"
import { ApiKey } from "@dropshelf/core"
import { Effect } from "effect"
import { SecureRandom } from "effect/crypto"
import fc from "fast-check"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { crc32 } from "node:zlib"

const secureRandom = SecureRandom.layerWebCrypto

const scanner = new RegExp(`\\b${ApiKey.KEY_PATTERN}\\b`, "g")

describe("API key format", () => {
  it("the checksum is CRC-32 as zlib computes it, in 6 base62 digits", () => {
    assert.strictEqual(ApiKey.crc32("123456789"), 0xCBF43926)
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom(..."dsk_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") }), (text) => {
      assert.strictEqual(ApiKey.crc32(text), crc32(text))
      assert.match(ApiKey.checksumOf(text), /^[0-9A-Za-z]{6}$/)
    }))
    // The largest CRC-32 still fits: 62^6 > 2^32.
    assert.isAbove(62 ** 6, 0xFFFFFFFF)
  })

  it.effect("a new key is dsk_, 43 base62 characters and their checksum; a scanner's regex finds it in text", () =>
    Effect.gen(function*() {
      const keys = new Set<string>()
      for (let n = 0; n < 200; n++) {
        const secret = yield* ApiKey.generateSecret
        assert.match(secret, /^dsk_[0-9A-Za-z]{49}$/)
        assert.strictEqual(ApiKey.formatOf(secret), "current")
        assert.isTrue(ApiKey.hasValidChecksum(secret))
        assert.strictEqual(secret.slice(-6), ApiKey.checksumOf(secret.slice(0, -6)))
        assert.strictEqual(ApiKey.prefixOf(secret), secret.slice(0, 12))
        assert.deepStrictEqual(`export KEY="${secret}";`.match(scanner), [secret])
        keys.add(secret)
      }
      assert.strictEqual(keys.size, 200)
    }).pipe(Effect.provide(secureRandom)))

  it.effect("any change to one character of a key breaks its checksum", () =>
    Effect.gen(function*() {
      const secret = yield* ApiKey.generateSecret
      const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
      fc.assert(fc.property(fc.integer({ min: 4, max: secret.length - 1 }), fc.constantFrom(...alphabet), (at, char) => {
        fc.pre(secret[at] !== char)
        const edited = secret.slice(0, at) + char + secret.slice(at + 1)
        assert.strictEqual(ApiKey.formatOf(edited), "current")
        assert.isFalse(ApiKey.hasValidChecksum(edited))
      }))
    }).pipe(Effect.provide(secureRandom)))

  it("keys of the earlier format are still recognised, with their 16-character prefix", () => {
    const legacy = `ds_live_${"Ab-_".repeat(10)}xyz`
    assert.strictEqual(ApiKey.formatOf(legacy), "legacy")
    assert.strictEqual(ApiKey.prefixOf(legacy), "ds_live_Ab-_Ab-_")
    assert.isNull(legacy.match(scanner))
    for (const text of ["", "dsk_", `dsk_${"A".repeat(48)}`, `dsk_${"A".repeat(50)}`, `dsk_${"-".repeat(49)}`, `ds_live_${"A".repeat(42)}`, `DSK_${"A".repeat(49)}`]) {
      assert.isUndefined(ApiKey.formatOf(text), text)
    }
  })

  it.effect("the checker printed in docs/api.md accepts every new key and refuses an edited one", () =>
    Effect.gen(function*() {
      const guide = readFileSync(new URL("../../../docs/api.md", import.meta.url), "utf8")
      const script = /```js key-check\.mjs\n([\s\S]*?)```/.exec(guide)?.[1]
      assert.isDefined(script)
      assert.include(guide, "\\bdsk_[0-9A-Za-z]{49}\\b")
      assert.include(guide, ApiKey.KEY_PATTERN)
      const dir = mkdtempSync(join(tmpdir(), "dropshelf-key-check-"))
      try {
        writeFileSync(join(dir, "key-check.mjs"), script!)
        const { isDropshelfKey } = yield* Effect.promise(() => import(pathToFileURL(join(dir, "key-check.mjs")).href))
        for (let n = 0; n < 50; n++) {
          const secret = yield* ApiKey.generateSecret
          assert.isTrue(isDropshelfKey(secret))
          const last = secret.at(-1) === "0" ? "1" : "0"
          assert.isFalse(isDropshelfKey(secret.slice(0, -1) + last))
        }
        assert.isFalse(isDropshelfKey(`ds_live_${"A".repeat(43)}`))
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }).pipe(Effect.provide(secureRandom)))
})
