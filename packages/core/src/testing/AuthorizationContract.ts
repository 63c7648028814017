import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { MINUTE } from "../domain/Time.ts"
import { AccountStore } from "../ports/AccountStore.ts"
import { AuthorizationStore } from "../ports/AuthorizationStore.ts"
import { KeyStore } from "../ports/KeyStore.ts"

/**
 * The contract of `AuthorizationStore`, and of a key that is a connected application, run by
 * each adapter with its own layer (built afresh for every test): documents come back as written
 * until they expire, by id, uid or user code; a consumed one says when; revoking a grant takes
 * all of its documents; `keep` lets the first writer win.
 */
export const suite = (name: string, layer: Layer.Layer<AuthorizationStore | AccountStore | KeyStore>) => {
  const run = <A, E>(effect: Effect.Effect<A, E, AuthorizationStore | AccountStore | KeyStore>) => Effect.provide(effect, layer)
  const T0 = Date.UTC(2026, 5, 1, 12)

  describe(`${name}: authorization documents`, () => {
    it.live("a document comes back as written, by id, uid and user code, until it expires", () =>
      run(Effect.gen(function*() {
        const store = yield* AuthorizationStore
        // A client's metadata is anyone's text: a NUL and a lone surrogate come back as written.
        const payload = { jti: "s1", uid: "u1", nested: { list: [1, "two", null] }, text: "ünïcødé ✓", odd: "a\u0000b\ud800" }
        yield* store.upsert({ kind: "Session", id: "s1", payload, expiresAt: T0 + MINUTE, uid: "u1" })
        yield* store.upsert({ kind: "DeviceCode", id: "d1", payload: { userCode: "ABCD" }, expiresAt: null, userCode: "ABCD" })
        assert.deepStrictEqual(yield* store.find("Session", "s1", T0), payload)
        assert.deepStrictEqual(yield* store.findByUid("Session", "u1", T0), payload)
        assert.deepStrictEqual(yield* store.findByUserCode("DeviceCode", "ABCD", T0 + 1000 * MINUTE), { userCode: "ABCD" })
        assert.isUndefined(yield* store.find("Session", "s1", T0 + MINUTE))
        assert.isUndefined(yield* store.findByUid("Session", "u1", T0 + MINUTE))
        assert.isUndefined(yield* store.find("Grant", "s1", T0))
        assert.isUndefined(yield* store.find("Session", "nope", T0))
      })))

    it.live("writing again replaces the document; destroy removes it; prune removes the expired only", () =>
      run(Effect.gen(function*() {
        const store = yield* AuthorizationStore
        yield* store.upsert({ kind: "Interaction", id: "i1", payload: { step: 1 }, expiresAt: T0 + MINUTE })
        yield* store.upsert({ kind: "Interaction", id: "i1", payload: { step: 2 }, expiresAt: T0 + 2 * MINUTE })
        assert.deepStrictEqual(yield* store.find("Interaction", "i1", T0 + MINUTE), { step: 2 })
        yield* store.destroy("Interaction", "i1")
        assert.isUndefined(yield* store.find("Interaction", "i1", T0))
        yield* store.upsert({ kind: "AccessToken", id: "old", payload: {}, expiresAt: T0 })
        yield* store.upsert({ kind: "AccessToken", id: "new", payload: {}, expiresAt: T0 + MINUTE })
        yield* store.upsert({ kind: "Client", id: "kept", payload: {}, expiresAt: null })
        assert.isAtLeast(yield* store.prune(T0), 1)
        assert.deepStrictEqual(yield* store.find("AccessToken", "new", T0), {})
        assert.deepStrictEqual(yield* store.find("Client", "kept", T0), {})
      })))

    it.live("a consumed document says when, the first time only", () =>
      run(Effect.gen(function*() {
        const store = yield* AuthorizationStore
        yield* store.upsert({ kind: "AuthorizationCode", id: "c1", payload: { grantId: "g1" }, expiresAt: T0 + MINUTE, grantId: "g1" })
        yield* store.consume("AuthorizationCode", "c1", T0 + 1_500)
        yield* store.consume("AuthorizationCode", "c1", T0 + 30_000)
        assert.deepStrictEqual(yield* store.find("AuthorizationCode", "c1", T0 + 2_000), { grantId: "g1", consumed: Math.floor((T0 + 1_500) / 1000) })
      })))

    it.live("revoking a grant removes every document of it, and no other", () =>
      run(Effect.gen(function*() {
        const store = yield* AuthorizationStore
        for (const [kind, id, grantId] of [["Grant", "g1", "g1"], ["AccessToken", "a1", "g1"], ["RefreshToken", "r1", "g1"], ["AccessToken", "a2", "g2"]] as const) {
          yield* store.upsert({ kind, id, payload: { id }, expiresAt: T0 + MINUTE, grantId })
        }
        yield* store.revokeGrant("g1")
        for (const [kind, id] of [["Grant", "g1"], ["AccessToken", "a1"], ["RefreshToken", "r1"]] as const) {
          assert.isUndefined(yield* store.find(kind, id, T0))
        }
        assert.deepStrictEqual(yield* store.find("AccessToken", "a2", T0), { id: "a2" })
      })))

    it.live("keep writes a document once and returns the one kept", () =>
      run(Effect.gen(function*() {
        const store = yield* AuthorizationStore
        const kept = yield* Effect.all([store.keep("Secrets", "server", { n: 1 }), store.keep("Secrets", "server", { n: 2 })], {
          concurrency: 2
        })
        assert.deepStrictEqual(kept[0], kept[1])
        assert.deepStrictEqual(yield* store.keep("Secrets", "server", { n: 3 }), kept[0])
      })))

    it.live("a key that is a connected application keeps its application, found by digest and prefix", () =>
      run(Effect.gen(function*() {
        const keys = yield* KeyStore
        const account = yield* AccountStore.use((accounts) => accounts.create({ name: "apps", plan: "pro", at: T0 }))
        const application = { clientId: "https://client.example/meta.json", clientName: "Assistant", grantId: "g-1", scopes: ["read", "hold"] as const }
        const created = yield* keys.create({
          accountId: account.id,
          name: "Assistant",
          prefix: "app_abcdefgh",
          digest: "d".repeat(64),
          application: { ...application, scopes: [...application.scopes] },
          liveLimit: 5,
          at: T0
        })
        assert.deepStrictEqual(created.application, { ...application, scopes: ["read", "hold"] })
        assert.deepStrictEqual((yield* keys.findByDigest("d".repeat(64)))?.key.application, created.application)
        assert.deepStrictEqual((yield* keys.findByPrefix("app_abcdefgh"))?.key.application, created.application)
        const plain = yield* keys.create({ accountId: account.id, name: "laptop", prefix: "dsk_abcdefgh", digest: "e".repeat(64), liveLimit: 5, at: T0 })
        assert.isTrue(plain.application === null || plain.application === undefined)
      })))
  })
}
