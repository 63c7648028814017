import { Clock, Effect, Layer, Stream } from "effect"
import { HttpEffect, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, OpenApi } from "effect/http-api"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { constants as zlibConstants, createGzip, type Gzip } from "node:zlib"
import { Directory, Errors, Idempotency, ListingJson, Plan, RateLimiter, Time } from "@dropshelf/core"
import { API_PREFIX, API_VERSION, CurrentCaller, DropshelfApi, type ServiceIndex } from "@dropshelf/api/Api"
import { ApiKeyAuthLive } from "./ApiKeyAuth.ts"
import { refuseAs } from "./ErrorMapping.ts"
import * as Health from "./Health.ts"
import { ListingRendering } from "./ListingRendering.ts"
import { snapshotBytes } from "./SnapshotBody.ts"
import { closeAtDeadlines, SnapshotDeadlines, streamedResponseOf } from "./SnapshotDeadlines.ts"
import { WatchesHandlers } from "./WatchesHandlers.ts"

/** The caller the key middleware resolved for this request. */
const withCaller = <A, E, R>(
  use: (current: CurrentCaller["Service"]) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | CurrentCaller> => CurrentCaller.use(use)

/** The request header that carries a write's idempotency key, and the answer header that marks a replay. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed"

const markReplayed = HttpEffect.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, IDEMPOTENT_REPLAYED_HEADER.toLowerCase(), "true"))
)

/**
 * A write, run under the request's `Idempotency-Key` when it carries one (a malformed key is
 * refused naming the header), else as `plain`. A replayed answer, success or refusal, is marked
 * `Idempotent-Replayed: true`.
 */
const writeOnce = <W extends Idempotency.Write, E>(
  directory: Directory.Directory["Service"],
  caller: Directory.KeyCaller,
  request: HttpServerRequest.HttpServerRequest,
  write: W,
  plain: Effect.Effect<Idempotency.WriteValue<W>, E>
) =>
  Effect.gen(function*() {
    const sent = request.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()]
    if (sent === undefined) return yield* plain
    const key = yield* Effect.fromResult(Idempotency.decodeKey(IDEMPOTENCY_KEY_HEADER, sent))
    const answer = yield* directory.idempotent(caller, key, write)
    if (answer.replayed) yield* markReplayed
    return yield* Effect.fromResult(answer.result)
  })

const AccountHandlers = HttpApiBuilder.group(
  DropshelfApi,
  "account",
  Effect.fn(function*(handlers) {
    const directory = yield* Directory.Directory
    return handlers.handle("me", () =>
      withCaller(({ caller, rate }) => directory.me(caller, rate)))
  })
)

/**
 * A listing or a page, published by the core's renderer rather than encoded by the endpoint's
 * schema: the same JSON (test/ListingJson.test.ts in the core holds them together, and every
 * black-box response is validated against the OpenAPI document), without building a view per
 * row per request (docs/performance.md). The MCP tools send the same text (mcp/Tools.ts).
 */
const renderedJson = (bytes: Uint8Array) => HttpServerResponse.uint8Array(bytes, { contentType: "application/json" })

/**
 * `Link: <…>; rel="next"` (RFC 8288) to the next page: this request's path and query with the
 * new cursor, as a relative reference, which the client resolves against the URL it asked. An
 * absolute one would need the public origin, which the server cannot know behind a proxy.
 */
export const nextLink = (url: string, cursor: string): string => {
  const end = url.search(/[?#]/)
  const query = new URLSearchParams(end === -1 || url[end] === "#" ? "" : url.slice(end + 1).split("#", 1)[0])
  query.set("cursor", cursor)
  return `<${end === -1 ? url : url.slice(0, end)}?${query}>; rel="next"`
}

/** Whether `Accept-Encoding` accepts gzip: named with a q above 0, or `*` (RFC 9110 section 12.5.3). */
export const acceptsGzip = (header: string | undefined): boolean => {
  if (header === undefined) return false
  let star = false
  for (const part of header.split(",")) {
    const [coding, ...params] = part.trim().toLowerCase().split(";")
    const q = params.map((param) => param.trim()).find((param) => param.startsWith("q="))
    const accepted = q === undefined || Number(q.slice(2)) > 0
    if (coding === "gzip" || coding === "x-gzip") return accepted
    if (coding === "*") star = accepted
  }
  return star
}

const DomainsHandlers = HttpApiBuilder.group(
  DropshelfApi,
  "domains",
  Effect.fn(function*(handlers) {
    const directory = yield* Directory.Directory
    const limiter = yield* RateLimiter.RateLimiter
    const snapshotDeadlines = yield* SnapshotDeadlines
    const { members } = yield* ListingRendering
    const runFork = Effect.runForkWith(yield* Effect.context<never>())

    /**
     * The account's hourly allowance of snapshots, counted only for a caller whose plan has them.
     * A HEAD reads no listing, so it only asks whether a GET would be allowed (`spend` false).
     */
    const startSnapshot = Effect.fnUntraced(function*(caller: Directory.KeyCaller, spend: boolean) {
      const items = yield* directory.snapshot(caller)
      const allowance = yield* (spend ? limiter.hit : limiter.peek)(`snapshot:${caller.accountId}`, Plan.SNAPSHOTS_PER_HOUR, Time.HOUR)
      if (!allowance.allowed) {
        const retryAfter = Math.max(1, Math.ceil((allowance.resetAt - (yield* Clock.currentTimeMillis)) / 1000))
        yield* HttpEffect.appendPreResponseHandler((_request, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(retryAfter)))
        )
        return yield* new Errors.SnapshotLimitReached({ limit: allowance.limit, retryAfter })
      }
      return items
    })

    return handlers.handleAll({
      list: ({ query, request }) =>
        withCaller(({ caller }) => {
          // A since run shows each listing once: nothing of it is worth keeping.
          const membersOf = query.since === undefined ? members : ListingJson.members
          return directory.list(caller, query).pipe(
            Effect.map((page) => {
              const response = renderedJson(ListingJson.pageJsonBytes(page, membersOf))
              return page.nextCursor === null ? response : HttpServerResponse.setHeader(response, "link", nextLink(request.url, page.nextCursor))
            }),
            refuseAs("read")
          )
        }),
      snapshot: ({ request }) =>
        withCaller(({ caller }) =>
          startSnapshot(caller, request.method !== "HEAD").pipe(
            Effect.map((items) => {
              const gzip = acceptsGzip(request.headers["accept-encoding"])
              const headers = gzip ? { "content-encoding": "gzip", vary: "Accept-Encoding" } : { vary: "Accept-Encoding" }
              // The GET's headers without its body: the stream (and the database's snapshot) is never started.
              if (request.method === "HEAD") return HttpServerResponse.stream(Stream.empty, { contentType: "application/x-ndjson", headers })
              const response = streamedResponseOf(request)
              if (response !== undefined) {
                closeAtDeadlines(response, snapshotDeadlines, (reason) =>
                  runFork(Effect.logWarning(`snapshot closed: ${reason}`).pipe(
                    Effect.annotateLogs({ key_prefix: caller.key.prefix })
                  )))
              }
              // The body's buffers are reused once what they are written into has let go of them.
              let compressor: Gzip | undefined
              const bytes = snapshotBytes(items, () => gzip ? compressor : response)
              // Fastest level: a snapshot is large, and the CPU is the server's; level 1 still shrinks it ~5x.
              const body = gzip
                ? NodeStream.pipeThroughSimple(bytes, () => (compressor = createGzip({ level: zlibConstants.Z_BEST_SPEED })))
                : bytes
              return HttpServerResponse.stream(body, { contentType: "application/x-ndjson", headers })
            }),
            refuseAs("read")
          )),
      get: ({ params }) =>
        withCaller(({ caller }) =>
          directory.get(caller, params.id).pipe(
            Effect.map((row) => renderedJson(ListingJson.utf8Of([ListingJson.rowJson(row, members)]))),
            refuseAs("read")
          )),
      reveal: ({ params, request }) =>
        withCaller(({ caller }) =>
          writeOnce(directory, caller, request, { _tag: "Reveal", listingId: params.id }, directory.reveal(caller, params.id)).pipe(
            refuseAs("reveal")
          )),
      hold: ({ params, request }) =>
        withCaller(({ caller }) =>
          writeOnce(directory, caller, request, { _tag: "Hold", listingId: params.id }, directory.hold(caller, params.id)).pipe(
            refuseAs("hold")
          ))
    })
  })
)

const HoldsHandlers = HttpApiBuilder.group(
  DropshelfApi,
  "holds",
  Effect.fn(function*(handlers) {
    const directory = yield* Directory.Directory
    return handlers.handleAll({
      list: () => withCaller(({ caller }) => directory.holds(caller)),
      extend: ({ params, request }) =>
        withCaller(({ caller }) =>
          writeOnce(directory, caller, request, { _tag: "Extend", holdId: params.id }, directory.extend(caller, params.id)).pipe(
            refuseAs("hold")
          )),
      end: ({ params, payload, request }) =>
        withCaller(({ caller }) => {
          // No body, null, {} and {"outcome": "released"} mean the same end, so they are one request for a key.
          const outcome = payload?.outcome ?? "released"
          return writeOnce(directory, caller, request, { _tag: "End", holdId: params.id, outcome }, directory.end(caller, params.id, outcome)).pipe(
            refuseAs("hold")
          )
        })
    })
  })
)

let document: Record<string, unknown> | undefined
/** The served description, generated once from the same definition the routes come from. */
export const openApiDocument = (): Record<string, unknown> => (document ??= OpenApi.fromApi(DropshelfApi) as unknown as Record<string, unknown>)

const MetaHandlers = HttpApiBuilder.group(
  DropshelfApi,
  "meta",
  Effect.fn(function*(handlers) {
    return handlers.handle("openapi", () => Effect.sync(openApiDocument))
  })
)

const INDEX: ServiceIndex = {
  name: "dropshelf",
  version: API_VERSION,
  links: {
    docs: { href: "/docs", title: "The interactive API reference; no key needed" },
    openapi: { href: `${API_PREFIX}/openapi.json`, title: "The OpenAPI 3.1 document; send Authorization: Bearer <API_KEY>" },
    health: { href: "/healthz", title: "Liveness; no key needed" }
  }
}

const IndexHandlers = HttpApiBuilder.group(
  DropshelfApi,
  "index",
  Effect.fn(function*(handlers) {
    const lifecycle = yield* Health.Lifecycle
    const readiness = Health.makeReadiness(lifecycle, yield* Health.Dependencies, yield* Health.ReplicaStates)
    return handlers
      .handle("index", () => Effect.succeed(INDEX))
      .handle("healthz", () => Effect.succeed({ status: "ok" } as const))
      .handle("readyz", () => readiness)
  })
)

/** Every handler group and the key middleware; needs `Directory`, `Watches` and `RateLimiter`. */
export const HandlersLive = Layer.mergeAll(AccountHandlers, DomainsHandlers, HoldsHandlers, WatchesHandlers, MetaHandlers, IndexHandlers).pipe(
  Layer.provideMerge(ApiKeyAuthLive)
)
