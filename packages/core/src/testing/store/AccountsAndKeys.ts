import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as Errors from "../../domain/errors.ts"
import { DAY, HOUR } from "../../domain/Time.ts"
import { AccountStore } from "../../ports/AccountStore.ts"
import { KeyStore } from "../../ports/KeyStore.ts"
import { type Run, T0 } from "./Stores.ts"

export const suite = (name: string, run: Run) => {
  describe(`${name}: accounts and keys`, () => {
    it.live("accounts are created, found and moved between plans", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore
        const account = yield* accounts.create({ name: "Acme", plan: "pro", at: T0 })
        assert.deepStrictEqual(yield* accounts.find(account.id), account)
        const lapsed = yield* accounts.setPlan(account.id, "lapsed")
        assert.strictEqual(lapsed.plan, "lapsed")
        assert.strictEqual((yield* accounts.find(account.id))!.plan, "lapsed")
        const missing = yield* Effect.flip(accounts.setPlan("acct_nosuch", "pro"))
        assert.deepStrictEqual(missing, new Errors.AccountNotFound({ accountId: "acct_nosuch" }))
        assert.strictEqual(yield* accounts.find("acct_nosuch"), undefined)
      })))

    it.live("an owner's email: none at first, set, cleared, unique among accounts case aside", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore
        const plain = yield* accounts.create({ name: "Plain", plan: "free", at: T0 })
        assert.strictEqual(plain.email, null)
        const owned = yield* accounts.create({ name: "Owned", plan: "pro", at: T0, email: "Owner@Example.com" })
        assert.strictEqual(owned.email, "Owner@Example.com")
        assert.deepStrictEqual(yield* accounts.find(owned.id), owned)
        assert.deepStrictEqual(yield* accounts.findByEmail("owner@EXAMPLE.com"), owned)
        assert.strictEqual(yield* accounts.findByEmail("nobody@example.com"), undefined)
        assert.deepStrictEqual(
          yield* Effect.flip(accounts.create({ name: "Copy", plan: "free", at: T0, email: "owner@example.COM" })),
          new Errors.EmailTaken({ email: "owner@example.COM" })
        )
        assert.deepStrictEqual(
          yield* Effect.flip(accounts.setEmail(plain.id, "OWNER@example.com")),
          new Errors.EmailTaken({ email: "OWNER@example.com" })
        )
        // An account may write its own address in another case.
        assert.strictEqual((yield* accounts.setEmail(owned.id, "owner@example.com")).email, "owner@example.com")
        assert.strictEqual((yield* accounts.setEmail(plain.id, "plain@example.com")).email, "plain@example.com")
        assert.strictEqual((yield* accounts.find(plain.id))!.email, "plain@example.com")
        // Cleared, the address is free for another account; two accounts may have none.
        assert.strictEqual((yield* accounts.setEmail(owned.id, null)).email, null)
        assert.strictEqual(yield* accounts.findByEmail("owner@example.com"), undefined)
        assert.strictEqual((yield* accounts.setEmail(plain.id, "Owner@Example.com")).email, "Owner@Example.com")
        yield* accounts.setEmail(plain.id, null)
        assert.deepStrictEqual(
          yield* Effect.flip(accounts.setEmail("acct_nosuch", "x@example.com")),
          new Errors.AccountNotFound({ accountId: "acct_nosuch" })
        )
      })))

    it.live("keys: the live ceiling, look-up by digest, touch and revoke", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore
        const keys = yield* KeyStore
        const account = yield* accounts.create({ name: "Acme", plan: "free", at: T0 })
        const make = (n: number) =>
          keys.create({ accountId: account.id, name: `k${n}`, prefix: `ds_live_pref000${n}`, digest: `digest-${n}`, liveLimit: 2, at: T0 })
        const first = yield* make(1)
        yield* make(2)
        assert.deepStrictEqual(yield* Effect.flip(make(3)), new Errors.KeyLimitReached({ limit: 2 }))
        const found = (yield* keys.findByDigest("digest-1"))!
        assert.strictEqual(found.key.id, first.id)
        assert.strictEqual(found.account.id, account.id)
        assert.strictEqual(found.key.lastUsedAt, null)
        yield* keys.touch(first.id, T0 + HOUR)
        assert.strictEqual((yield* keys.findByDigest("digest-1"))!.key.lastUsedAt, T0 + HOUR)
        const revoked = yield* keys.revoke("ds_live_pref0001", T0 + 2 * HOUR)
        assert.strictEqual(revoked.revokedAt, T0 + 2 * HOUR)
        assert.strictEqual((yield* keys.findByDigest("digest-1"))!.key.revokedAt, T0 + 2 * HOUR)
        const third = yield* Effect.exit(make(3))
        assert.isTrue(Exit.isSuccess(third))
        assert.deepStrictEqual(yield* Effect.flip(keys.revoke("ds_live_nosuch00", T0)), new Errors.KeyNotFound({ prefix: "ds_live_nosuch00" }))
        assert.strictEqual(yield* keys.findByDigest("digest-unknown"), undefined)
      })))

    it.live("a key's id is key_ and letters or digits: the rate limiter's other counters cannot share its name", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore
        const keys = yield* KeyStore
        const account = yield* accounts.create({ name: "Ids", plan: "business", at: T0 })
        for (let n = 0; n < 3; n++) {
          const key = yield* keys.create({ accountId: account.id, name: "k", prefix: `dsk_idshape${n}`, digest: `id-digest-${n}`, liveLimit: 10, at: T0 })
          assert.match(key.id, /^key_[A-Za-z0-9]+$/)
        }
      })))

    it.live("keys that expire: the ceiling counts keys live at the time, rotation retires the old key at the latest by its grace", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore
        const keys = yield* KeyStore
        const account = yield* accounts.create({ name: "Expiring", plan: "free", at: T0 })
        const make = (n: number, at: number, expiresAt: number | null = null) =>
          keys.create({ accountId: account.id, name: `e${n}`, prefix: `dsk_expire0${n}`, digest: `expire-${n}`, liveLimit: 2, at, expiresAt })
        const short = yield* make(1, T0, T0 + HOUR)
        assert.strictEqual(short.expiresAt, T0 + HOUR)
        const lasting = yield* make(2, T0 + 1)
        assert.strictEqual(lasting.expiresAt, null)
        assert.deepStrictEqual(yield* Effect.flip(make(3, T0 + 2)), new Errors.KeyLimitReached({ limit: 2 }))
        // Past its expiry the first key no longer counts against the ceiling.
        const third = yield* make(3, T0 + 2 * HOUR)
        assert.strictEqual((yield* keys.findByPrefix("dsk_expire01"))!.key.expiresAt, T0 + HOUR)
        assert.strictEqual((yield* keys.findByPrefix("dsk_expire01"))!.account.id, account.id)
        assert.strictEqual(yield* keys.findByPrefix("dsk_nosuchkey"), undefined)

        // The account is full (two live keys), yet the key being retired makes room for its successor.
        const at = T0 + 3 * HOUR
        const rotated = yield* keys.rotate({
          prefix: "dsk_expire02",
          successor: { name: "e2", prefix: "dsk_expire04", digest: "expire-4", expiresAt: null },
          liveLimit: 2,
          retireAt: at + DAY,
          at
        })
        assert.strictEqual(rotated.retired.id, lasting.id)
        assert.strictEqual(rotated.retired.expiresAt, at + DAY)
        assert.strictEqual(rotated.retired.revokedAt, null)
        assert.strictEqual(rotated.successor.accountId, account.id)
        assert.strictEqual(rotated.successor.createdAt, at)
        assert.strictEqual((yield* keys.findByDigest("expire-4"))!.key.id, rotated.successor.id)
        // An expired, revoked or unknown key has nothing to rotate.
        const successor = { name: "x", prefix: "dsk_expire05", digest: "expire-5", expiresAt: null }
        assert.deepStrictEqual(
          yield* Effect.flip(keys.rotate({ prefix: "dsk_expire01", successor, liveLimit: 9, retireAt: at, at })),
          new Errors.KeyNotFound({ prefix: "dsk_expire01" })
        )
        yield* keys.revoke("dsk_expire03", at)
        assert.deepStrictEqual(
          yield* Effect.flip(keys.rotate({ prefix: "dsk_expire03", successor, liveLimit: 9, retireAt: at, at })),
          new Errors.KeyNotFound({ prefix: "dsk_expire03" })
        )
        assert.deepStrictEqual(
          yield* Effect.flip(keys.rotate({ prefix: "dsk_nosuchkey", successor, liveLimit: 9, retireAt: at, at })),
          new Errors.KeyNotFound({ prefix: "dsk_nosuchkey" })
        )
        // Over the ceiling even without the retiring key: refused, and nothing written.
        assert.deepStrictEqual(
          yield* Effect.flip(keys.rotate({ prefix: "dsk_expire04", successor, liveLimit: 1, retireAt: at, at })),
          new Errors.KeyLimitReached({ limit: 1 })
        )
        assert.strictEqual(yield* keys.findByDigest("expire-5"), undefined)
        assert.strictEqual((yield* keys.findByPrefix("dsk_expire04"))!.key.expiresAt, null)
        // A rotation never postpones an expiry already set.
        const again = yield* keys.rotate({ prefix: "dsk_expire02", successor, liveLimit: 9, retireAt: at + 2 * DAY, at: at + HOUR })
        assert.strictEqual(again.retired.expiresAt, at + DAY)

        const listed = yield* keys.forAccount(account.id, { after: undefined, limit: 10 })
        assert.deepStrictEqual(listed.map((key) => key.prefix), ["dsk_expire01", "dsk_expire02", "dsk_expire03", "dsk_expire04", "dsk_expire05"])
        assert.strictEqual(listed[2]!.revokedAt, at)
        const second = yield* keys.forAccount(account.id, { after: listed[1]!.id, limit: 2 })
        assert.deepStrictEqual(second.map((key) => key.id), [third.id, rotated.successor.id])
        assert.deepStrictEqual(yield* keys.forAccount("acct_nosuch", { after: undefined, limit: 10 }), [])
        assert.deepStrictEqual(yield* keys.forAccount(account.id, { after: "key_nosuch", limit: 10 }), [])
        assert.isTrue(listed.every((key) => key.digest.startsWith("expire-")))
      })))

    it.live("accounts in creation order, a page at a time after a named account", () =>
      run(Effect.gen(function*() {
        const accounts = yield* AccountStore
        const later = T0 + 1000 * DAY
        const made = []
        for (let n = 0; n < 5; n++) made.push(yield* accounts.create({ name: `paged-${n}`, plan: "free", at: later + n }))
        const first = yield* accounts.list({ after: made[0]!.id, limit: 2 })
        assert.deepStrictEqual(first, [made[1], made[2]])
        const rest = yield* accounts.list({ after: made[2]!.id, limit: 10 })
        assert.deepStrictEqual(rest, [made[3], made[4]])
        assert.deepStrictEqual(yield* accounts.list({ after: made[4]!.id, limit: 10 }), [])
        assert.deepStrictEqual(yield* accounts.list({ after: "acct_nosuch", limit: 10 }), [])
        const all = yield* accounts.list({ after: undefined, limit: 1000 })
        assert.deepStrictEqual(all.slice(-5), made)
      })))
  })
}
