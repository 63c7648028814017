import { assert, describe, it } from "@effect/vitest"
import { AccountStore, EmailSignIn, Errors, Operators, Sessions, SignInMail, Time } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Effect, Layer } from "effect"

/*
 * Email sign-in and self sign-up as use cases over the memory stores, with a mailbox instead of
 * SMTP: who gets mail, that the answer is the same for a known and an unknown address, the
 * limits per client address and per email address, and bad links counted per client address.
 */

type Sent = Array<SignInMail.SignInMessage>

const stack = (sent: Sent, options: { readonly mail?: boolean; readonly mode?: EmailSignIn.SignUpMode; readonly limits?: Partial<EmailSignIn.AttemptLimits> } = {}) =>
  StoreMemory.layerDirectory.pipe(
    Layer.provide(options.mail === false ? Layer.empty : Layer.succeed(SignInMail.SignInMail, {
      send: (message) => Effect.sync(() => void sent.push(message))
    })),
    Layer.provide(Layer.succeed(EmailSignIn.SignUpPolicy, options.mode ?? "open")),
    Layer.provide(Layer.succeed(EmailSignIn.SignInAttemptLimits, { ...EmailSignIn.DEFAULT_ATTEMPT_LIMITS, ...options.limits }))
  )

/** The background work after an answer: the look-up, the account, the mail. */
const settle = Effect.sleep("30 millis")

describe("EmailSignIn", () => {
  it.live("a known address gets a link that signs its account in; an unknown one gets nothing, and the same answer", () => {
    const sent: Sent = []
    return Effect.gen(function*() {
      const area = yield* EmailSignIn.EmailSignIn
      const account = yield* (yield* Operators.Operators).createAccount("known", "pro", "Known@Example.com")
      assert.strictEqual(area.mailAvailable, true)
      assert.strictEqual(yield* area.requestLink(" known@example.COM ", "10.0.0.1"), undefined)
      assert.strictEqual(yield* area.requestLink("stranger@example.com", "10.0.0.1"), undefined)
      yield* settle
      assert.deepStrictEqual(sent.map(({ purpose, to }) => ({ purpose, to })), [{ purpose: "sign-in", to: "known@example.COM" }])
      const signedIn = yield* area.redeem(sent[0]!.token, undefined, "10.0.0.1")
      assert.strictEqual(signedIn.session.accountId, account.id)
      const refused = yield* Effect.flip(area.requestLink("not an address", "10.0.0.1"))
      assert.strictEqual(refused._tag, "InvalidRequest")
    }).pipe(Effect.provide(stack(sent)))
  })

  it.live("requests are limited per email address, whoever sends them, and per client address, till the window ends", () => {
    const sent: Sent = []
    return Effect.gen(function*() {
      const area = yield* EmailSignIn.EmailSignIn
      for (const client of ["10.0.0.1", "10.0.0.2"]) yield* area.requestLink("target@example.com", client)
      const tooMany = yield* Effect.flip(area.requestLink("TARGET@example.com", "10.0.0.3"))
      assert.instanceOf(tooMany, EmailSignIn.TooManyAttempts)
      const now = Date.now()
      assert.isAbove(tooMany.retryAt, now)
      assert.isAtMost(tooMany.retryAt, now + 15 * Time.MINUTE)
      // The third client is refused only for that address.
      yield* area.requestLink("other@example.com", "10.0.0.3")
      yield* area.requestLink("third@example.com", "10.0.0.3")
      assert.instanceOf(yield* Effect.flip(area.requestLink("fourth@example.com", "10.0.0.3")), EmailSignIn.TooManyAttempts)
    }).pipe(Effect.provide(stack(sent, { limits: { requestsPerEmail: 2, requestsPerAddress: 3 } })))
  })

  it.live("open sign-up makes a free account owned by the address and mails it a link; again, a sign-in link to the same account", () => {
    const sent: Sent = []
    return Effect.gen(function*() {
      const area = yield* EmailSignIn.EmailSignIn
      yield* area.signUp({ email: "new@example.com", name: "  Newcomer  " }, "10.0.0.1")
      yield* settle
      yield* area.signUp({ email: "NEW@example.com" }, "10.0.0.1")
      yield* area.signUp({ email: "plain@example.com", name: "" }, "10.0.0.1")
      yield* settle
      assert.deepStrictEqual(sent.map(({ purpose, to }) => ({ purpose, to })), [
        { purpose: "sign-up", to: "new@example.com" },
        { purpose: "sign-in", to: "NEW@example.com" },
        { purpose: "sign-up", to: "plain@example.com" }
      ])
      const accounts = yield* AccountStore.AccountStore
      const created = (yield* accounts.findByEmail("new@example.com"))!
      assert.deepStrictEqual({ name: created.name, plan: created.plan }, { name: "Newcomer", plan: "free" })
      assert.strictEqual((yield* accounts.findByEmail("plain@example.com"))!.name, "plain")
      const sessions = yield* Sessions.Sessions
      for (const message of sent.slice(0, 2)) {
        assert.strictEqual((yield* sessions.redeem(message.token)).session.accountId, created.id)
      }
      const long = yield* Effect.flip(area.signUp({ email: "x@example.com", name: "n".repeat(EmailSignIn.MAX_ACCOUNT_NAME_LENGTH + 1) }, "10.0.0.1"))
      assert.deepStrictEqual(long, new Errors.InvalidRequest({ parameter: "name", message: "name must be at most 100 characters" }))
    }).pipe(Effect.provide(stack(sent)))
  })

  it.live("sign-up by invitation, off, or open without mail is refused; email sign-in without mail too", () =>
    Effect.gen(function*() {
      const reasonOf = (layer: Layer.Layer<EmailSignIn.EmailSignIn>) =>
        EmailSignIn.EmailSignIn.use((area) => Effect.flip(area.signUp({ email: "a@example.com" }, "10.0.0.1"))).pipe(Effect.provide(layer))
      assert.deepStrictEqual(yield* reasonOf(stack([], { mode: "invite" })), new EmailSignIn.SignUpClosed({ reason: "invite" }))
      assert.deepStrictEqual(yield* reasonOf(stack([], { mode: "off" })), new EmailSignIn.SignUpClosed({ reason: "off" }))
      assert.deepStrictEqual(yield* reasonOf(stack([], { mail: false })), new EmailSignIn.SignUpClosed({ reason: "no-mail" }))
      const noMail = yield* EmailSignIn.EmailSignIn.use((area) => Effect.flip(area.requestLink("a@example.com", "10.0.0.1"))).pipe(
        Effect.provide(stack([], { mail: false }))
      )
      assert.instanceOf(noMail, EmailSignIn.MailUnavailable)
    }))

  it.live("a mail that cannot be sent is no failure of the request: the send runs after the answer", () =>
    Effect.gen(function*() {
      const area = yield* EmailSignIn.EmailSignIn
      yield* (yield* Operators.Operators).createAccount("unmailable", "free", "unmailable@example.com")
      assert.strictEqual(yield* area.requestLink("unmailable@example.com", "10.0.0.1"), undefined)
      assert.strictEqual(yield* area.signUp({ email: "unmailable@example.com" }, "10.0.0.1"), undefined)
      yield* settle
    }).pipe(Effect.provide(StoreMemory.layerDirectory.pipe(
      Layer.provide(Layer.succeed(SignInMail.SignInMail, { send: () => Effect.die(new Error("the SMTP server is down")) })),
      Layer.provide(Layer.succeed(EmailSignIn.SignUpPolicy, "open"))
    ))))

  it.live("a known address is answered as fast as an unknown one, however slow the mail", () => {
    const sent: Sent = []
    return Effect.gen(function*() {
      const area = yield* EmailSignIn.EmailSignIn
      yield* (yield* Operators.Operators).createAccount("slow", "free", "slow@example.com")
      for (const email of ["slow@example.com", "unknown-slow@example.com"]) {
        const started = Date.now()
        yield* area.requestLink(email, "10.0.0.1")
        assert.isBelow(Date.now() - started, 250, email)
      }
      yield* Effect.sleep("600 millis")
      assert.deepStrictEqual(sent.map((message) => message.to), ["slow@example.com"])
    }).pipe(Effect.provide(StoreMemory.layerDirectory.pipe(
      Layer.provide(Layer.succeed(SignInMail.SignInMail, {
        send: (message) => Effect.sleep("500 millis").pipe(Effect.andThen(Effect.sync(() => void sent.push(message))))
      }))
    )))
  })

  it.live("bad links are counted per client address: past the limit even a good link is not tried", () =>
    Effect.gen(function*() {
      const area = yield* EmailSignIn.EmailSignIn
      const account = yield* (yield* Operators.Operators).createAccount("links", "free")
      const sessions = yield* Sessions.Sessions
      const good = (yield* sessions.issueSignInLink(account.id)).token
      for (let bad = 0; bad < 2; bad++) {
        assert.instanceOf(yield* Effect.flip(area.redeem(`dsl_${"x".repeat(43)}`, undefined, "10.0.0.9")), Errors.SignInLinkInvalid)
      }
      assert.instanceOf(yield* Effect.flip(area.redeem(good, undefined, "10.0.0.9")), EmailSignIn.TooManyAttempts)
      assert.strictEqual((yield* area.redeem(good, undefined, "10.0.0.8")).session.accountId, account.id)
    }).pipe(Effect.provide(stack([], { limits: { badLinksPerAddress: 2 } }))))
})
