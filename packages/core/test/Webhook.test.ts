import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { Webhook } from "@dropshelf/core"

describe("Webhook.isPublicAddress", () => {
  it("refuses loopback, private, link-local, CGNAT, reserved and mapped forms; accepts public unicast", () => {
    for (const address of [
      "127.0.0.1", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
      "224.0.0.1", "255.255.255.255", "192.0.2.1", "198.18.0.1", "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1",
      "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:7f00:1", "64:ff9b::a00:1", "2002:a00:1::", "2001:db8::1", "not-an-ip", "1.2.3"
    ]) expect(Webhook.isPublicAddress(address), address).toBe(false)
    for (const address of ["1.1.1.1", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "[2001:4860:4860::8888]"]) {
      expect(Webhook.isPublicAddress(address), address).toBe(true)
    }
  })

  it("judges an IPv4-mapped IPv6 address as its IPv4 address (property)", () => {
    fc.assert(fc.property(fc.ipV4(), (v4) => {
      expect(Webhook.isPublicAddress(`::ffff:${v4}`)).toBe(Webhook.isPublicAddress(v4))
    }))
  })
})

describe("Webhook.decideAfterAttempt", () => {
  it("follows the specification's schedule within ±10 %, then is exhausted (property)", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 12 }), fc.double({ min: 0, max: 0.9999, noNaN: true }), (attempt, jitter) => {
      const outcome = Webhook.decideAfterAttempt({ attempt, result: { _tag: "Answered", status: 500, retryAfterMs: undefined }, now: 0, jitter, manual: false })
      if (attempt >= Webhook.RETRY_SCHEDULE_MS.length) {
        expect(outcome._tag).toBe("Exhausted")
        return
      }
      const delay = Webhook.RETRY_SCHEDULE_MS[attempt]!
      expect(outcome._tag).toBe("Retry")
      const at = outcome._tag === "Retry" ? outcome.at : -1
      expect(at).toBeGreaterThanOrEqual(Math.floor(delay * 0.9))
      expect(at).toBeLessThanOrEqual(Math.ceil(delay * 1.1))
    }))
  })

  it("a 2xx delivers, a 410 is gone, Retry-After on 429/503 is a floor, a re-send fails alone", () => {
    const base = { attempt: 1, now: 1_000, jitter: 0.5, manual: false }
    expect(Webhook.decideAfterAttempt({ ...base, result: { _tag: "Answered", status: 299, retryAfterMs: undefined } })._tag).toBe("Delivered")
    expect(Webhook.decideAfterAttempt({ ...base, result: { _tag: "Answered", status: 410, retryAfterMs: undefined } })._tag).toBe("Gone")
    expect(Webhook.decideAfterAttempt({ ...base, result: { _tag: "Answered", status: 503, retryAfterMs: 120_000 } })).toEqual({ _tag: "Retry", at: 121_000 })
    expect(Webhook.decideAfterAttempt({ ...base, result: { _tag: "Answered", status: 500, retryAfterMs: 120_000 } })).toEqual({ _tag: "Retry", at: 6_000 })
    expect(Webhook.decideAfterAttempt({ ...base, manual: true, result: { _tag: "Failed", error: "timeout" } })._tag).toBe("Failed")
    expect(Webhook.parseRetryAfter("7", 0)).toBe(7_000)
    expect(Webhook.parseRetryAfter(new Date(60_000).toUTCString(), 0)).toBe(60_000)
    expect(Webhook.parseRetryAfter("soon", 0)).toBeUndefined()
  })
})
