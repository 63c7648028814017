import { assert, describe, it } from "@effect/vitest"
import { Operators, Session, Sessions, Time } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Effect } from "effect"
import { TestClock } from "effect/testing"

/* `Sessions.prune`: what is over is kept for the retention, then deleted; what is live stays. */

describe("Sessions.prune", () => {
  it.effect("deletes links and sessions over for the retention, and keeps the rest", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 5, 1))
      const sessions = yield* Sessions.Sessions
      const account = yield* (yield* Operators.Operators).createAccount("pruned", "free")
      const spent = yield* sessions.issueSignInLink(account.id)
      const signedIn = yield* sessions.redeem(spent.token)
      yield* sessions.signOut(signedIn.token)
      yield* sessions.issueSignInLink(account.id)
      assert.deepStrictEqual(yield* sessions.prune, { links: 0, sessions: 0 })

      // Just inside the retention nothing goes; just past it, the spent and the expired link and the ended session.
      yield* TestClock.adjust(Session.RETENTION_MS)
      assert.deepStrictEqual(yield* sessions.prune, { links: 0, sessions: 0 })
      yield* TestClock.adjust(Session.LINK_LIFETIME_MS + Time.MINUTE)
      const live = yield* sessions.redeem((yield* sessions.issueSignInLink(account.id)).token)
      assert.deepStrictEqual(yield* sessions.prune, { links: 2, sessions: 1 })
      assert.strictEqual((yield* sessions.authenticate(live.token)).account.id, account.id)
    }).pipe(Effect.provide(StoreMemory.layerDirectory)))
})
