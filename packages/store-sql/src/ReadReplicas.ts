import { PgClient } from "@effect/sql-pg"
import { Cause, Context, Duration, Effect, Layer, Metric, Redacted, Schedule, type Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import { DEFAULT_MAX_LAG_MS, pipelining } from "./PoolDefaults.ts"
import * as PoolMetrics from "./PoolMetrics.ts"
import { oneLine } from "./StoreOpenError.ts"

/*
 * Streaming replicas that take reads off the primary (docs/decisions/0514-read-replicas.md).
 *
 * One rule decides every routed read: a replica answers it only if it has replayed everything
 * the primary had committed at the read's floor, a moment of this process's monotonic clock.
 * A sampler asks the primary its WAL position and each replica what it has replayed, every
 * SAMPLE_MS; a replica is "caught up to" the latest sample whose primary position it has
 * replayed. The floor is the caller's last write through this process (read-your-writes) and
 * the moment the since watermark handed out was read (a page never misses a row committed
 * before its synced_at). A replica down, not a standby, or caught up to nothing in the last
 * `maxLagMs` gets no reads; the primary answers them.
 */

/** How often the primary's WAL position and each replica's replay are sampled. */
export const SAMPLE_MS = 100

/** How many primary positions are kept to match a replica's replay against: SAMPLE_MS × this reaches back. */
const HISTORY = 128

/** Accounts whose last write is remembered; past it every account counts as having written just now. */
const MAX_WRITERS = 10_000

/** How long a sample statement may take before the server counts as not answering. */
const SAMPLE_TIMEOUT = Duration.seconds(1)

/** `streaming`: takes reads; `lagging`: answering but behind the bound; `down`: not answering, or not a standby. */
export type ReplicaState = "streaming" | "lagging" | "down"

export interface Replica {
  /** `host:port/database`, never the user or password. */
  readonly name: string
  readonly index: number
  readonly url: string
  /** Its pool's name in `pg_stat_activity`, which its pool metrics count by. */
  readonly applicationName: string
  readonly sql: SqlClient.SqlClient
}

export interface ReplicaStatus {
  readonly name: string
  readonly state: ReplicaState
  /** How far behind the primary it was at the last sample, in ms; undefined while down. */
  readonly lagMs: number | undefined
}

export interface Shape {
  readonly replicas: ReadonlyArray<Replica>
  /** A replica that has replayed what the primary had committed at `floor` and is within the bound; undefined: the primary. */
  readonly pick: (floor: number) => Replica | undefined
  /** `accountId` wrote through this process just now: its reads go to the primary until a replica has replayed that. */
  readonly wrote: (accountId: string) => void
  /** The floor of a read by `accountId` (0: any caught-up replica). */
  readonly floorOf: (accountId: string | undefined) => number
  /** A read on `replica` failed: it counts as down until a sample says otherwise. */
  readonly failed: (replica: Replica) => void
  /** Whether some replica could take a read whose floor is `floor`. */
  readonly caughtUp: (floor: number) => boolean
  /** Whether `replica` has replayed what the primary had committed at `floor`, as far as the samples tell. */
  readonly replayed: (replica: Replica, floor: number) => boolean
  readonly statuses: () => ReadonlyArray<ReplicaStatus>
}

/** No replicas: every read on the primary. */
export const none: Shape = {
  replicas: [],
  pick: () => undefined,
  wrote: () => {},
  floorOf: () => 0,
  failed: () => {},
  caughtUp: () => false,
  replayed: () => false,
  statuses: () => []
}

/** The deployment's replicas; none unless `layer` provides them. */
export const ReadReplicas = Context.Reference<Shape>("@dropshelf/store-sql/ReadReplicas", { defaultValue: () => none })

/** `16/B374D848` as a number that orders as the WAL does. */
export const lsnOf = (text: string): bigint => {
  const [high, low] = text.split("/")
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`)
}

/** What the sampler learnt, kept apart from the pools so the rule can be tested alone. */
export interface Tracker {
  readonly primarySampled: (at: number, lsn: bigint) => void
  /** `replayed` undefined: the replica did not answer, or is not a standby. */
  readonly replicaSampled: (index: number, replayed: bigint | undefined) => void
  readonly failed: (index: number) => void
  readonly pick: (floor: number) => number | undefined
  readonly caughtUp: (floor: number) => boolean
  readonly replayed: (index: number, floor: number) => boolean
  readonly wrote: (accountId: string) => void
  readonly floorOf: (accountId: string | undefined) => number
  readonly statuses: () => ReadonlyArray<{ readonly state: ReplicaState; readonly lagMs: number | undefined }>
}

export const makeTracker = (count: number, maxLagMs: number, now: () => number = () => performance.now()): Tracker => {
  const history: Array<{ readonly at: number; readonly lsn: bigint }> = []
  const replicas = Array.from({ length: count }, () => ({ up: false, caughtUpTo: -Infinity }))
  const writers = new Map<string, number>()
  let everyoneWroteAt = -Infinity
  let turn = 0
  const stateOf = (index: number, at: number): ReplicaState => {
    const replica = replicas[index]!
    if (!replica.up) return "down"
    return at - replica.caughtUpTo <= maxLagMs ? "streaming" : "lagging"
  }
  return {
    primarySampled: (at, lsn) => {
      history.push({ at, lsn })
      if (history.length > HISTORY) history.shift()
    },
    replicaSampled: (index, replayed) => {
      const replica = replicas[index]!
      replica.up = replayed !== undefined
      if (replayed === undefined) return
      for (let position = history.length - 1; position >= 0; position--) {
        if (history[position]!.lsn <= replayed) {
          replica.caughtUpTo = Math.max(replica.caughtUpTo, history[position]!.at)
          break
        }
      }
    },
    failed: (index) => {
      replicas[index]!.up = false
    },
    pick: (floor) => {
      const at = now()
      for (let step = 0; step < count; step++) {
        const index = (turn + step) % count
        if (stateOf(index, at) === "streaming" && replicas[index]!.caughtUpTo > floor) {
          turn = index + 1
          return index
        }
      }
      return undefined
    },
    caughtUp: (floor) => {
      const at = now()
      return replicas.some((replica, index) => stateOf(index, at) === "streaming" && replica.caughtUpTo > floor)
    },
    replayed: (index, floor) => replicas[index]!.caughtUpTo > floor,
    wrote: (accountId) => {
      if (writers.size >= MAX_WRITERS) {
        writers.clear()
        everyoneWroteAt = now()
      }
      writers.delete(accountId)
      writers.set(accountId, now())
    },
    floorOf: (accountId) => Math.max(everyoneWroteAt, accountId === undefined ? -Infinity : (writers.get(accountId) ?? -Infinity)),
    statuses: () => {
      const at = now()
      return replicas.map((replica, index) => ({
        state: stateOf(index, at),
        // Never caught up since this process started watching: behind by at least that long.
        lagMs: replica.up ? Math.max(0, Math.round(at - Math.max(replica.caughtUpTo, history[0]?.at ?? at) - SAMPLE_MS)) : undefined
      }))
    }
  }
}

export interface Options {
  /** The primary's URL, sampled over a connection of its own. */
  readonly primaryUrl: string
  readonly urls: ReadonlyArray<string>
  readonly maxLagMs?: number | undefined
  /** Connections each replica's pool opens at most. */
  readonly maxConnections: number
  readonly statementsPerConnection?: number | undefined
}

/** What the sampling connections call themselves in `pg_stat_activity`. */
export const SAMPLER_APPLICATION_NAME = "dropshelf replica sampler"

/**
 * A pool per replica URL and the sampler. The sampler has a connection of its own on each
 * server: behind a busy pool's queue a sample would come late, the replicas would look behind,
 * and their reads would pile onto the primary just when it is busiest. A replica need not
 * answer at start: it is `down` until it does, and reads go to the primary meanwhile. A state
 * change is logged once, as `/readyz` logs its dependencies.
 */
export const make = (options: Options): Effect.Effect<Shape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const applicationName = PoolMetrics.uniqueApplicationName()
    const client = (url: string, maxConnections: number, name: string, statementsPerConnection = 1) =>
      PgClient.make({
        url: Redacted.make(url),
        applicationName: name,
        startupParameters: { jit: "off" },
        maxConnections,
        connectTimeout: Duration.seconds(2),
        ...pipelining(statementsPerConnection)
      }).pipe(Effect.provide(Reactivity.layer), Effect.orDie)
    const primary = yield* client(options.primaryUrl, 1, SAMPLER_APPLICATION_NAME)
    const replicas: Array<Replica & { readonly sampler: SqlClient.SqlClient }> = []
    for (const [index, url] of options.urls.entries()) {
      replicas.push({
        name: PoolMetrics.serverPoolName(url),
        index,
        url,
        applicationName,
        sql: yield* client(url, options.maxConnections, applicationName, options.statementsPerConnection),
        sampler: yield* client(url, 1, SAMPLER_APPLICATION_NAME)
      })
    }
    const tracker = makeTracker(replicas.length, options.maxLagMs ?? DEFAULT_MAX_LAG_MS)
    let logged = replicas.map((): ReplicaState | undefined => undefined)
    const logChanges = Effect.suspend(() => {
      const now = tracker.statuses().map((status) => status.state)
      const changed = replicas.filter((replica) => logged[replica.index] !== now[replica.index])
      logged = now
      return Effect.forEach(changed, (replica) =>
        Effect.logInfo(`dropshelf: read replica ${replica.name} is ${now[replica.index]}`).pipe(
          Effect.annotateLogs({ replica: replica.name, state: now[replica.index] })
        ), { discard: true })
    })
    const sampleReplica = (replica: (typeof replicas)[number]) =>
      replica.sampler<{ standby: boolean; lsn: string | null }>`SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS lsn`.pipe(
        Effect.timeout(SAMPLE_TIMEOUT),
        Effect.map((rows) => (rows[0]?.standby === true && rows[0].lsn !== null ? lsnOf(rows[0].lsn) : undefined)),
        Effect.catchCause((cause) =>
          Effect.as(Effect.logDebug(`dropshelf: read replica ${replica.name} did not answer: ${oneLine(Cause.squash(cause))}`), undefined)
        ),
        Effect.flatMap((replayed) => Effect.sync(() => tracker.replicaSampled(replica.index, replayed)))
      )
    const sample = Effect.gen(function*() {
      const at = performance.now()
      const rows = yield* primary<{ lsn: string }>`SELECT pg_current_wal_lsn()::text AS lsn`.pipe(Effect.timeout(SAMPLE_TIMEOUT))
      tracker.primarySampled(at, lsnOf(rows[0]!.lsn))
      yield* Effect.forEach(replicas, sampleReplica, { concurrency: "unbounded", discard: true })
      yield* logChanges
    }).pipe(Effect.catchCause(() => Effect.void))
    yield* sample.pipe(Effect.repeat(Schedule.spaced(Duration.millis(SAMPLE_MS))), Effect.forkScoped)
    return {
      replicas,
      pick: (floor) => {
        const index = tracker.pick(floor)
        return index === undefined ? undefined : replicas[index]
      },
      wrote: tracker.wrote,
      floorOf: tracker.floorOf,
      failed: (replica) => tracker.failed(replica.index),
      caughtUp: tracker.caughtUp,
      replayed: (replica, floor) => tracker.replayed(replica.index, floor),
      statuses: () => tracker.statuses().map((status, index) => ({ name: replicas[index]!.name, ...status }))
    } satisfies Shape
  })

/**
 * `read` on the replica `shape` picks for `floor`, or on the primary (`undefined`) when none is
 * caught up. A replica that fails the read (stopped, restarting, a query cancelled by replay)
 * counts as down and the primary answers: no caller sees a replica's failure. `retry` false: a
 * read that has already handed something on (a snapshot's chunk) is not read again.
 */
export const route = <A>(
  shape: Shape,
  floor: number,
  read: (replica: Replica | undefined) => Effect.Effect<A>,
  retry: () => boolean = () => true
): Effect.Effect<A> =>
  Effect.suspend(() => {
    const replica = shape.pick(floor)
    if (replica === undefined) return read(undefined)
    return read(replica).pipe(
      Effect.catchCause((cause) => {
        if (Cause.hasInterrupts(cause) || !retry()) return Effect.failCause(cause)
        shape.failed(replica)
        return Effect.andThen(
          Effect.logWarning(`dropshelf: read replica ${replica.name} failed a read; the primary answers it: ${oneLine(Cause.squash(cause))}`),
          read(undefined)
        )
      })
    )
  })

/**
 * Each replica's state as gauges, read at each collection: `dropshelf_db_replica_state` (1 for
 * the state it is in, 0 for the others) and `dropshelf_db_replica_lag` in ms, by `replica`.
 */
export const exportMetrics = (shape: Shape): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<never>()
    const registrations: Array<{ readonly remove: () => void }> = []
    const gauge = (metric: Metric.Gauge<number>, value: () => number) =>
      registrations.push(Metric.registerUnsafe(metric, context, { get: () => ({ value: value() }), update: () => {}, modify: () => {} }))
    for (const replica of shape.replicas) {
      const statusOf = () => shape.statuses()[replica.index]!
      for (const state of ["streaming", "lagging", "down"] as const) {
        gauge(
          Metric.gauge("dropshelf_db_replica_state", {
            description: "1 for the state each read replica is in (streaming: takes reads; lagging: past DROPSHELF_READ_MAX_LAG_MS; down), 0 for the others",
            attributes: { replica: replica.name, state }
          }),
          () => (statusOf().state === state ? 1 : 0)
        )
      }
      gauge(
        Metric.gauge("dropshelf_db_replica_lag", {
          description: "How far each read replica's replay trailed the primary at the last sample, in ms (-1 while down)",
          attributes: { replica: replica.name, unit: "ms" }
        }),
        () => statusOf().lagMs ?? -1
      )
    }
    yield* Effect.addFinalizer(() => Effect.sync(() => registrations.forEach((registration) => registration.remove())))
  })

/** The replicas of `options`, as `ReadReplicas`. */
export const layer = (options: Options): Layer.Layer<never> => Layer.effect(ReadReplicas, make(options))
