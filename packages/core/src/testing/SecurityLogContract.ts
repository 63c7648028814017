import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { MINUTE } from "../domain/Time.ts"
import { AccountStore } from "../ports/AccountStore.ts"
import { SecurityLogStore } from "../ports/SecurityLogStore.ts"

/**
 * The contract of `SecurityLogStore`, run by each adapter with its own layer (built afresh for
 * every test): events come back as recorded, the last first, one account's only, in pages; a
 * kind the core does not know yet is kept as it came.
 */
export const suite = (name: string, layer: Layer.Layer<AccountStore | SecurityLogStore>) => {
  const run = <A, E>(effect: Effect.Effect<A, E, AccountStore | SecurityLogStore>) => Effect.provide(effect, layer)
  const T0 = Date.UTC(2026, 5, 1, 12)
  const account = (label: string) => AccountStore.use((accounts) => accounts.create({ name: label, plan: "pro", at: T0 }))

  describe(`${name}: security logs`, () => {
    it.live("an account's events come back as recorded, the last first, in pages; another account's never", () =>
      run(Effect.gen(function*() {
        const store = yield* SecurityLogStore
        const owner = yield* account("log-owner")
        const other = yield* account("log-other")
        const first = yield* store.record({ accountId: owner.id, kind: "key.created", at: T0, detail: "dsk_abcdefgh (laptop)" })
        yield* store.record({ accountId: other.id, kind: "session.signed_in", at: T0 + MINUTE, detail: "link" })
        const second = yield* store.record({ accountId: owner.id, kind: "passkey.added", at: T0 + 2 * MINUTE, detail: null })
        const third = yield* store.record({ accountId: owner.id, kind: "session.signed_out", at: T0 + 3 * MINUTE, detail: null })
        assert.deepStrictEqual(first, { id: first.id, accountId: owner.id, kind: "key.created", at: T0, detail: "dsk_abcdefgh (laptop)" })
        assert.isTrue(Number(first.id) < Number(second.id) && Number(second.id) < Number(third.id))

        const all = yield* store.forAccount(owner.id, { after: undefined, limit: 10 })
        assert.deepStrictEqual(all, [third, second, first])
        const page1 = yield* store.forAccount(owner.id, { after: undefined, limit: 2 })
        assert.deepStrictEqual(page1, [third, second])
        assert.deepStrictEqual(yield* store.forAccount(owner.id, { after: second.id, limit: 2 }), [first])
        assert.deepStrictEqual(yield* store.forAccount(owner.id, { after: first.id, limit: 2 }), [])
        assert.deepStrictEqual((yield* store.forAccount(other.id, { after: undefined, limit: 10 })).map((event) => event.kind), ["session.signed_in"])
      })))
  })
}
