import { Context, Effect, Layer, Option, Stream } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { Api } from "@dropshelf/api"
import type { ListQuery } from "@dropshelf/core"
import * as Idempotency from "./Idempotency.ts"
import * as RetryPolicy from "./RetryPolicy.ts"

/*
 * The typed client for Effect programs: Effect's `HttpApiClient` derived from the contract, so
 * every call takes and returns the contract's own types and fails with its error classes. Under
 * it, the HTTP client retries (RetryPolicy) and ends attempts that get no answer in time; the
 * key middleware adds the Bearer key, and an `Idempotency-Key` to every write.
 */

export interface Options {
  /** The service origin, such as `https://dropshelf.example` (the paths add `/api/v1`). */
  readonly baseUrl: string | URL
  /** The API key, sent as `Authorization: Bearer <key>`. */
  readonly apiKey: string
  /** How requests are retried; `false` sends each once. */
  readonly retry?: RetryPolicy.Options | false | undefined
  /**
   * How long one attempt waits for its whole answer, body included, before it counts as a
   * network failure. For a snapshot's stream it is an idle bound: the stream fails once no
   * byte has come for this long. Default 30 s.
   */
  readonly timeoutMs?: number | undefined
  /**
   * The total bound of a streamed answer (the bulk snapshot), from the request to its last
   * byte: past it the stream fails even while bytes still come. Default 1 hour, twice the
   * server's default cut-off of a snapshot, so that a server ends one first.
   */
  readonly streamTimeoutMs?: number | undefined
}

export const DEFAULT_TIMEOUT_MS = 30_000

export const DEFAULT_STREAM_TIMEOUT_MS = 3_600_000

/** The client: `client.domains.list({ query })`, `client.domains.reveal({ params: { id } })`, ... */
export type Client = HttpApiClient.ForApi<typeof Api.DropshelfApi>

/** The Bearer key on every `/api/v1` call; on a write, the call's idempotency key, made once per call. */
export const keyMiddleware = (apiKey: string) =>
  HttpApiMiddleware.layerClient(Api.ApiKeyAuth, ({ endpoint, next, request }) =>
    Effect.gen(function*() {
      const authorized = HttpClientRequest.bearerToken(request, apiKey)
      if (!Idempotency.isWrite(endpoint.method)) return yield* next(authorized)
      const key = (yield* Idempotency.IdempotencyKey) ?? Idempotency.newKey()
      return yield* next(HttpClientRequest.setHeader(authorized, Idempotency.HEADER, key))
    }))

/** Retries and time-outs around the platform's HTTP client, in that order: each attempt has its own time-out. */
export const transformHttpClient = (options: Pick<Options, "retry" | "timeoutMs" | "streamTimeoutMs">) => (client: HttpClient.HttpClient) => {
  const timed = client.pipe(RetryPolicy.withTimeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, options.streamTimeoutMs ?? DEFAULT_STREAM_TIMEOUT_MS))
  return options.retry === false ? timed : timed.pipe(RetryPolicy.withRetries(options.retry))
}

/** Builds the client over the `HttpClient` in context. */
export const make = (options: Options): Effect.Effect<Client, never, HttpClient.HttpClient> =>
  HttpApiClient.make(Api.DropshelfApi, {
    baseUrl: options.baseUrl,
    transformClient: transformHttpClient(options)
  }).pipe(Effect.provide(keyMiddleware(options.apiKey)))

export class DropshelfClient extends Context.Service<DropshelfClient, Client>()("@dropshelf/client/DropshelfClient") {
  /** Over the `HttpClient` the program provides. */
  static readonly layer = (options: Options): Layer.Layer<DropshelfClient, never, HttpClient.HttpClient> =>
    Layer.effect(DropshelfClient, make(options))

  /** Over the platform's `fetch`. */
  static readonly layerFetch = (options: Options): Layer.Layer<DropshelfClient> =>
    DropshelfClient.layer(options).pipe(Layer.provide(FetchHttpClient.layer))
}

/**
 * Every page of `query`, following `next_cursor` until it is null, with the query's filters and
 * ordering fixed for the run (as the API requires).
 */
export const pages = (client: Client, query: ListQuery.ListQuery) =>
  Stream.paginate(query.cursor, (cursor: string | undefined) =>
    client.domains.list({ query: { ...query, cursor } }).pipe(
      Effect.map((page) => [[page], Option.fromNullishOr(page.next_cursor)] as const)
    ))
