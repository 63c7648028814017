/**
 * Runs the core on plain Node (type stripping, no vitest transform): vitest compiles syntax
 * that Node rejects, so this catches what the test run would hide.
 */
import { Effect } from "effect"
import { Bands, Masking, Plan } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"

const hint = Masking.maskHint("bestcoffeeshop.com")
if (hint !== "b*********shop.com") throw new Error(`unexpected mask ${hint}`)
if (Bands.directoryScoreRange(57).low !== 50) throw new Error("unexpected score range")
if (Plan.Plans.business.revealsPerMonth !== null) throw new Error("unexpected plan table")
await Effect.runPromise(Effect.scoped(Effect.asVoid(StoreMemory.smoke)))
console.log("smoke-core: the core and the in-memory adapter run on plain node")
