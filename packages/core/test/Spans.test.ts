import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, References } from "effect"
import { span } from "../src/Spans.ts"

const spanInside = Effect.option(Effect.currentSpan).pipe(span("Directory.probe"))

describe("Spans.span", () => {
  it.effect("runs the effect in a span of its name while tracing is on", () =>
    Effect.gen(function*() {
      const inside = yield* spanInside
      assert.isTrue(Option.isSome(inside))
      assert.strictEqual(Option.getOrThrow(inside).name, "Directory.probe")
    }))

  it.effect("makes no span, not even a placeholder, while tracing is off", () =>
    Effect.gen(function*() {
      assert.isTrue(Option.isNone(yield* spanInside.pipe(Effect.provideService(References.TracerEnabled, false))))
      // Effect's own withSpan makes a placeholder there, which is what is spared.
      const placeholder = yield* Effect.option(Effect.currentSpan).pipe(
        Effect.withSpan("Directory.probe"),
        Effect.provideService(References.TracerEnabled, false)
      )
      assert.isTrue(Option.isSome(placeholder))
    }))

  it.effect("passes the effect's failure through either way", () =>
    Effect.gen(function*() {
      for (const enabled of [true, false]) {
        const failed = yield* Effect.flip(Effect.fail("refused").pipe(span("Directory.probe"), Effect.provideService(References.TracerEnabled, enabled)))
        assert.strictEqual(failed, "refused")
      }
    }))
})
