import { describe, expect, it } from "@effect/vitest"
import { Email, Errors } from "@dropshelf/core"
import { Result } from "effect"

describe("Email.decode", () => {
  it("keeps an address as written, trimmed", () => {
    expect(Email.decode("email", "  Ada.Lovelace+dropshelf@Example.co.uk ")).toEqual(Result.succeed("Ada.Lovelace+dropshelf@Example.co.uk"))
  })

  it("refuses what is no address, naming the parameter", () => {
    for (const text of ["", "ada", "ada@", "@example.com", "ada@example", "ada lovelace@example.com", "a@b@example.com", "ada@example..com", "ada@exa\tmple.com"]) {
      const decoded = Email.decode("email", text)
      expect(Result.isFailure(decoded), text).toBe(true)
      if (Result.isFailure(decoded)) {
        expect(decoded.failure).toBeInstanceOf(Errors.InvalidRequest)
        expect(decoded.failure.parameter).toBe("email")
      }
    }
  })

  it("refuses text PostgreSQL cannot store, and an address too long to receive mail", () => {
    expect(Result.isFailure(Email.decode("email", "ada\u0000@example.com"))).toBe(true)
    expect(Result.isFailure(Email.decode("email", "ada\uD800@example.com"))).toBe(true)
    const local = "a".repeat(64)
    const long = `${local}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.com`
    expect(long.length).toBeGreaterThan(Email.MAX_LENGTH)
    expect(Result.isFailure(Email.decode("email", long))).toBe(true)
  })

  it("two addresses that differ in case have one key", () => {
    expect(Email.key("Ada@Example.COM")).toBe(Email.key("ada@example.com"))
    expect(Email.key("ada@example.com")).not.toBe(Email.key("bob@example.com"))
  })
})
