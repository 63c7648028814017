/**
 * The address gate on its own, over a stand-in directory and the in-process limiter, with a
 * test clock: which address a request counts under, the ceiling, that an address over it is
 * answered without a look-up, and that the window turning lets it in again.
 */
import { assert, describe, it } from "@effect/vitest"
import { Directory, Errors, RateLimiter } from "@dropshelf/core"
import { Effect, Layer, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { TestClock } from "effect/testing"
import { AddressGate, addressCounter, type AddressLimited, addressOf } from "../src/http/AddressGate.ts"

const requestFrom = (remoteAddress: string | undefined) =>
  HttpServerRequest.fromWeb(new Request("http://localhost/api/v1/me")).modify({ remoteAddress: Option.fromNullishOr(remoteAddress) })

const GOOD = "good-key"
const caller = { accountId: "acct_1", plan: {}, key: { id: "key_1" } } as unknown as Directory.Caller

/** A gate of `ceiling` over a directory that knows one key, counting its look-ups. */
const gateOf = (ceiling: number, lookUps: Array<string | undefined>) =>
  AddressGate.layer(ceiling).pipe(
    Layer.provide(Layer.succeed(Directory.Directory, {
      authenticate: (secret: string | undefined) =>
        Effect.suspend(() => {
          lookUps.push(secret)
          return secret === GOOD ? Effect.succeed(caller) : Effect.fail(new Errors.Unauthorized({ message: "no" }))
        })
    } as unknown as Directory.Directory["Service"])),
    Layer.provide(RateLimiter.layerInProcess)
  )

const T0 = Date.UTC(2026, 5, 1, 12, 0, 10)

describe("AddressGate", () => {
  it("counts IPv4 and IPv4-mapped peers as the same address, IPv6 by its /64; never under a key id's name", () => {
    assert.strictEqual(addressOf(requestFrom("203.0.113.7")), "203.0.113.7")
    assert.strictEqual(addressOf(requestFrom("::ffff:203.0.113.7")), "203.0.113.7")
    assert.strictEqual(addressOf(requestFrom("2001:db8:1:2:aaaa::1")), addressOf(requestFrom("2001:db8:1:2:bbbb::9")))
    assert.strictEqual(addressOf(requestFrom("2001:db8:1:2:aaaa::1")), "2001:db8:1:2::/64")
    assert.notStrictEqual(addressOf(requestFrom("2001:db8:1:2::1")), addressOf(requestFrom("2001:db8:1:3::1")))
    assert.strictEqual(addressOf(requestFrom(undefined)), "unknown")
    assert.notMatch(addressCounter("203.0.113.7"), /^key_/)
  })

  it.effect("past the ceiling an address is refused without a look-up, a valid key too, until the window turns", () => {
    const lookUps: Array<string | undefined> = []
    return Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const gate = yield* AddressGate
      const from = requestFrom("203.0.113.7")
      for (const secret of [undefined, "bad-1", "bad-2"]) {
        const refused = yield* Effect.flip(gate.authenticate(from, secret))
        assert.strictEqual(refused._tag, "Unauthorized")
      }
      // The fourth refusal in the minute is over the ceiling of three: 429 from here on.
      const over = yield* Effect.flip(gate.authenticate(from, "bad-3"))
      assert.strictEqual(over._tag, "AddressLimited")
      assert.deepStrictEqual([(over as AddressLimited).limit, (over as AddressLimited).retryAfter], [3, 50])
      assert.strictEqual(lookUps.length, 4)
      for (const secret of [GOOD, "bad-4", undefined]) {
        assert.strictEqual((yield* Effect.flip(gate.authenticate(from, secret)))._tag, "AddressLimited")
      }
      assert.strictEqual(lookUps.length, 4)
      // Another address is its own count.
      assert.strictEqual((yield* gate.authenticate(requestFrom("203.0.113.8"), GOOD)).key.id, "key_1")
      yield* TestClock.adjust("49 seconds")
      assert.strictEqual(((yield* Effect.flip(gate.authenticate(from, GOOD))) as AddressLimited).retryAfter, 1)
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* gate.authenticate(from, GOOD)).key.id, "key_1")
      assert.strictEqual((yield* Effect.flip(gate.authenticate(from, "bad-5")))._tag, "Unauthorized")
    }).pipe(Effect.provide(gateOf(3, lookUps)))
  })

  it.effect("a valid key is not counted against its address", () => {
    const lookUps: Array<string | undefined> = []
    return Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const gate = yield* AddressGate
      const from = requestFrom("198.51.100.1")
      for (let n = 0; n < 10; n++) yield* gate.authenticate(from, GOOD)
      assert.strictEqual((yield* Effect.flip(gate.authenticate(from, "bad")))._tag, "Unauthorized")
    }).pipe(Effect.provide(gateOf(1, lookUps)))
  })
})
