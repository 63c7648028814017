import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, Redacted } from "effect"
import * as fc from "fast-check"
import { formatJson } from "../src/http/AccessLog.ts"

/*
 * The server writes its log lines without Effect's redacting replacer when every value is plain.
 * Whatever is logged, the line must be the one `Logger.formatJson` writes: secrets redacted,
 * objects and errors as Effect renders them, and plain values exactly as JSON has them.
 */

const plain = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(-0))
const value = fc.oneof(
  { weight: 4, arbitrary: plain },
  { weight: 1, arbitrary: fc.string().map((secret) => Redacted.make(secret)) },
  { weight: 1, arbitrary: fc.dictionary(fc.string(), plain) },
  { weight: 1, arbitrary: fc.bigInt() },
  { weight: 1, arbitrary: fc.string().map((message) => new Error(message)) }
)

/** The lines both loggers write for one log call. */
const linesOf = (message: unknown, annotations: Record<string, unknown>) => {
  const ours: Array<string> = []
  const effects: Array<string> = []
  return Effect.logInfo(message).pipe(
    Effect.annotateLogs(annotations),
    Effect.withLogSpan("span"),
    Effect.provide(Logger.layer([
      Logger.map(formatJson, (line) => ours.push(line)),
      Logger.map(Logger.formatJson, (line) => effects.push(line))
    ])),
    Effect.as({ ours, effects })
  )
}

describe("access log lines", () => {
  it.effect("are Effect's JSON lines, byte for byte, whatever the values", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.oneof(plain, value), fc.dictionary(fc.string(), value), async (message, annotations) => {
          const { effects, ours } = await Effect.runPromise(linesOf(message, annotations))
          assert.strictEqual(ours.length, 1)
          assert.deepStrictEqual(ours, effects)
        }),
        { numRuns: 300 }
      )
    ))

  it.effect("redact a secret logged beside plain values", () =>
    Effect.gen(function*() {
      const { ours } = yield* linesOf("GET /api/v1/me 200", { status: 200, key: Redacted.make("ds_live_secret") })
      assert.notInclude(ours[0]!, "ds_live_secret")
      assert.deepStrictEqual(JSON.parse(ours[0]!).annotations.status, 200)
    }))
})
