import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { ABANDONED_AFTER_MS, type BeginDecision, RETENTION_MS } from "../../domain/Idempotency.ts"
import { DAY, HOUR } from "../../domain/Time.ts"
import { IdempotencyStore } from "../../ports/IdempotencyStore.ts"
import { type Run, T0 } from "./Stores.ts"

export const suite = (name: string, run: Run) => {
  describe(`${name}: idempotency keys`, () => {
    const begin = (accountId: string, key: string, fingerprint: string, now: number) =>
      IdempotencyStore.use((store) => store.begin({ accountId, key, fingerprint, now }))

    it.live("the first request runs; its repeat waits while it runs and replays its answer after; another request is refused", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        assert.deepStrictEqual(yield* begin("a1", "key-1", "hold A", T0), { _tag: "Run" })
        assert.deepStrictEqual(yield* begin("a1", "key-1", "hold A", T0 + 1), { _tag: "Wait" })
        assert.deepStrictEqual(yield* begin("a1", "key-1", "hold B", T0 + 1), { _tag: "Reused" })
        assert.deepStrictEqual(yield* store.find("a1", "key-1"), {
          accountId: "a1",
          key: "key-1",
          fingerprint: "hold A",
          startedAt: T0,
          outcome: null
        })
        assert.isFalse(yield* store.complete({ accountId: "a1", key: "key-1", startedAt: T0 + 1, outcome: "not this run's" }))
        assert.isTrue(yield* store.complete({ accountId: "a1", key: "key-1", startedAt: T0, outcome: "answer" }))
        assert.isFalse(yield* store.complete({ accountId: "a1", key: "key-1", startedAt: T0, outcome: "a second answer" }))
        assert.deepStrictEqual(yield* begin("a1", "key-1", "hold A", T0 + 2), { _tag: "Replay", outcome: "answer" })
        assert.deepStrictEqual(yield* begin("a1", "key-1", "hold B", T0 + 2), { _tag: "Reused" })
        // Keys belong to the account: another account's same key is its own.
        assert.deepStrictEqual(yield* begin("a2", "key-1", "hold B", T0 + 2), { _tag: "Run" })
        assert.strictEqual(yield* store.find("a3", "key-1"), undefined)
      })))

    it.live("an answer is kept exactly as written", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const outcome = `{"z":1,"a":"é\u2028 ü","b":[{"y":null,"x":0.5}]}`
        yield* begin("a1", "exact", "f", T0)
        yield* store.complete({ accountId: "a1", key: "exact", startedAt: T0, outcome })
        assert.strictEqual((yield* store.find("a1", "exact"))!.outcome, outcome)
        assert.deepStrictEqual(yield* begin("a1", "exact", "f", T0 + 1), { _tag: "Replay", outcome })
      })))

    it.live("a released run frees its key; a run that is not the record's, or one answered, releases nothing", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        yield* begin("a1", "released", "f", T0)
        yield* store.release({ accountId: "a1", key: "released", startedAt: T0 - 1 })
        assert.deepStrictEqual(yield* begin("a1", "released", "f", T0 + 1), { _tag: "Wait" })
        yield* store.release({ accountId: "a1", key: "released", startedAt: T0 })
        assert.strictEqual(yield* store.find("a1", "released"), undefined)
        assert.deepStrictEqual(yield* begin("a1", "released", "g", T0 + 2), { _tag: "Run" })
        yield* store.complete({ accountId: "a1", key: "released", startedAt: T0 + 2, outcome: "kept" })
        yield* store.release({ accountId: "a1", key: "released", startedAt: T0 + 2 })
        assert.deepStrictEqual(yield* begin("a1", "released", "g", T0 + 3), { _tag: "Replay", outcome: "kept" })
      })))

    it.live("a run unanswered for over a minute is taken over, and the late answer of the first run is not kept", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        yield* begin("a1", "abandoned", "f", T0)
        assert.deepStrictEqual(yield* begin("a1", "abandoned", "f", T0 + ABANDONED_AFTER_MS), { _tag: "Wait" })
        assert.deepStrictEqual(yield* begin("a1", "abandoned", "g", T0 + ABANDONED_AFTER_MS + 1), { _tag: "Reused" })
        const takeover = T0 + ABANDONED_AFTER_MS + 1
        assert.deepStrictEqual(yield* begin("a1", "abandoned", "f", takeover), { _tag: "Run" })
        assert.isFalse(yield* store.complete({ accountId: "a1", key: "abandoned", startedAt: T0, outcome: "late" }))
        assert.isTrue(yield* store.complete({ accountId: "a1", key: "abandoned", startedAt: takeover, outcome: "second" }))
        assert.deepStrictEqual(yield* begin("a1", "abandoned", "f", takeover + 1), { _tag: "Replay", outcome: "second" })
      })))

    it.live("a key is bound for 24 hours from its start, that instant included; pruning deletes what started before a time", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        yield* begin("a1", "day", "f", T0)
        yield* store.complete({ accountId: "a1", key: "day", startedAt: T0, outcome: "first" })
        assert.deepStrictEqual(yield* begin("a1", "day", "g", T0 + RETENTION_MS), { _tag: "Reused" })
        assert.deepStrictEqual(yield* begin("a1", "day", "g", T0 + RETENTION_MS + 1), { _tag: "Run" })

        yield* begin("a2", "old", "f", T0)
        yield* store.complete({ accountId: "a2", key: "old", startedAt: T0, outcome: "old" })
        yield* begin("a2", "running", "f", T0 + 1)
        yield* begin("a2", "recent", "f", T0 + HOUR)
        assert.strictEqual(yield* store.prune(T0 + 2), 2)
        assert.strictEqual(yield* store.find("a2", "old"), undefined)
        assert.strictEqual(yield* store.find("a2", "running"), undefined)
        assert.strictEqual((yield* store.find("a2", "recent"))!.startedAt, T0 + HOUR)
        assert.strictEqual((yield* store.find("a1", "day"))!.fingerprint, "g")
        assert.strictEqual(yield* store.prune(T0 + 2), 0)
      })))

    it.live("of concurrent requests with one key, exactly one runs: a first one, or one taking over an abandoned or expired run", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const race = (key: string, now: number) =>
          Effect.forEach(Array.from({ length: 20 }, (_, i) => i), () => begin("a1", key, "f", now), { concurrency: "unbounded" })
        const tally = (decisions: ReadonlyArray<BeginDecision>) => ({
          run: decisions.filter((decision) => decision._tag === "Run").length,
          wait: decisions.filter((decision) => decision._tag === "Wait").length
        })
        assert.deepStrictEqual(tally(yield* race("concurrent", T0)), { run: 1, wait: 19 })
        assert.deepStrictEqual(tally(yield* race("concurrent", T0 + ABANDONED_AFTER_MS + 1)), { run: 1, wait: 19 })
        yield* store.complete({ accountId: "a1", key: "concurrent", startedAt: T0 + ABANDONED_AFTER_MS + 1, outcome: "done" })
        assert.deepStrictEqual(tally(yield* race("concurrent", T0 + 2 * RETENTION_MS)), { run: 1, wait: 19 })
      })))

    it.live("follows the rules of idempotency keys in any sequence of requests, answers, faults, time and pruning", () =>
      run(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const exec = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)
        interface ModelRecord {
          fingerprint: string
          startedAt: number
          outcome: string | null
        }
        interface Model {
          now: number
          records: Map<string, ModelRecord>
          runs: number
        }
        // The rules, written out plainly: 24 hours bound, one minute to abandon, first request runs.
        const expectedDecision = (model: Model, slot: string, fingerprint: string): BeginDecision => {
          const record = model.records.get(slot)
          if (record === undefined || model.now - record.startedAt > 24 * HOUR) return { _tag: "Run" }
          if (record.fingerprint !== fingerprint) return { _tag: "Reused" }
          if (record.outcome !== null) return { _tag: "Replay", outcome: record.outcome }
          return model.now - record.startedAt > 60_000 ? { _tag: "Run" } : { _tag: "Wait" }
        }
        let round = 0
        type Command = fc.AsyncCommand<Model, { readonly prefix: string }>
        const slotOf = (account: number, key: number) => `${account}:${key}`
        const names = (real: { readonly prefix: string }, account: number, key: number) => ({
          accountId: `${real.prefix}-acct${account}`,
          key: `key-${key}`
        })
        const account = fc.integer({ min: 0, max: 1 })
        const key = fc.integer({ min: 0, max: 1 })
        const commands: Array<fc.Arbitrary<Command>> = [
          fc.record({ account, key, fingerprint: fc.constantFrom("reveal A", "hold A") }).map(({ account, key, fingerprint }): Command => ({
            check: () => true,
            run: async (model, real) => {
              const slot = slotOf(account, key)
              const expected = expectedDecision(model, slot, fingerprint)
              const actual = await exec(store.begin({ ...names(real, account, key), fingerprint, now: model.now }))
              assert.deepStrictEqual(actual, expected, `begin ${slot} ${fingerprint} at ${model.now}`)
              if (expected._tag === "Run") model.records.set(slot, { fingerprint, startedAt: model.now, outcome: null })
            },
            toString: () => `begin(${account}, ${key}, ${fingerprint})`
          })),
          fc.record({ account, key, stale: fc.boolean() }).map(({ account, key, stale }): Command => ({
            check: () => true,
            run: async (model, real) => {
              const slot = slotOf(account, key)
              const record = model.records.get(slot)
              const startedAt = (record?.startedAt ?? model.now) - (stale ? 1 : 0)
              const outcome = `answer ${++model.runs}`
              const owns = record !== undefined && !stale && record.outcome === null
              const kept = await exec(store.complete({ ...names(real, account, key), startedAt, outcome }))
              assert.strictEqual(kept, owns, `complete ${slot}`)
              if (owns) record.outcome = outcome
            },
            toString: () => `complete(${account}, ${key}${stale ? ", stale" : ""})`
          })),
          fc.record({ account, key }).map(({ account, key }): Command => ({
            check: () => true,
            run: async (model, real) => {
              const slot = slotOf(account, key)
              const record = model.records.get(slot)
              if (record === undefined) return
              await exec(store.release({ ...names(real, account, key), startedAt: record.startedAt }))
              if (record.outcome === null) model.records.delete(slot)
            },
            toString: () => `release(${account}, ${key})`
          })),
          fc.constantFrom(1, 30_000, 60_000, 61_000, HOUR, 24 * HOUR, 25 * HOUR).map((ms): Command => ({
            check: () => true,
            run: async (model) => {
              model.now += ms
            },
            toString: () => `advance(${ms})`
          })),
          fc.constant<Command>({
            check: () => true,
            run: async (model, real) => {
              await exec(store.prune(model.now - 24 * HOUR))
              for (const [slot, record] of model.records) {
                if (record.startedAt < model.now - 24 * HOUR) model.records.delete(slot)
              }
              for (const [slot] of model.records) {
                const [account, key] = slot.split(":").map(Number)
                const found = await exec(store.find(names(real, account!, key!).accountId, `key-${key}`))
                assert.isDefined(found, `pruned too much: ${slot}`)
              }
            },
            toString: () => "prune()"
          })
        ]
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.commands(commands, { maxCommands: 30 }), async (sequence) => {
              round++
              const start = T0 + round * 30 * DAY
              await fc.asyncModelRun(
                () => ({ model: { now: start, records: new Map(), runs: 0 }, real: { prefix: `run${round}` } }),
                sequence
              )
            }),
            { numRuns: 40 }
          )
        )
      })))
  })
}
