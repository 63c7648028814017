import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import type { ListingId } from "../../domain/Ids.ts"
import { Plans, type StoredPlan } from "../../domain/Plan.ts"
import { DAY, HOUR } from "../../domain/Time.ts"
import type { QueryText } from "../../domain/Watch.ts"
import { HoldStore } from "../../ports/HoldStore.ts"
import { ListingStore } from "../../ports/ListingStore.ts"
import { RevealStore } from "../../ports/RevealStore.ts"
import { type WatchRecord, WatchStore } from "../../ports/WatchStore.ts"
import { listingInput } from "../fixtures.ts"
import { account, round, sleep, watchOf, type WatchStores } from "./WatchFixtures.ts"

/*
 * A scenario of the privacy property: operator writes, other accounts' actions, watches created
 * among them (each at the moment it is created, as a watch is) and rounds, then rounds as the
 * clock runs past every plan's delay. The listings' discovery offsets and the rounds' are whole
 * hours apart, so no instant the rule compares falls within seconds of another: the runs of a
 * scenario happen at different wall-clock moments and must compare alike.
 */
type Step =
  | { readonly op: "watch"; readonly plan: StoredPlan; readonly filtered: boolean }
  | { readonly op: "write"; readonly slot: number; readonly fits: boolean; readonly blurb: number }
  | { readonly op: "delist"; readonly slot: number }
  | { readonly op: "reveal"; readonly slot: number }
  | { readonly op: "hold"; readonly slot: number }
  | { readonly op: "round" }

const SLOTS = 3
const DISCOVERED_OFFSETS = [-30 * DAY, -7 * DAY - 2 * HOUR, -6 * DAY - HOUR, -DAY - 2 * HOUR, -20 * HOUR, -HOUR]

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant("write" as const), slot: fc.nat(SLOTS - 1), fits: fc.boolean(), blurb: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("delist" as const), slot: fc.nat(SLOTS - 1) }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant("reveal" as const), slot: fc.nat(SLOTS - 1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("hold" as const), slot: fc.nat(SLOTS - 1) }) },
  { weight: 2, arbitrary: fc.constant({ op: "round" as const }) }
)

const watchArbitrary = fc.record({
  op: fc.constant("watch" as const),
  plan: fc.constantFrom<StoredPlan>("free", "pro", "business"),
  filtered: fc.boolean()
})

/** Steps with one to three watches created among them, at arbitrary places. */
export const scenarioArbitrary = fc.record({
  discovered: fc.array(fc.constantFrom(...DISCOVERED_OFFSETS), { minLength: SLOTS, maxLength: SLOTS }),
  steps: fc.array(stepArbitrary, { minLength: 1, maxLength: 12 }),
  watches: fc.array(fc.tuple(fc.nat(6), watchArbitrary), { minLength: 1, maxLength: 3 })
}).map(({ discovered, steps, watches }) => {
  const all: Array<Step> = [...steps]
  for (const [at, watch] of watches) all.splice(at % (all.length + 1), 0, watch)
  return { discovered, steps: all }
})


type Scenario = typeof scenarioArbitrary extends fc.Arbitrary<infer T> ? T : never

/**
 * Plays a scenario on a fresh store; with `others`, other accounts also reveal (the
 * availability stamp) and hold. Returns each watch's matches (listing ids, a repeat per
 * generation), which must not depend on `others`.
 */
const playScenario = (scenario: Scenario, others: boolean) =>
  Effect.gen(function*() {
    const store = yield* WatchStore
    const listings = yield* ListingStore
    const holds = yield* HoldStore
    const reveals = yield* RevealStore
    const base = Date.now()
    const other = yield* account("pro")
    const ids = Array.from({ length: SLOTS }, (_, slot) => `PRIVACY${slot}`)
    const created: Array<WatchRecord> = []
    for (const step of scenario.steps) {
      switch (step.op) {
        case "write":
          yield* listings.upsert([listingInput(ids[step.slot]!, {
            domain: `privacy${step.slot}.${step.fits ? "com" : "net"}`,
            discoveredAt: base + scenario.discovered[step.slot]!,
            blurb: `version ${step.blurb}`
          })])
          break
        case "delist":
          yield* listings.delist([ids[step.slot]! as ListingId], "delisted")
          break
        case "reveal":
          if (!others) break
          if ((yield* listings.stampAvailability(ids[step.slot]! as ListingId, Date.now())) !== undefined) {
            yield* reveals.record({ accountId: other.id, listingId: ids[step.slot]!, at: Date.now(), charge: undefined })
          }
          break
        case "hold":
          if (!others || (yield* listings.find(ids[step.slot]! as ListingId)) === undefined) break
          yield* Effect.ignore(holds.acquire({ accountId: other.id, listingId: ids[step.slot]!, plan: Plans.pro, now: Date.now() }))
          break
        case "watch": {
          // Apart from the writes around it, so that a creation "now" is before or after each of them in every run.
          yield* sleep(3)
          const at = Date.now()
          const query: QueryText = step.filtered ? { tld: "com" } : {}
          created.push(yield* store.create(watchOf((yield* account(step.plan)).id, { query, createdAt: at, updatedAt: at }), 10))
          yield* sleep(3)
          break
        }
        case "round":
          yield* round(Date.now() + 1000)
      }
    }
    // The clock runs past every plan's delay.
    for (const ahead of [12 * HOUR, DAY + 30 * 60_000, 3 * DAY, 6 * DAY + 12 * HOUR, 8 * DAY]) yield* round(Date.now() + ahead)
    const result: Array<ReadonlyArray<string>> = []
    for (const watch of created) result.push((yield* store.matches(watch.id, undefined, 100)).map((row) => row.listingId).sort())
    return result
  })

/** The privacy property: a watch's matches are the same with and without other accounts' reveals and holds. */
export const privacyProperty = (
  run: <A, E>(effect: Effect.Effect<A, E, WatchStores>) => Effect.Effect<A, E>,
  options: { readonly propertyRuns?: number }
) =>
  it.live("a watch never tells its owner what other accounts did: its matches are the same without their reveals and holds (property)", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(scenarioArbitrary, async (scenario) => {
          const withOthers = await Effect.runPromise(run(playScenario(scenario, true)))
          const without = await Effect.runPromise(run(playScenario(scenario, false)))
          assert.deepStrictEqual(withOthers, without)
        }),
        { numRuns: options.propertyRuns ?? 100 }
      )
    ), 600_000)
