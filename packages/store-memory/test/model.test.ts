import { describe, it } from "@effect/vitest"
import { Directory, Operators, Plan, Time } from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { StoreMemory } from "@dropshelf/store-memory"
import { Clock, Effect, Exit, ManagedRuntime } from "effect"
import fc from "fast-check"
import { expect } from "vitest"

/*
 * Model-based runs of reveals and holds: random sequences of commands by several accounts on
 * each plan, with time jumping through hold windows, extensions, cooldowns and month ends,
 * checked step by step against a plain model of the spec's rules.
 */

const HOUR = Time.HOUR
const DAY = Time.DAY
const START = Date.UTC(2026, 5, 27, 9)
const ACCOUNTS = ["free", "pro", "pro", "business"] as const
const TIERS = ["regular", "regular", "featured", "open"] as const
// Twelve regular listings: more than the free plan's ten reveals a month.
const LISTINGS = Array.from({ length: 24 }, (_, i) => ({ id: `MODEL${String(i).padStart(3, "0")}`, tier: TIERS[i % 4]! }))

interface ModelHold {
  id: string
  account: number
  listing: string
  expiresAt: number
  extended: boolean
  endedAt: number | null
}

interface Model {
  now: number
  revealed: Array<Map<string, number>>
  used: Map<string, number>
  holds: Array<ModelHold>
}

interface Real {
  readonly runtime: ManagedRuntime.ManagedRuntime<Directory.Directory | Operators.Operators, never>
  readonly clock: { now: number }
  readonly callers: ReadonlyArray<Directory.KeyCaller>
}

const planOf = (account: number) => Plan.Plans[ACCOUNTS[account]!]
const running = (hold: ModelHold, now: number) => hold.endedAt === null && now < hold.expiresAt
const endOf = (hold: ModelHold) => hold.endedAt ?? hold.expiresAt

const execute = <A, E>(real: Real, f: (directory: Directory.Directory["Service"]) => Effect.Effect<A, E>) => {
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: () => real.clock.now,
    currentTimeMillis: Effect.sync(() => real.clock.now),
    currentTimeNanosUnsafe: () => BigInt(real.clock.now) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(real.clock.now) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => BigInt(real.clock.now) * 1_000_000n,
    monotonicTimeNanos: Effect.sync(() => BigInt(real.clock.now) * 1_000_000n),
    sleep: () => Effect.void
  }
  return real.runtime.runPromiseExit(
    Effect.gen(function*() {
      return yield* f(yield* Directory.Directory)
    }).pipe(Effect.provideService(Clock.Clock, clock))
  )
}

const outcomeTag = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isSuccess(exit) ? "ok" : exit.cause.reasons[0]?._tag === "Fail" ? (exit.cause.reasons[0] as { error: { _tag: string } }).error._tag : "defect"

/** What the model expects a reveal to do, applying it to the model when it succeeds. */
const modelReveal = (model: Model, account: number, listingId: string): string => {
  const listing = LISTINGS.find((entry) => entry.id === listingId)!
  const plan = planOf(account)
  if (model.revealed[account]!.has(listingId)) return "ok"
  if (listing.tier === "featured" && !plan.revealFeatured) return "FeaturedRequiresPro"
  if (model.holds.some((hold) => hold.listing === listingId && running(hold, model.now) && hold.account !== account)) {
    return "HeldByOther"
  }
  if (listing.tier !== "open" && plan.revealsPerMonth !== null) {
    const key = `${account}:${Time.monthOf(model.now)}`
    const used = model.used.get(key) ?? 0
    if (used >= plan.revealsPerMonth) return "QuotaExhausted"
    model.used.set(key, used + 1)
  }
  model.revealed[account]!.set(listingId, model.now)
  return "ok"
}

const modelHold = (model: Model, account: number, listingId: string): string | ModelHold => {
  const plan = planOf(account)
  if (plan.concurrentHolds === 0) return "HoldsRequirePro"
  const current = model.holds.find((hold) => hold.listing === listingId && running(hold, model.now))
  if (current !== undefined && current.account !== account) return "HeldByOther"
  if (!model.revealed[account]!.has(listingId)) return "RevealRequired"
  if (current !== undefined) return current
  if (model.holds.filter((hold) => hold.account === account && running(hold, model.now)).length >= plan.concurrentHolds) {
    return "HoldCapReached"
  }
  const cooling = model.holds.some((hold) =>
    hold.account === account && hold.listing === listingId && model.now < endOf(hold) + 30 * DAY
  )
  if (cooling) return "HoldCooldown"
  return "create"
}

class RevealCommand implements fc.AsyncCommand<Model, Real> {
  readonly account: number
  readonly listing: string
  constructor(account: number, listing: string) {
    this.account = account
    this.listing = listing
  }
  check = () => true
  async run(model: Model, real: Real) {
    const expected = modelReveal(model, this.account, this.listing)
    const exit = await execute(real, (directory) => directory.reveal(real.callers[this.account]!, this.listing))
    expect(outcomeTag(exit)).toBe(expected)
    if (Exit.isSuccess(exit)) {
      expect(Date.parse(exit.value.revealed_at)).toBe(model.revealed[this.account]!.get(this.listing))
    }
  }
  toString = () => `reveal(${ACCOUNTS[this.account]}#${this.account}, ${this.listing})`
}

/** Several reveals in a row by one account, so monthly ceilings are reached within a run. */
class RevealBurstCommand implements fc.AsyncCommand<Model, Real> {
  readonly account: number
  readonly from: number
  constructor(account: number, from: number) {
    this.account = account
    this.from = from
  }
  check = () => true
  async run(model: Model, real: Real) {
    for (let i = 0; i < 8; i++) {
      await new RevealCommand(this.account, LISTINGS[(this.from + i) % LISTINGS.length]!.id).run(model, real)
    }
  }
  toString = () => `revealBurst(${ACCOUNTS[this.account]}#${this.account}, from ${this.from})`
}

class HoldCommand implements fc.AsyncCommand<Model, Real> {
  readonly account: number
  readonly listing: string
  constructor(account: number, listing: string) {
    this.account = account
    this.listing = listing
  }
  check = () => true
  async run(model: Model, real: Real) {
    const expected = modelHold(model, this.account, this.listing)
    const exit = await execute(real, (directory) => directory.hold(real.callers[this.account]!, this.listing))
    if (typeof expected === "string" && expected !== "create") {
      expect(outcomeTag(exit)).toBe(expected)
      return
    }
    expect(outcomeTag(exit)).toBe("ok")
    if (!Exit.isSuccess(exit)) return
    const hold = exit.value.hold
    if (expected === "create") {
      expect(Date.parse(hold.expires_at)).toBe(model.now + planOf(this.account).holdHours * HOUR)
      model.holds.push({ id: hold.id, account: this.account, listing: this.listing, expiresAt: Date.parse(hold.expires_at), extended: false, endedAt: null })
    } else {
      expect(hold.id).toBe(expected.id)
      expect(Date.parse(hold.expires_at)).toBe(expected.expiresAt)
    }
  }
  toString = () => `hold(${ACCOUNTS[this.account]}#${this.account}, ${this.listing})`
}

/** Reveal and hold several listings in a row, so that caps are reached within a run. */
class GrabCommand implements fc.AsyncCommand<Model, Real> {
  readonly account: number
  readonly from: number
  constructor(account: number, from: number) {
    this.account = account
    this.from = from
  }
  check = () => true
  async run(model: Model, real: Real) {
    for (let i = 0; i < 4; i++) {
      const listing = LISTINGS[(this.from + i) % LISTINGS.length]!.id
      await new RevealCommand(this.account, listing).run(model, real)
      await new HoldCommand(this.account, listing).run(model, real)
    }
  }
  toString = () => `grab(${ACCOUNTS[this.account]}#${this.account}, from ${this.from})`
}

/** Acts on the pick-th hold the model knows (any account's), so foreign holds are tried too. */
class ExtendOrEndCommand implements fc.AsyncCommand<Model, Real> {
  readonly account: number
  readonly pick: number
  readonly action: "extend" | "released" | "registered"
  constructor(account: number, pick: number, action: "extend" | "released" | "registered") {
    this.account = account
    this.pick = pick
    this.action = action
  }
  check = (model: Readonly<Model>) => model.holds.length > 0
  async run(model: Model, real: Real) {
    const hold = model.holds[this.pick % model.holds.length]!
    const plan = planOf(this.account)
    let expected: string
    if (hold.account !== this.account) expected = "HoldNotFound"
    else if (this.action === "extend" && plan.concurrentHolds === 0) expected = "HoldsRequirePro"
    else if (!running(hold, model.now)) expected = "HoldOver"
    else if (this.action === "extend" && hold.extended) expected = "AlreadyExtended"
    else expected = "ok"
    const caller = real.callers[this.account]!
    const exit = await execute(real, (directory) =>
      this.action === "extend" ? directory.extend(caller, hold.id) : directory.end(caller, hold.id, this.action))
    expect(outcomeTag(exit)).toBe(expected)
    if (expected !== "ok") return
    if (this.action === "extend") {
      hold.expiresAt += plan.extendHours * HOUR
      hold.extended = true
    } else {
      hold.endedAt = model.now
    }
    if (Exit.isSuccess(exit)) expect(Date.parse(exit.value.hold.expires_at)).toBe(hold.expiresAt)
  }
  toString = () => `${this.action}(${ACCOUNTS[this.account]}#${this.account}, hold #${this.pick})`
}

class AdvanceCommand implements fc.AsyncCommand<Model, Real> {
  readonly ms: number
  constructor(ms: number) {
    this.ms = ms
  }
  check = () => true
  async run(model: Model, real: Real) {
    model.now += this.ms
    real.clock.now = model.now
  }
  toString = () => `advance(${this.ms / HOUR}h)`
}

/** Invariants read back through the use cases after every run. */
const checkInvariants = async (model: Model, real: Real) => {
  const runningByListing = new Map<string, number>()
  for (const [account, caller] of real.callers.entries()) {
    const exit = await execute(real, (directory) => Effect.all([directory.holds(caller), directory.me(caller, {
      allowed: true, limit: 1, remaining: 0, resetAt: 0
    })]))
    if (!Exit.isSuccess(exit)) throw new Error("holds or me failed")
    const [holds, me] = exit.value
    const runningHolds = holds.data.filter((hold) => hold.state === "running")
    expect(runningHolds.length).toBeLessThanOrEqual(planOf(account).concurrentHolds)
    for (const hold of runningHolds) runningByListing.set(hold.listing_id, (runningByListing.get(hold.listing_id) ?? 0) + 1)
    if (me.reveals.limit !== null) expect(me.reveals.used).toBeLessThanOrEqual(me.reveals.limit)
    expect(me.reveals.used).toBe(model.used.get(`${account}:${Time.monthOf(model.now)}`) ?? 0)
  }
  for (const count of runningByListing.values()) expect(count).toBe(1)
}

const accountArb = fc.integer({ min: 0, max: ACCOUNTS.length - 1 })
// Single reveals and holds aim at a few listings so that accounts contend for them.
const listingArb = fc.constantFrom(...LISTINGS.slice(0, 6).map((listing) => listing.id))
const commands = fc.commands([
  fc.tuple(accountArb, listingArb).map(([account, listing]) => new RevealCommand(account, listing)),
  fc.tuple(accountArb, fc.nat({ max: LISTINGS.length - 1 })).map(([account, from]) => new RevealBurstCommand(account, from)),
  fc.tuple(accountArb, listingArb).map(([account, listing]) => new HoldCommand(account, listing)),
  fc.tuple(accountArb, fc.nat({ max: LISTINGS.length - 1 })).map(([account, from]) => new GrabCommand(account, from)),
  fc.tuple(accountArb, fc.nat(), fc.constantFrom("extend", "released", "registered") as fc.Arbitrary<"extend" | "released" | "registered">)
    .map(([account, pick, action]) => new ExtendOrEndCommand(account, pick, action)),
  fc.constantFrom(HOUR, 25 * HOUR, 49 * HOUR, 8 * DAY, 31 * DAY).map((ms) => new AdvanceCommand(ms))
], { maxCommands: 80, size: "max" })

const setup = async (): Promise<{ model: Model; real: Real }> => {
  const runtime = ManagedRuntime.make(StoreMemory.layerDirectory)
  const clock = { now: START }
  const callers = await runtime.runPromise(Effect.gen(function*() {
    const operators = yield* Operators.Operators
    const directory = yield* Directory.Directory
    yield* operators.upsertListings(LISTINGS.map(({ id, tier }) =>
      Fixtures.listingInput(id, { tier, discoveredAt: START - 60 * DAY })))
    return yield* Effect.forEach(ACCOUNTS, (plan, index) =>
      Effect.gen(function*() {
        const account = yield* operators.createAccount(`model-${index}`, plan)
        const { secret } = yield* operators.createKey(account.id, "model")
        return yield* directory.authenticate(secret)
      }))
  }))
  return {
    model: { now: START, revealed: ACCOUNTS.map(() => new Map()), used: new Map(), holds: [] },
    real: { runtime, clock, callers }
  }
}

describe("reveal and hold rules against a model", () => {
  it("never two running holds on a listing, never over a cap or a ceiling, a reveal charged once", async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const { model, real } = await setup()
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds)
          await checkInvariants(model, real)
        } finally {
          await real.runtime.dispose()
        }
      }),
      { numRuns: 150 }
    )
  }, 120_000)
})
