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

/**
 * Each read replica's state by name, for `/readyz` to show (the CLI's runtime provides it when
 * `DATABASE_READ_URL` names replicas); none by default. A replica never makes the instance
 * unready: its reads go to the primary.
 */
export const ReplicaStates = Context.Reference<(() => Readonly<Record<string, "streaming" | "lagging" | "down">>) | undefined>(
  "@dropshelf/server/Health/ReplicaStates",
  { defaultValue: () => undefined }
)

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

/** Why a check failed, in a line: the error's message, never its stack. */
const reasonOf = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  return error instanceof Error ? error.message : String(error)
}

const ask = (dependency: Dependency): Effect.Effect<readonly [string, Outcome, string | undefined]> =>
  dependency.check.pipe(
    Effect.timeout(CHECK_TIMEOUT),
    Effect.as([dependency.name, "ok" as Outcome, undefined] as const),
    Effect.catchCause((cause) =>
      Effect.succeed([
        dependency.name,
        (cause.reasons.some((reason) => reason._tag === "Fail" && Cause.isTimeoutError(reason.error)) ? "timeout" : "failed") as Outcome,
        reasonOf(cause)
      ] as const)
    )
  )

/**
 * The answer of `/readyz`: every dependency asked at once; a `NotReadyError` (503) when draining
 * or when one failed. A load balancer asks every few seconds, so a dependency's state is logged
 * when it changes (down once, with the reason; up again once), not on every probe. The reason
 * goes to the log, not to the public answer: it may name hosts and users.
 */
export const makeReadiness = (
  lifecycle: Lifecycle["Service"],
  dependencies: ReadonlyArray<Dependency>,
  replicaStates?: () => Readonly<Record<string, "streaming" | "lagging" | "down">>
): Effect.Effect<Readiness, NotReadyError> => {
  const down = new Set<string>()
  return Effect.gen(function*() {
    if (lifecycle.draining) return yield* new NotReadyError({ status: "draining", failed: [], checks: {} })
    const outcomes = yield* Effect.forEach(dependencies, ask, { concurrency: "unbounded" })
    for (const [name, outcome, reason] of outcomes) {
      if (outcome !== "ok" && !down.has(name)) {
        down.add(name)
        yield* Effect.logWarning(`readiness: ${name} did not answer (${outcome}); /readyz answers 503 until it does`).pipe(
          Effect.annotateLogs({ dependency: name, reason })
        )
      } else if (outcome === "ok" && down.delete(name)) {
        yield* Effect.logInfo(`readiness: ${name} answers again`).pipe(Effect.annotateLogs({ dependency: name }))
      }
    }
    const checks = Object.fromEntries(outcomes.map(([name, outcome]) => [name, outcome]))
    const failed = outcomes.filter(([, outcome]) => outcome !== "ok").map(([name]) => name)
    const replicas = replicaStates === undefined ? {} : { replicas: replicaStates() }
    if (failed.length > 0) return yield* new NotReadyError({ status: "unready", failed, checks, ...replicas })
    return { status: "ready", checks, ...replicas } as const
  })
}
