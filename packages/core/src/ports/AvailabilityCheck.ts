import { Clock, Context, Effect, Layer } from "effect"
import type { Instant } from "../domain/Time.ts"

export type Availability =
  | { readonly _tag: "Unregistered"; readonly checkedAt: Instant }
  | { readonly _tag: "Registered"; readonly checkedAt: Instant }
  /** The registry did not answer usefully in time; the last stamp stands. */
  | { readonly _tag: "Unknown" }

/** The on-the-spot re-check a reveal does. */
export class AvailabilityCheck extends Context.Service<AvailabilityCheck, {
  readonly check: (domain: string) => Effect.Effect<Availability>
}>()("@dropshelf/core/AvailabilityCheck") {
  /** No registry configured: every check only stamps the time, as if confirmed unregistered. */
  static readonly layerStampOnly = Layer.succeed(AvailabilityCheck, {
    check: () => Effect.map(Clock.currentTimeMillis, (checkedAt) => ({ _tag: "Unregistered", checkedAt }) as const)
  })
}
