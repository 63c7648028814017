import { Effect, References } from "effect"

/**
 * `Effect.withSpan(self, name)` while tracing is on, `self` alone while it is off. With its tracer
 * off (`References.TracerEnabled`, as the server runs without an exporter) Effect still makes a
 * placeholder span for every `withSpan` and puts it in the context of the effect's children:
 * a span object and a context copy each, several on every request's path, for nothing.
 * Unlike `Effect.fn(name)` it captures no stack: an `Error` made per call is a measurable share
 * of a request's CPU (docs/decisions/0505-auth-and-request-costs.md).
 */
export const span = (name: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) =>
    fiber.getRef(References.TracerEnabled) ? Effect.withSpan(self, name, { captureStackTrace: false }) : self
  )
