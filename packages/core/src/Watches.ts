import { Clock, Context, Deferred, Effect, Exit, Layer, Schedule } from "effect"
import type { Caller } from "./Directory.ts"
import type { DeliveryNotFound, InvalidRequest, WatchLimitReached, WatchNotFound } from "./domain/errors.ts"
import { DAY, HOUR } from "./domain/Time.ts"
import type {
  AttemptList,
  CreatedWatchView,
  MatchPage,
  ResendView,
  RotatedSecretView,
  WatchList,
  WatchView
} from "./domain/WatchView.ts"
import { WatchStore } from "./ports/WatchStore.ts"
import * as Delivery from "./watches/Delivery.ts"
import * as Matching from "./watches/Matching.ts"
import * as MatchViews from "./watches/MatchViews.ts"
import * as UseCases from "./watches/UseCases.ts"
import { type WatchSettings, WatchSettingsRef } from "./watches/WatchSettings.ts"

/*
 * The watches service. Its parts live under watches/: the owner's use cases (UseCases), the
 * worker's matching round (Matching) and delivery round (Delivery), and how both render a
 * match (MatchViews).
 */

export { DEFAULT_SETTINGS, type WatchSettings, WatchSettingsRef } from "./watches/WatchSettings.ts"
export { WatchFilters } from "./watches/WatchFilters.ts"
export { ATTEMPTS_SHOWN, DEFAULT_MATCH_PAGE, MAX_MATCH_PAGE, toWatchView } from "./watches/UseCases.ts"
export { signingSecrets } from "./watches/Delivery.ts"

/**
 * Watches: the owner's use cases (REST and MCP), the worker's rounds, and an operator's view.
 * A match's listing is rendered when it is read or delivered, as the account reads it then.
 */
export class Watches extends Context.Service<Watches, {
  /** A new watch from a JSON body or a tool's arguments, read by `Watch.decodeCreate`. */
  readonly create: (caller: Caller, body: unknown) => Effect.Effect<CreatedWatchView, InvalidRequest | WatchLimitReached>
  readonly list: (caller: Caller) => Effect.Effect<WatchList>
  readonly get: (caller: Caller, watchId: string) => Effect.Effect<WatchView, WatchNotFound>
  /** The watch as changed; with `webhook_secret` when the change gave it a webhook (and so a secret) it did not have. */
  readonly update: (caller: Caller, watchId: string, body: unknown) => Effect.Effect<CreatedWatchView, InvalidRequest | WatchNotFound>
  readonly remove: (caller: Caller, watchId: string) => Effect.Effect<void, WatchNotFound>
  readonly rotateSecret: (caller: Caller, watchId: string) => Effect.Effect<RotatedSecretView, WatchNotFound | InvalidRequest>
  readonly matches: (
    caller: Caller,
    watchId: string,
    page: { readonly cursor?: string | undefined; readonly limit?: number | undefined }
  ) => Effect.Effect<MatchPage, WatchNotFound | InvalidRequest>
  readonly deliveries: (caller: Caller, watchId: string) => Effect.Effect<AttemptList, WatchNotFound>
  readonly resend: (caller: Caller, watchId: string, eventId: string) => Effect.Effect<ResendView, WatchNotFound | DeliveryNotFound>
  /** An operator's view of an account's watches (`dropshelf watches list`). */
  readonly ofAccount: (accountId: string) => Effect.Effect<ReadonlyArray<WatchView>>
  /** One matching round; how many events it took and matches it recorded. */
  readonly matchRound: Effect.Effect<{ readonly events: number; readonly matches: number }>
  /** One delivery round; how many deliveries it attempted. */
  readonly deliverRound: Effect.Effect<number>
  /** The settings the service was built with (the worker's poll interval). */
  readonly settings: WatchSettings
  /** Frees the leases of deliveries, where this process is the only worker (the embedded database). */
  readonly releaseLeases: Effect.Effect<number>
  /** Samples the delivery queue into the `dropshelf.webhooks.*` gauges. */
  readonly sampleQueue: Effect.Effect<void>
  /** Deletes matches (with their deliveries and attempts) and attempts older than the retention. */
  readonly prune: Effect.Effect<{ readonly matches: number; readonly attempts: number }>
}>()("@dropshelf/core/Watches") {
  /**
   * The worker: matching and delivery rounds, back to back while they find work, then every
   * `pollMs`, for as long as the layer lives; and the pruning of matches and attempts past the
   * retention, once at start and then hourly, as `Directory.layerPruning` prunes tombstones. A
   * failed round is logged and the next one runs.
   */
  static readonly layerWorker: Layer.Layer<never, never, Watches> = Layer.effectDiscard(Effect.gen(function*() {
    const watches = yield* Watches
    const settings = watches.settings
    // A matching round that recorded matches wakes the delivery loop, so a delivery waits for no poll.
    let wake = Deferred.makeUnsafe<void>()
    const loop = (round: Effect.Effect<number>, name: string, idle: Effect.Effect<void>) =>
      Effect.gen(function*() {
        while (true) {
          const done = yield* round.pipe(
            Effect.catchCause((cause) => Effect.as(Effect.logWarning(`dropshelf: watch ${name} round failed`, cause), 0))
          )
          if (done === 0) yield* idle
        }
      }).pipe(Effect.forkScoped)
    const matching = Effect.map(watches.matchRound, (round) => {
      if (round.matches > 0) Deferred.doneUnsafe(wake, Exit.void)
      return round.events
    })
    yield* loop(matching, "matching", Effect.sleep(settings.pollMs))
    yield* loop(Effect.as(watches.sampleQueue, 0), "queue sampling", Effect.sleep(settings.pollMs))
    yield* watches.prune.pipe(
      Effect.asVoid,
      Effect.catchCause((cause) => Effect.logWarning("dropshelf: pruning watch matches failed", cause)),
      Effect.repeat(Schedule.spaced(HOUR)),
      Effect.forkScoped
    )
    yield* loop(
      watches.deliverRound,
      "delivery",
      Effect.suspend(() => {
        const woken = wake
        return Effect.raceFirst(Effect.sleep(settings.pollMs), Deferred.await(woken)).pipe(
          Effect.ensuring(Effect.sync(() => {
            if (wake === woken) wake = Deferred.makeUnsafe<void>()
          }))
        )
      })
    )
  }))

  static readonly layer = Layer.effect(
    Watches,
    Effect.gen(function*() {
      const store = yield* WatchStore
      const settings = yield* WatchSettingsRef
      const { matchView } = yield* MatchViews.make
      const owner = yield* UseCases.make(settings, matchView)
      const { matchRound } = yield* Matching.make(settings)
      const { deliverRound, sampleQueue } = yield* Delivery.make(settings, matchView)

      return Watches.of({
        create: owner.create,
        list: owner.list,
        get: owner.get,
        update: owner.update,
        remove: owner.remove,
        rotateSecret: owner.rotateSecret,
        matches: owner.matches,
        deliveries: owner.deliveries,
        resend: owner.resend,
        ofAccount: owner.ofAccount,
        matchRound,
        deliverRound,
        settings,
        releaseLeases: store.releaseLeases,
        sampleQueue,
        prune: Effect.flatMap(Clock.currentTimeMillis, (now) => store.prune(now - settings.retentionDays * DAY)).pipe(
          Effect.withSpan("Watches.prune")
        )
      })
    })
  )

  /** Matching rounds, then delivery rounds, until neither finds work: for tests that drive the worker by hand. */
  static readonly drain = (watches: Watches["Service"]) =>
    Effect.gen(function*() {
      while ((yield* watches.matchRound).events > 0) {}
      while ((yield* watches.deliverRound) > 0) {}
    })
}
