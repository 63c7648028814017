/**
 * Watches on a PostgreSQL server (DATABASE_URL, default the local one), in one process, no
 * assertion; the figures go to docs/performance.md by hand.
 *
 *   1. matching cost: BENCH_WATCHES (10000) watches of 100 business accounts, each with a query
 *      of a TLD and a search word, some with a category or a score floor (about ten match a listing); BENCH_LISTINGS (5000) listings upserted in batches of 500, then
 *      matching rounds until no event is left: milliseconds of matching per imported listing
 *      (whole rounds: the statements and the core's rule), and of the rule alone.
 *   2. delivery latency: the real server with its worker (default settings: a 1 s poll), a
 *      loopback receiver, one watch with a webhook among the 10 000; BENCH_DELIVERIES (200)
 *      listings upserted one at a time, 100 ms apart: from the upsert's commit to the
 *      receiver's request, p50 and p99.
 *   3. reading matches: the webhook watch's matches (one a delivered listing) in one page of
 *      the largest size, each listing as the account reads it now, BENCH_MATCH_READS (50) times:
 *      the median milliseconds a page.
 *
 * A fresh database `dropshelf_bench_watches` each run.
 */
import { createServer } from "node:http"
import {
  AvailabilityCheck,
  Cursor,
  Directory,
  ListingStore,
  Operators,
  RateLimiter,
  UseCases,
  Watch,
  Watches,
  WatchStore
} from "@dropshelf/core"
import { Fixtures } from "@dropshelf/core/testing"
import { StoreMemory } from "@dropshelf/store-memory"
import { Server, WebAuthnSimple, WebhookDelivery } from "@dropshelf/server"
import { Effect, Layer, ManagedRuntime } from "effect"
import { StoreSql } from "../packages/store-sql/src/index.ts"
import { databaseUrl, psql } from "./postgres.ts"
import { percentileOf } from "./stats.ts"

const WATCHES = Number(process.env.BENCH_WATCHES ?? 10_000)
const LISTINGS = Number(process.env.BENCH_LISTINGS ?? 5_000)
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 200)
const MATCH_READS = Number(process.env.BENCH_MATCH_READS ?? 50)
const DB = "dropshelf_bench_watches"

psql(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`)
psql(`CREATE DATABASE ${DB}`)
psql("CREATE EXTENSION IF NOT EXISTS btree_gist; CREATE EXTENSION IF NOT EXISTS pg_trgm", DB)

const url = databaseUrl(DB)
const settings: Watches.WatchSettings = { ...Watches.DEFAULT_SETTINGS, allowPrivate: true }
const stores = Layer.mergeAll(StoreSql.layerStores, RateLimiter.layerInProcess).pipe(
  Layer.provideMerge(Layer.effectDiscard(StoreSql.migrate).pipe(Layer.provideMerge(StoreSql.layerServerClient({ url }))))
)
const core = Layer.mergeAll(
  UseCases.layer.pipe(Layer.provide(WebAuthnSimple.layer)),
  Watches.Watches.layer.pipe(
    Layer.provide(WebhookDelivery.layer(true)),
    Layer.provide(Layer.succeed(Watches.WatchSettingsRef, settings))
  )
).pipe(
  Layer.provide(Cursor.CursorCodec.layer.pipe(Layer.provide(StoreMemory.layerEphemeralCursorSecret))),
  Layer.provide(AvailabilityCheck.AvailabilityCheck.layerStampOnly),
  Layer.provideMerge(stores),
  Layer.provideMerge(StoreMemory.layerCrypto)
)
const runtime = ManagedRuntime.make(core)
const run = <A, E>(effect: Effect.Effect<A, E, any>) => runtime.runPromise(effect as Effect.Effect<A, E, never>)

const TLDS = ["com", "net", "io", "co.uk", "org"]
const CATEGORIES = ["tech", "food", "travel"]
/** Search words: a watch looks for one, a listing carries one among its tags. */
const WORDS = Array.from({ length: 200 }, (_, i) => `word${i.toString(36)}x`)
/**
 * A hunter's query: a TLD and a search word, sometimes a category or a score floor; about ten
 * of the 10 000 watches match a listing.
 */
const queryFor = (i: number): Record<string, string> => {
  const query: Record<string, string> = { tld: TLDS[i % TLDS.length]!, q: WORDS[Math.floor(i / TLDS.length) % WORDS.length]! }
  if (i % 4 === 0) query.category = CATEGORIES[i % 3]!
  if (i % 3 === 0) query.rsMin = String((i * 7) % 40)
  return query
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6

// ---------------------------------------------------------------------------------------------
// 1. Matching cost

const accounts = await run(Effect.gen(function*() {
  const operators = yield* Operators.Operators
  return yield* Effect.forEach(Array.from({ length: 100 }, (_, i) => i), (i) => operators.createAccount(`bench-${i}`, "business"))
}))
await run(Effect.gen(function*() {
  const store = yield* WatchStore.WatchStore
  const now = Date.now() - 60_000
  yield* Effect.forEach(Array.from({ length: WATCHES }, (_, i) => i), (i) =>
    store.create({
      id: `wch_bench${i.toString(36).padStart(6, "0")}`,
      accountId: accounts[i % accounts.length]!.id,
      name: `bench ${i}`,
      query: queryFor(i),
      webhook: null,
      paused: false,
      createdAt: now,
      updatedAt: now
    }, WATCHES), { concurrency: 8, discard: true })
}))

const listings = Array.from({ length: LISTINGS }, (_, i) =>
  Fixtures.listingInput(`B${i.toString(36).padStart(7, "0")}`, {
    domain: `bench${i}.${TLDS[i % TLDS.length]}`,
    category: CATEGORIES[i % 3]!,
    tags: [WORDS[(i * 7) % WORDS.length]!],
    directoryScore: (i * 13) % 101,
    discoveredAt: Date.now() - 30 * 86_400_000
  }))
for (let i = 0; i < listings.length; i += 500) {
  await run(ListingStore.ListingStore.use((store) => store.upsert(listings.slice(i, i + 500))))
}

let ruleMs = 0
const started = process.hrtime.bigint()
const totals = await run(Effect.gen(function*() {
  const store = yield* WatchStore.WatchStore
  let events = 0
  let matches = 0
  while (true) {
    const now = Date.now()
    const round = yield* store.matchRound({
      now,
      limit: settings.batch,
      plan: (due, candidates) => {
        const t = process.hrtime.bigint()
        const filters = new Map<string, ReturnType<typeof Watch.filtersOf>>()
        const planned = Watch.planRound(
          due,
          candidates.map((row) => {
            const key = JSON.stringify(row.query)
            let decoded = filters.get(key)
            if (decoded === undefined) filters.set(key, decoded = Watch.filtersOf(row.query))
            return { ...row, filters: decoded }
          }),
          now
        )
        ruleMs += ms(t)
        return planned
      }
    })
    if (round.events === 0) return { events, matches }
    events += round.events
    matches += round.matches
  }
}))
const matchingMs = ms(started)
console.log(`matching: ${WATCHES} watches, ${LISTINGS} listings upserted, ${totals.events} events, ${totals.matches} matches`)
console.log(`  ${(matchingMs / LISTINGS).toFixed(2)} ms per listing (whole rounds), ${(ruleMs / LISTINGS).toFixed(2)} ms of it the rule`)

// ---------------------------------------------------------------------------------------------
// 2. Delivery latency, import to receiver

const sentAt = new Map<string, bigint>()
const latencies: Array<number> = []
const receiver = createServer((request, response) => {
  let body = ""
  request.on("data", (chunk) => (body += chunk))
  request.on("end", () => {
    const listingId = JSON.parse(body).data.match.listing?.id as string | undefined
    const at = listingId === undefined ? undefined : sentAt.get(listingId)
    if (at !== undefined) latencies.push(ms(at))
    response.writeHead(204).end()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const port = (receiver.address() as { port: number }).port

const serving = ManagedRuntime.make(
  Server.layer({ port: 0 }).pipe(Layer.merge(Watches.Watches.layerWorker), Layer.provideMerge(core))
)
await serving.runPromise(Effect.void)
const caller = await serving.runPromise(Effect.gen(function*() {
  const operators = yield* Operators.Operators
  const directory = yield* Directory.Directory
  const account = yield* operators.createAccount("bench-hook", "business")
  const { secret } = yield* operators.createKey(account.id, "bench")
  return yield* directory.authenticate(secret)
}))
await serving.runPromise(Watches.Watches.use((watches) => watches.create(caller, { name: "hook", webhook_url: `http://127.0.0.1:${port}/hook` })))
for (let i = 0; i < DELIVERIES; i++) {
  const input = Fixtures.listingInput(`D${i.toString(36).padStart(7, "0")}`, {
    domain: `latency${i}.${TLDS[i % TLDS.length]}`,
    tags: [WORDS[(i * 7) % WORDS.length]!],
    discoveredAt: Date.now() - 30 * 86_400_000
  })
  await serving.runPromise(ListingStore.ListingStore.use((store) => store.upsert([input])))
  sentAt.set(input.id, process.hrtime.bigint())
  await new Promise((wake) => setTimeout(wake, 100))
}
const deadline = Date.now() + 30_000
while (latencies.length < DELIVERIES && Date.now() < deadline) await new Promise((wake) => setTimeout(wake, 100))
latencies.sort((a, b) => a - b)
console.log(`delivery: ${latencies.length}/${DELIVERIES} delivered, import to receiver p50 ${percentileOf(latencies, 0.5).toFixed(0)} ms, p99 ${
  percentileOf(latencies, 0.99).toFixed(0)
} ms (poll ${settings.pollMs} ms)`)

// ---------------------------------------------------------------------------------------------
// 3. Reading the matches: the hook watch's page of every match, each listing as the account reads it now

const hook = (await serving.runPromise(Watches.Watches.use((watches) => watches.list(caller)))).data[0]!
const pageMs: Array<number> = []
let shown = 0
for (let i = 0; i < MATCH_READS; i++) {
  const t = process.hrtime.bigint()
  const page = await serving.runPromise(Watches.Watches.use((watches) => watches.matches(caller, hook.id, { limit: Watches.MAX_MATCH_PAGE })))
  pageMs.push(ms(t))
  shown = page.data.length
}
pageMs.sort((a, b) => a - b)
console.log(`matches: a page of ${shown} matches, p50 ${percentileOf(pageMs, 0.5).toFixed(1)} ms over ${MATCH_READS} reads`)

await serving.dispose()
await runtime.dispose()
receiver.close()
psql(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`)
