import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import * as Session from "../domain/Session.ts"
import { DAY, HOUR, MINUTE } from "../domain/Time.ts"
import { AccountStore } from "../ports/AccountStore.ts"
import { SessionStore } from "../ports/SessionStore.ts"

/**
 * The contract of `SessionStore`, run by each adapter with its own layer (built afresh for every
 * test): a link is spent once, before its expiry; sessions are found, touched and ended by account.
 */
export const suite = (name: string, layer: Layer.Layer<AccountStore | SessionStore>) => {
  const run = <A, E>(effect: Effect.Effect<A, E, AccountStore | SessionStore>) => Effect.provide(effect, layer)
  const T0 = Date.UTC(2026, 5, 1, 12)
  const account = (label: string) =>
    AccountStore.use((accounts) => accounts.create({ name: label, plan: "pro", at: T0 }))
  const issue = (accountId: string, digest: string, at = T0) =>
    SessionStore.use((store) => store.issueLink({ accountId, digest, createdAt: at, expiresAt: at + Session.LINK_LIFETIME_MS }))
  const redeem = (linkDigest: string, sessionDigest: string, at: number) =>
    SessionStore.use((store) =>
      store.redeemLink({ linkDigest, session: { digest: sessionDigest, expiresAt: at + Session.ABSOLUTE_MS }, at })
    )

  describe(`${name}: sign-in links and sessions`, () => {
    it.live("a link is spent once for a session of its account; unknown links give none", () =>
      run(Effect.gen(function*() {
        const owner = yield* account("links")
        yield* issue(owner.id, "link-1")
        const session = yield* redeem("link-1", "session-1", T0 + MINUTE)
        assert.isDefined(session)
        assert.deepStrictEqual({ ...session!, id: "" }, {
          id: "",
          accountId: owner.id,
          digest: "session-1",
          createdAt: T0 + MINUTE,
          lastSeenAt: T0 + MINUTE,
          expiresAt: T0 + MINUTE + Session.ABSOLUTE_MS,
          endedAt: null
        })
        assert.deepStrictEqual(yield* SessionStore.use((store) => store.findSession("session-1")), session)
        assert.strictEqual(yield* redeem("link-1", "session-2", T0 + 2 * MINUTE), undefined)
        assert.strictEqual(yield* SessionStore.use((store) => store.findSession("session-2")), undefined)
        assert.strictEqual(yield* redeem("link-unknown", "session-3", T0), undefined)
      })))

    it.live("a link is void from its expiry on", () =>
      run(Effect.gen(function*() {
        const owner = yield* account("expiry")
        yield* issue(owner.id, "late")
        assert.strictEqual(yield* redeem("late", "late-session", T0 + Session.LINK_LIFETIME_MS), undefined)
        yield* issue(owner.id, "just-in-time")
        assert.isDefined(yield* redeem("just-in-time", "jit-session", T0 + Session.LINK_LIFETIME_MS - 1))
      })))

    it.live("of concurrent redeems of one link, exactly one gets a session", () =>
      run(Effect.gen(function*() {
        const owner = yield* account("race")
        yield* issue(owner.id, "raced")
        const results = yield* Effect.all(
          Array.from({ length: 8 }, (_, index) => redeem("raced", `raced-session-${index}`, T0 + MINUTE)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((result) => result !== undefined).length, 1)
      })))

    it.live("a session is created for an existing account only", () =>
      run(Effect.gen(function*() {
        const store = yield* SessionStore
        const owner = yield* account("direct")
        const session = yield* store.createSession({
          accountId: owner.id,
          session: { digest: "direct-session", expiresAt: T0 + Session.ABSOLUTE_MS },
          at: T0
        })
        assert.deepStrictEqual({ ...session!, id: "" }, {
          id: "",
          accountId: owner.id,
          digest: "direct-session",
          createdAt: T0,
          lastSeenAt: T0,
          expiresAt: T0 + Session.ABSOLUTE_MS,
          endedAt: null
        })
        assert.deepStrictEqual(yield* store.findSession("direct-session"), session)
        assert.strictEqual(
          yield* store.createSession({ accountId: "acct_missing", session: { digest: "orphan", expiresAt: T0 + HOUR }, at: T0 }),
          undefined
        )
        assert.strictEqual(yield* store.findSession("orphan"), undefined)
      })))

    it.live("a session is touched forward only, ended alone, or with every session of its account", () =>
      run(Effect.gen(function*() {
        const store = yield* SessionStore
        const owner = yield* account("owner")
        const other = yield* account("other")
        const sessionFor = Effect.fnUntraced(function*(accountId: string, n: number) {
          yield* issue(accountId, `end-link-${n}`)
          return (yield* redeem(`end-link-${n}`, `end-session-${n}`, T0))!
        })
        const first = yield* sessionFor(owner.id, 1)
        const second = yield* sessionFor(owner.id, 2)
        const third = yield* sessionFor(owner.id, 3)
        const others = yield* sessionFor(other.id, 4)

        yield* store.touchSession(first.id, T0 + HOUR)
        yield* store.touchSession(first.id, T0 + MINUTE)
        assert.strictEqual((yield* store.findSession("end-session-1"))!.lastSeenAt, T0 + HOUR)

        yield* store.endSession(second.id, T0 + 2 * HOUR)
        yield* store.endSession(second.id, T0 + 3 * HOUR)
        assert.strictEqual((yield* store.findSession("end-session-2"))!.endedAt, T0 + 2 * HOUR)

        assert.strictEqual(yield* store.endAccountSessions(owner.id, T0 + 4 * HOUR), 2)
        assert.strictEqual((yield* store.findSession("end-session-1"))!.endedAt, T0 + 4 * HOUR)
        assert.strictEqual((yield* store.findSession("end-session-2"))!.endedAt, T0 + 2 * HOUR)
        assert.strictEqual((yield* store.findSession("end-session-3"))!.endedAt, T0 + 4 * HOUR)
        assert.strictEqual((yield* store.findSession("end-session-4"))!.endedAt, null)
        assert.strictEqual(yield* store.endAccountSessions(owner.id, T0 + 5 * HOUR), 0)
        assert.strictEqual(third.accountId, owner.id)
        assert.strictEqual(others.accountId, other.id)
      })))

    it.live("pruning deletes links used or expired and sessions ended, idle or past their end, before the bound", () =>
      run(Effect.gen(function*() {
        const store = yield* SessionStore
        const owner = yield* account("prune")
        const day = (n: number) => T0 + n * DAY
        // Links: used on day 1; expired unused (issued day 0); issued late, still redeemable at the bound.
        yield* issue(owner.id, "prune-used", day(1))
        const signedOut = (yield* redeem("prune-used", "prune-signed-out", day(1)))!
        yield* store.endSession(signedOut.id, day(2))
        yield* issue(owner.id, "prune-expired", day(0))
        yield* issue(owner.id, "prune-fresh", day(10) - MINUTE)
        // Sessions: signed out on day 2 (above); idle since day 3; ended at its absolute end; still live.
        yield* issue(owner.id, "prune-idle-link", day(3))
        yield* redeem("prune-idle-link", "prune-idle", day(3))
        yield* issue(owner.id, "prune-absolute-link", day(10) - Session.ABSOLUTE_MS - HOUR)
        const absolute = (yield* redeem("prune-absolute-link", "prune-absolute", day(10) - Session.ABSOLUTE_MS - HOUR))!
        yield* store.touchSession(absolute.id, day(10) - HOUR)
        yield* issue(owner.id, "prune-live-link", day(10) - MINUTE)
        yield* redeem("prune-live-link", "prune-live", day(10) - MINUTE)

        // Every link but "prune-fresh" was used or expired before day 10.
        assert.deepStrictEqual(yield* store.prune(day(10)), { links: 5, sessions: 3 })
        for (const gone of ["prune-signed-out", "prune-idle", "prune-absolute"]) {
          assert.strictEqual(yield* store.findSession(gone), undefined, gone)
        }
        assert.isDefined(yield* store.findSession("prune-live"))
        // An unused link within its lifetime stays.
        assert.isDefined(yield* redeem("prune-fresh", "prune-late", day(10)))
        assert.strictEqual(yield* redeem("prune-expired", "prune-never", day(0) + MINUTE), undefined)
        assert.deepStrictEqual(yield* store.prune(day(10)), { links: 0, sessions: 0 })
      })))
  })
}
