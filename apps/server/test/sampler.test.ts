/**
 * The OTel samplers dropshelf reads (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`): which
 * spans are recorded, and that the installed exporter applies the choice.
 */
import { ConfigProvider, Effect, Layer, Option, Tracer } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Telemetry } from "@dropshelf/server"

const sampler = (env: Record<string, string>) =>
  Effect.runSync(Telemetry.samplerFromEnv.parse(ConfigProvider.fromEnv({ env })))

const local = (sampled: boolean): Option.Option<Tracer.AnySpan> =>
  Option.some({ _tag: "Span", sampled } as unknown as Tracer.AnySpan)
const caller = (sampled: boolean): Option.Option<Tracer.AnySpan> =>
  Option.some(Tracer.externalSpan({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled }))

describe("trace sampling", () => {
  it("reads the specification's samplers; the default keeps every trace and follows the caller", () => {
    expect(sampler({})).toEqual({ parentBased: true, ratio: 1 })
    expect(sampler({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" })).toEqual({ parentBased: true, ratio: 0.25 })
    expect(sampler({ OTEL_TRACES_SAMPLER: "always_off" })).toEqual({ parentBased: false, ratio: 0 })
    expect(() => sampler({ OTEL_TRACES_SAMPLER: "sometimes" })).toThrow(/OTEL_TRACES_SAMPLER/)
    expect(() => sampler({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" })).toThrow(/OTEL_TRACES_SAMPLER_ARG/)
  })

  it("a span inside this process follows its parent; a caller's flag is followed when parent-based, else the ratio decides", () => {
    fc.assert(fc.property(
      fc.boolean(), fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean(), fc.double({ min: 0, max: 0.999, noNaN: true }),
      (parentBased, ratio, flag, draw) => {
        const chosen = { parentBased, ratio }
        const random = () => draw
        expect(Telemetry.sampledFor(chosen, local(flag), flag, random)).toBe(flag)
        expect(Telemetry.sampledFor(chosen, caller(flag), flag, random)).toBe(parentBased ? flag : ratio >= 1 || (ratio > 0 && draw < ratio))
        expect(Telemetry.sampledFor(chosen, Option.none(), true, random)).toBe(ratio >= 1 || (ratio > 0 && draw < ratio))
        // Effect's own threshold still applies to a new trace.
        expect(Telemetry.sampledFor(chosen, Option.none(), false, random)).toBe(false)
      }
    ))
  })

  it("the exporter started from the environment applies the sampler to the spans it records", async () => {
    const sampledWith = (env: Record<string, string>) =>
      Effect.runPromise(Effect.scoped(
        Effect.gen(function*() {
          return yield* Effect.withSpan(Effect.map(Effect.currentSpan, (span) => span.sampled), "probe")
        }).pipe(Effect.provide(Telemetry.layerOtlpFromEnv.pipe(
          Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_TIMEOUT: "100", ...env } })))
        )))
      ))
    expect(await sampledWith({})).toBe(true)
    expect(await sampledWith({ OTEL_TRACES_SAMPLER: "always_off" })).toBe(false)
  })

  it("without an exporter no span is recorded: the tracer is off, and a span Effect makes is a placeholder", async () => {
    const spanWith = (env: Record<string, string>) =>
      Effect.runPromise(Effect.scoped(
        Effect.withSpan(Effect.currentSpan, "probe").pipe(Effect.provide(Telemetry.layerOtlpFromEnv.pipe(
          Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))
        )))
      ))
    // Effect's placeholder carries no trace and is never sampled.
    expect(await spanWith({})).toMatchObject({ traceId: "noop", sampled: false })
    expect(await spanWith({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_TIMEOUT: "100" }))
      .toMatchObject({ name: "probe", traceId: expect.stringMatching(/^[0-9a-f]{32}$/), sampled: true })
  })
})
