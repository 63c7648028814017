import { Cause, Context, Duration, Effect, Layer } from "effect"
import { NotReadyError, type Readiness } from "@dropshelf/api/Api"

/*
 * Liveness and readiness, as a load balancer or an orchestrator asks them. `/healthz` touches
 * nothing: a database outage must not get a live process restarted. `/readyz` asks every
 * dependency the instance needs, and answers 503 from the moment the instance starts draining.
 */

/** Something the instance needs to serve: a name for the answer, and a cheap question to it. */
export interface Dependency {
  readonly name: string
  readonly check: Effect.Effect<void, unknown>
}

/**
 * The dependencies `/readyz` asks, provided by whoever assembles the storage (the CLI's
 * runtime: the database, and Redis when `REDIS_URL` is set). None by default: an in-memory
 * directory is ready whenever the process is.
 */
export const Dependencies = Context.Reference<ReadonlyArray<Dependency>>("@dropshelf/server/Health/Dependencies", {
  defaultValue: () => []
})

/** `dependencies` as the layer `Server.layer` reads. */
export const layerDependencies = (dependencies: ReadonlyArray<Dependency>): Layer.Layer<never> =>
  Layer.succeed(Dependencies, dependencies)

/** How long one dependency may take to answer before it counts as not answering. */
export const CHECK_TIMEOUT = Duration.seconds(2)

/**
 * The server's own state for the drain: set once the server is told to stop, read by `/readyz`;
 * `inFlight` counts requests being answered, so the drain can wait for them while still listening.
 */
export class Lifecycle extends Context.Service<Lifecycle, {
  draining: boolean
  inFlight: number
}>()("@dropshelf/server/Health/Lifecycle") {
  static readonly layer = Layer.sync(Lifecycle, () => ({ draining: false, inFlight: 0 }))
}

type Outcome = Readiness["checks"][string]

const ask = (dependency: Dependency): Effect.Effect<readonly [string, Outcome]> =>
  dependency.check.pipe(
    Effect.timeout(CHECK_TIMEOUT),
    Effect.as("ok" as Outcome),
    Effect.catchCause((cause) =>
      // The reason goes to the log, not to a public answer: it may name hosts and users.
      Effect.logWarning(`readiness: ${dependency.name} did not answer`, cause).pipe(
        Effect.as((cause.reasons.some((reason) => reason._tag === "Fail" && Cause.isTimeoutError(reason.error)) ? "timeout" : "failed") as Outcome)
      )
    ),
    Effect.map((outcome) => [dependency.name, outcome] as const)
  )

/** The answer of `/readyz`: every dependency asked at once; a `NotReadyError` (503) when draining or when one failed. */
export const readiness = (
  lifecycle: Lifecycle["Service"],
  dependencies: ReadonlyArray<Dependency>
): Effect.Effect<Readiness, NotReadyError> =>
  Effect.gen(function*() {
    if (lifecycle.draining) return yield* new NotReadyError({ status: "draining", failed: [], checks: {} })
    const outcomes = yield* Effect.forEach(dependencies, ask, { concurrency: "unbounded" })
    const checks = Object.fromEntries(outcomes)
    const failed = outcomes.filter(([, outcome]) => outcome !== "ok").map(([name]) => name)
    if (failed.length > 0) return yield* new NotReadyError({ status: "unready", failed, checks })
    return { status: "ready", checks } as const
  })
