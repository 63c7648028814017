import { type Ids, ListingStore, Operators, type Plan } from "@dropshelf/core"
import { Clock, Effect, Schema } from "effect"
import { mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { emit, note } from "./Output.ts"
import * as DemoFixtures from "./DemoFixtures.ts"
import * as Progress from "./Progress.ts"
import * as Runtime from "./Runtime.ts"
import * as Seed from "./Seed.ts"

/*
 * `npm start`: a directory to try the API on, in one command. The first run migrates, seeds
 * DEMO_LISTINGS listings with DEMO_SEED, creates one account per plan, and adds what the API
 * reference's examples name (DemoFixtures.ts). Every run (the first
 * included) rotates the demo keys: the previous demo key of each account is revoked and a fresh
 * one printed, so the keys on screen always work and no account drifts towards its key ceiling.
 * Each run also prints a one-time sign-in link per account, into its account area. Secrets are
 * never written to disk; the marker file keeps account ids and key prefixes only.
 */

export const DEMO_LISTINGS = 5000
export const DEMO_SEED = 1
const PLANS: ReadonlyArray<Plan.PlanName> = ["free", "pro", "business"]

const Marker = Schema.Struct({
  accounts: Schema.Array(Schema.Struct({ plan: Schema.String, accountId: Schema.String, prefix: Schema.String }))
})
type Marker = typeof Marker.Type
const decodeMarker = Schema.decodeUnknownOption(Schema.fromJsonString(Marker))

/** Where the demo remembers its accounts: beside the embedded database, in the data directory. */
export const markerPath = (config: Runtime.DropshelfConfig): string => join(config.dataDir, "demo.json")

const readMarker = (path: string): Effect.Effect<Marker | undefined> =>
  Effect.promise(() => readFile(path, "utf8").catch(() => undefined)).pipe(
    Effect.map((text) => {
      if (text === undefined) return undefined
      const decoded = decodeMarker(text)
      return decoded._tag === "Some" ? decoded.value : undefined
    })
  )

const writeMarker = (config: Runtime.DropshelfConfig, marker: Marker): Effect.Effect<void> =>
  Effect.promise(async () => {
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 })
    const path = markerPath(config)
    await writeFile(`${path}.tmp`, JSON.stringify(marker, null, 2) + "\n")
    await rename(`${path}.tmp`, path)
  })

/** The id of the first listing seed DEMO_SEED produces: present means the demo directory is seeded. */
const firstSeedId = (now: number): Ids.ListingId => {
  for (const line of Seed.seedLines(1, DEMO_SEED, now)) return line.id as Ids.ListingId
  throw new Error("seedLines(1) produced nothing")
}

export interface DemoKey {
  readonly plan: Plan.PlanName
  readonly accountId: string
  readonly key: string
  readonly prefix: string
  /** A one-time link into the account's area (Config.signInUrl). */
  readonly signInUrl: string
}

const setUp = Effect.fnUntraced(function*(config: Runtime.DropshelfConfig) {
  const operators = yield* Operators.Operators
  const listings = yield* ListingStore.ListingStore
  const now = yield* Clock.currentTimeMillis

  let seeded = 0
  if ((yield* listings.find(firstSeedId(now))) === undefined) {
    yield* note(`Seeding a demo directory of ${DEMO_LISTINGS} listings…`)
    const report = yield* Seed.seed(DEMO_LISTINGS, DEMO_SEED, yield* Progress.make("seed"))
    seeded = report.inserted
  }

  const previous = yield* readMarker(markerPath(config))
  const keys: Array<DemoKey> = []
  for (const plan of PLANS) {
    const known = previous?.accounts.find((account) => account.plan === plan)
    if (known !== undefined) yield* Effect.ignore(operators.revokeKey(known.prefix))
    const created = known === undefined ? undefined : yield* Effect.option(operators.setPlan(known.accountId, plan))
    const accountId = created !== undefined && created._tag === "Some"
      ? created.value.id
      : (yield* operators.createAccount(`demo-${plan}`, plan)).id
    const { key, secret } = yield* Effect.orDie(operators.createKey(accountId, `demo-${plan}`))
    const link = yield* Effect.orDie(operators.issueSignInLink(accountId))
    keys.push({ plan, accountId, key: secret, prefix: key.prefix, signInUrl: Runtime.signInUrl(config, link.token) })
  }
  yield* writeMarker(config, {
    accounts: keys.map((demoKey) => ({ plan: demoKey.plan, accountId: demoKey.accountId, prefix: demoKey.prefix }))
  })
  const business = keys.find((demoKey) => demoKey.plan === "business")!
  yield* DemoFixtures.ensure(business.accountId)
  return { seeded, firstRun: previous === undefined, keys }
})

/** Over migrated storage: seeds on the first run, rotates the demo keys and prints them with a ready `curl` line. */
export const prepare = Effect.fnUntraced(function*(config: Runtime.DropshelfConfig, json: boolean) {
  const { firstRun, keys, seeded } = yield* setUp(config)
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host
  const business = keys.find((demoKey) => demoKey.plan === "business")!
  const curl = `curl -H "Authorization: Bearer ${business.key}" "http://${host}:${config.port}/api/v1/domains?limit=2"`
  yield* emit(json, { seeded, keys, curl }, () =>
    [
      firstRun
        ? `Demo directory ready in ${Runtime.describeStorage(config)}: ${seeded} listings, one account per plan.`
        : `Reusing the demo directory in ${Runtime.describeStorage(config)}; the demo keys were rotated (the old ones are revoked).`,
      "",
      ...keys.flatMap((demoKey) => [
        `  ${demoKey.plan.padEnd(8)} account ${demoKey.accountId}  key ${demoKey.key}`,
        `  ${"".padEnd(8)} sign in (one use) ${demoKey.signInUrl}`
      ]),
      "",
      "The account area is at /account; `npx dropshelf accounts sign-in-link <account-id>` prints a new link.",
      "",
      "Try:",
      `  ${curl}`,
      ""
    ].join("\n"))
})
