import { describe, it } from "@effect/vitest"
import { Operators, Session, Sessions, Time } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Clock, Effect, Exit, Layer, ManagedRuntime } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { expect } from "vitest"

/*
 * The sign-in link and session state machine, checked step by step against a plain model:
 * random sequences of links issued, redeemed (with or without the browser's previous session),
 * sessions used, signed out one by one or everywhere, and time jumping across the touch
 * interval, the idle expiry, the link's lifetime and the absolute end.
 */

const START = Date.UTC(2026, 5, 27, 9)
const JUMPS = [1_000, 59_000, 61_000, 14 * Time.MINUTE, 16 * Time.MINUTE, 59 * Time.MINUTE, 61 * Time.MINUTE, 2 * Time.DAY]

type Action =
  | { readonly _tag: "Issue"; readonly account: number }
  | { readonly _tag: "Redeem"; readonly link: number; readonly previous: number | undefined }
  | { readonly _tag: "RedeemForged" }
  | { readonly _tag: "Use"; readonly session: number }
  | { readonly _tag: "SignOut"; readonly session: number }
  | { readonly _tag: "Everywhere"; readonly account: number }
  | { readonly _tag: "Wait"; readonly ms: number }

// Indices stay small, so that most steps name a link or session that exists.
const action: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.record({ _tag: fc.constant("Issue" as const), account: fc.nat(1) }), weight: 2 },
  {
    arbitrary: fc.record({ _tag: fc.constant("Redeem" as const), link: fc.nat(3), previous: fc.option(fc.nat(2), { nil: undefined }) }),
    weight: 3
  },
  { arbitrary: fc.constant({ _tag: "RedeemForged" as const }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("Use" as const), session: fc.nat(2) }), weight: 5 },
  { arbitrary: fc.record({ _tag: fc.constant("SignOut" as const), session: fc.nat(2) }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("Everywhere" as const), account: fc.nat(1) }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("Wait" as const), ms: fc.constantFrom(...JUMPS) }), weight: 4 }
)

interface ModelLink { readonly token: string; readonly account: number; readonly expiresAt: number; used: boolean }
interface ModelSession { readonly token: string; readonly account: number; readonly createdAt: number; lastSeen: number; ended: boolean }

const live = (session: ModelSession, now: number) =>
  !session.ended && now < session.lastSeen + Session.IDLE_MS && now < session.createdAt + Session.ABSOLUTE_MS

const tagOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isSuccess(exit) ? "ok" : exit.cause.reasons[0]?._tag === "Fail" ? (exit.cause.reasons[0] as { error: { _tag: string } }).error._tag : "defect"

describe("Sessions", () => {
  it("follows the link and session rules in any sequence of steps", async () => {
    await fc.assert(fc.asyncProperty(fc.array(action, { minLength: 20, maxLength: 80 }), async (actions) => {
      const time = { now: START }
      const clock: Clock.Clock = {
        currentTimeMillisUnsafe: () => time.now,
        currentTimeMillis: Effect.sync(() => time.now),
        currentTimeNanosUnsafe: () => BigInt(time.now) * 1_000_000n,
        currentTimeNanos: Effect.sync(() => BigInt(time.now) * 1_000_000n),
        monotonicTimeNanosUnsafe: () => BigInt(time.now) * 1_000_000n,
        monotonicTimeNanos: Effect.sync(() => BigInt(time.now) * 1_000_000n),
        sleep: () => Effect.void
      }
      const runtime = ManagedRuntime.make(StoreMemory.layerDirectory)
      const run = <A, E>(effect: Effect.Effect<A, E, Sessions.Sessions | Operators.Operators>) =>
        runtime.runPromiseExit(effect.pipe(Effect.provideService(Clock.Clock, clock)))
      try {
        const accounts: Array<string> = []
        for (const name of ["first", "second"]) {
          const created = await run(Operators.Operators.use((operators) => operators.createAccount(name, "pro")))
          if (!Exit.isSuccess(created)) throw new Error("no account")
          accounts.push(created.value.id)
        }
        const links: Array<ModelLink> = []
        const sessions: Array<ModelSession> = []
        for (const step of actions) {
          const now = time.now
          switch (step._tag) {
            case "Issue": {
              const exit = await run(Sessions.Sessions.use((s) => s.issueSignInLink(accounts[step.account]!)))
              if (!Exit.isSuccess(exit)) throw new Error("issue failed")
              expect(exit.value.expiresAt).toBe(now + Session.LINK_LIFETIME_MS)
              expect(Session.isLinkToken(exit.value.token)).toBe(true)
              links.push({ token: exit.value.token, account: step.account, expiresAt: exit.value.expiresAt, used: false })
              break
            }
            case "Redeem": {
              const link = links[step.link]
              if (link === undefined) break
              const previous = step.previous === undefined ? undefined : sessions[step.previous]
              const exit = await run(Sessions.Sessions.use((s) => s.redeem(link.token, previous?.token)))
              const expected = !link.used && now < link.expiresAt
              expect(tagOf(exit), JSON.stringify(step)).toBe(expected ? "ok" : "SignInLinkInvalid")
              if (expected && Exit.isSuccess(exit)) {
                link.used = true
                if (previous !== undefined) previous.ended = true
                expect(exit.value.session.accountId).toBe(accounts[link.account])
                expect(sessions.some((session) => session.token === exit.value.token)).toBe(false)
                sessions.push({ token: exit.value.token, account: link.account, createdAt: now, lastSeen: now, ended: false })
              }
              break
            }
            case "RedeemForged": {
              const exit = await run(Sessions.Sessions.use((s) => s.redeem(`${Session.LINK_MARKER}${"A".repeat(43)}`)))
              expect(tagOf(exit)).toBe("SignInLinkInvalid")
              break
            }
            case "Use": {
              const session = sessions[step.session]
              if (session === undefined) break
              const exit = await run(Sessions.Sessions.use((s) => s.authenticate(session.token)))
              const expected = live(session, now)
              expect(tagOf(exit), JSON.stringify(step)).toBe(expected ? "ok" : "SessionEnded")
              if (expected && Exit.isSuccess(exit)) {
                expect(exit.value.account.id).toBe(accounts[session.account])
                if (now - session.lastSeen >= Session.TOUCH_EVERY_MS) session.lastSeen = now
                expect(exit.value.session.lastSeenAt).toBe(session.lastSeen)
              }
              break
            }
            case "SignOut": {
              const session = sessions[step.session]
              if (session === undefined) break
              expect(tagOf(await run(Sessions.Sessions.use((s) => s.signOut(session.token))))).toBe("ok")
              session.ended = true
              break
            }
            case "Everywhere": {
              const exit = await run(Sessions.Sessions.use((s) => s.signOutEverywhere(accounts[step.account]!)))
              const open = sessions.filter((session) => session.account === step.account && !session.ended)
              expect(Exit.isSuccess(exit) && exit.value).toBe(open.length)
              for (const session of open) session.ended = true
              break
            }
            case "Wait":
              time.now += step.ms
              break
          }
        }
      } finally {
        await runtime.dispose()
      }
    }), { numRuns: 200 })
  })

  it.effect("a session used often still ends at its absolute end", () =>
    Effect.gen(function*() {
      const operators = yield* Operators.Operators
      const sessions = yield* Sessions.Sessions
      const account = yield* operators.createAccount("busy", "pro")
      const link = yield* sessions.issueSignInLink(account.id)
      const { token } = yield* sessions.redeem(link.token)
      const step = Session.IDLE_MS - Time.MINUTE
      const steps = Math.ceil(Session.ABSOLUTE_MS / step)
      for (let n = 1; n < steps; n++) {
        yield* TestClock.adjust(step)
        yield* sessions.authenticate(token)
      }
      yield* TestClock.adjust(Session.ABSOLUTE_MS - (steps - 1) * step)
      expect((yield* Effect.flip(sessions.authenticate(token)))._tag).toBe("SessionEnded")
    }).pipe(Effect.provide(StoreMemory.layerDirectory)))

  it("refuses a token of the wrong shape without a look-up", async () => {
    const runtime = ManagedRuntime.make(StoreMemory.layerDirectory.pipe(Layer.orDie))
    try {
      const exit = await runtime.runPromiseExit(Sessions.Sessions.use((s) => s.authenticate("dss_short")))
      expect(tagOf(exit)).toBe("SessionEnded")
      expect(tagOf(await runtime.runPromiseExit(Sessions.Sessions.use((s) => s.redeem("not-a-link"))))).toBe("SignInLinkInvalid")
    } finally {
      await runtime.dispose()
    }
  })
})
