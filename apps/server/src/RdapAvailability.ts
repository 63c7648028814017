import { Clock, Config, Duration, Effect, Layer, Option } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { AvailabilityCheck } from "@dropshelf/core"
import { wholeNumberBetween } from "./Settings.ts"

/**
 * The reveal's on-the-spot availability re-check over RDAP (RFC 9083): `GET {base}/domain/{name}`.
 * 404 means no registration (unregistered); 200 with a domain object for that name means
 * registered; anything else — another status, a body that is not that, a time-out, a network
 * failure — is `Unknown`, and the listing's last stamp stands. The registry's answer is
 * untrusted input: it can only confirm or deny, never inject anything into a listing.
 */

export const DEFAULT_TIMEOUT = Duration.seconds(3)

export interface Options {
  /** The RDAP base URL, for example `https://rdap.example.net/v1` (no trailing `/domain`). */
  readonly baseUrl: string
  readonly timeout?: Duration.Input | undefined
}

const isRegistrationOf = (body: unknown, domain: string): boolean => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false
  const record = body as Record<string, unknown>
  if (record.objectClassName !== "domain") return false
  const name = record.ldhName ?? record.unicodeName
  return typeof name !== "string" || name.replace(/\.$/, "").toLowerCase() === domain.toLowerCase()
}

export const make = Effect.fnUntraced(function*(options: Options) {
  const client = yield* HttpClient.HttpClient
  const base = options.baseUrl.replace(/\/+$/, "")
  const timeout = options.timeout ?? DEFAULT_TIMEOUT
  const unknown: AvailabilityCheck.Availability = { _tag: "Unknown" }

  const check = (domain: string): Effect.Effect<AvailabilityCheck.Availability> =>
    Effect.gen(function*() {
      const request = HttpClientRequest.get(`${base}/domain/${encodeURIComponent(domain)}`).pipe(
        HttpClientRequest.acceptJson,
        HttpClientRequest.setHeader("accept", "application/rdap+json, application/json")
      )
      const response = yield* client.execute(request)
      if (response.status === 404) {
        return { _tag: "Unregistered", checkedAt: yield* Clock.currentTimeMillis } as const
      }
      if (response.status === 200 && isRegistrationOf(yield* response.json, domain)) {
        return { _tag: "Registered", checkedAt: yield* Clock.currentTimeMillis } as const
      }
      return unknown
    }).pipe(
      Effect.scoped,
      Effect.timeoutOption(timeout),
      Effect.map(Option.getOrElse(() => unknown)),
      Effect.catchCause(() => Effect.succeed(unknown))
    )

  return AvailabilityCheck.AvailabilityCheck.of({ check })
})

/** The RDAP check over `fetch`. */
export const layer = (options: Options): Layer.Layer<AvailabilityCheck.AvailabilityCheck> =>
  Layer.effect(AvailabilityCheck.AvailabilityCheck, make(options)).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * `DROPSHELF_RDAP_URL` set: the RDAP check (`DROPSHELF_RDAP_TIMEOUT_MS`, default 3000, bounds
 * each look-up). Unset: the check only stamps the time (`AvailabilityCheck.layerStampOnly`).
 */
export const layerFromEnv: Layer.Layer<AvailabilityCheck.AvailabilityCheck, Config.ConfigError> = Layer.unwrap(
  Effect.gen(function*() {
    const url = yield* Config.option(Config.String("DROPSHELF_RDAP_URL"))
    // A reveal waits for the look-up: more than half a minute is no longer a wait.
    const timeoutMs = yield* wholeNumberBetween("DROPSHELF_RDAP_TIMEOUT_MS", 100, 30_000, 3000)
    return Option.isSome(url) && url.value.trim() !== ""
      ? layer({ baseUrl: url.value.trim(), timeout: Duration.millis(timeoutMs) })
      : AvailabilityCheck.AvailabilityCheck.layerStampOnly
  })
)
