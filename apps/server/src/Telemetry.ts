import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Config, ConfigProvider, Effect, Layer, Metric, Option, References, Schema, Tracer } from "effect"
import { FetchHttpClient, HttpRouter, HttpServer, HttpServerError, HttpServerResponse } from "effect/http"
import { OtlpExporter, OtlpMetrics, OtlpSerialization, OtlpTracer, PrometheusMetrics } from "effect/observability"
import { Statement } from "effect/sql"
import { createServer } from "node:http"
import { API_VERSION } from "@dropshelf/api/Api"

/*
 * What an operator sees of the running server besides its answers: the request metrics, the
 * OpenTelemetry export (traces, metrics and logs over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
 * is set) and the Prometheus text on a port of its own. Names and attributes follow the
 * OpenTelemetry semantic conventions (docs/decisions/0700-observability.md).
 */

/** OTel's recommended boundaries for `http.server.request.duration`, in seconds. */
const DURATION_BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

const requestDuration = (attributes: Metric.Metric.Attributes) =>
  Metric.histogram("http.server.request.duration", {
    description: "Duration of HTTP server requests, in seconds, by method, route template and status",
    boundaries: DURATION_BOUNDARIES,
    attributes: { ...attributes, unit: "s" }
  })

const requests = (attributes: Metric.Metric.Attributes) =>
  Metric.counter("http.server.requests", {
    description: "HTTP server requests answered, by method, route template and status",
    incremental: true,
    attributes
  })

const rateLimitRefusals = (attributes: Metric.Metric.Attributes) =>
  Metric.counter("dropshelf.rate_limit.refusals", {
    description: "Requests refused 429, by route template: over a key's per-minute limit, or from an address sending refused keys",
    incremental: true,
    attributes
  })

/** The counters, whose Prometheus names end in `_total` as the exposition format's convention asks. */
const COUNTERS = new Set(["http.server.requests", "dropshelf.rate_limit.refusals", "dropshelf.reveals", "dropshelf.holds"])

/**
 * The series of one route, method and status, kept so a request does not build its metric anew.
 * Each is a metric made with its attributes, not `Metric.withAttributes` of a shared one: that
 * merges the attributes and builds the series key again on every update.
 */
interface Series {
  readonly requests: Metric.Metric<number, unknown>
  readonly duration: Metric.Metric<number, unknown>
  readonly refusals: Metric.Metric<number, unknown> | undefined
}
const series = new Map<string, Series>()

const seriesOf = (method: string, route: string, status: number): Series => {
  const key = `${method} ${route} ${status}`
  let found = series.get(key)
  if (found === undefined) {
    const attributes = { "http.request.method": method, "http.route": route, "http.response.status_code": String(status) }
    found = {
      requests: requests(attributes),
      duration: requestDuration(attributes),
      refusals: status === 429 ? rateLimitRefusals({ "http.route": route }) : undefined
    }
    series.set(key, found)
  }
  return found
}

/** Records one answered request: its count, its duration, and a 429 as a refusal. */
export const recordRequest = (method: string, route: string, status: number, durationMs: number): Effect.Effect<void> => {
  const { duration, refusals, requests: count } = seriesOf(method, route, status)
  return Effect.contextWith((context) => {
    count.updateUnsafe(1, context)
    duration.updateUnsafe(durationMs / 1000, context)
    refusals?.updateUnsafe(1, context)
    return Effect.void
  })
}

/** Every metric as Prometheus text (exposition format 0.0.4), counters named `…_total`. */
export const prometheusText: Effect.Effect<string> = PrometheusMetrics.format({
  metricNameMapper: (name) => (COUNTERS.has(name) ? `${name}_total` : name)
})

/** `GET /metrics` and nothing else: the operator port's one route. */
const MetricsRoute = HttpRouter.add(
  "GET",
  "/metrics",
  Effect.map(prometheusText, (body) => HttpServerResponse.text(body, { contentType: "text/plain; version=0.0.4; charset=utf-8" }))
)

/**
 * The Prometheus endpoint on its own port, never the public one: what it tells (routes, volumes,
 * refusals) is for the operator. Listens on `host` like the API unless told otherwise.
 */
export const layerMetricsServer = (options: { readonly port: number; readonly host: string }): Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError> =>
  HttpRouter.serve(MetricsRoute, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: options.port, host: options.host, gracefulShutdownTimeout: "1 second" }))
  )

/**
 * OpenTelemetry export of traces and metrics over OTLP/HTTP, configured by the standard `OTEL_*` variables, when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or a per-signal endpoint) is set; without one, nothing is
 * installed and no span is recorded (Effect's tracer is off).
 * The body is JSON (`http/json`) unless `OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`.
 */
export const layerOtlpFromEnv: Layer.Layer<OtlpExporter.Flusher, Config.ConfigError> = Layer.unwrap(
  Effect.gen(function*() {
    const endpoint = yield* Config.option(Config.String("OTEL_EXPORTER_OTLP_ENDPOINT"))
    const tracesEndpoint = yield* Config.option(Config.String("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    const protocol = yield* Config.Literals(["http/json", "http/protobuf"], "OTEL_EXPORTER_OTLP_PROTOCOL").pipe(
      Config.withDefault("http/json" as const)
    )
    const set = (value: Option.Option<string>) => Option.isSome(value) && value.value.trim() !== ""
    // With nowhere to send them, spans would only be made and dropped, several a request.
    if (!set(endpoint) && !set(tracesEndpoint)) {
      return Layer.merge(OtlpExporter.layerFlusher, Layer.succeed(References.TracerEnabled, false))
    }
    if (set(endpoint)) yield* Config.schema(Schema.URLFromString, "OTEL_EXPORTER_OTLP_ENDPOINT")
    // OTEL_SERVICE_NAME, when set, names the service instead (the resource reads it).
    const serviceName = set(yield* Config.option(Config.String("OTEL_SERVICE_NAME"))) ? undefined : "dropshelf"
    const resource = { serviceName, serviceVersion: API_VERSION }
    // Logs stay JSON lines on stdout (one per request, with its trace id): no OTLP logger.
    const sampler = yield* samplerFromEnv
    return Layer.mergeAll(
      layerSampling(sampler).pipe(Layer.provideMerge(OtlpTracer.layerFromConfig({ resource }))),
      OtlpMetrics.layerFromConfig({ resource }),
      // Statement spans record how long each waited for a pooled connection (`db.client.connection.wait_time_ms`).
      Layer.succeed(Statement.SpanPropagationEnabled, true)
    ).pipe(
      Layer.provide(protocol === "http/protobuf" ? OtlpSerialization.layerProtobuf : OtlpSerialization.layerJson),
      Layer.provide(FetchHttpClient.layer),
      // The OTel specification's default exporter is `otlp`; Effect's reading of the variables
      // has none, so an endpoint alone would export nothing. `OTEL_TRACES_EXPORTER=none` still turns one off.
      Layer.provide(ConfigProvider.layerAdd(ConfigProvider.fromUnknown({ OTEL_TRACES_EXPORTER: "otlp", OTEL_METRICS_EXPORTER: "otlp" })))
    )
  })
)

/**
 * Whether `layerOtlpFromEnv` exports metrics, read as it and Effect's `OtlpMetrics` read the
 * variables: an endpoint is set (and one for metrics, or the common one), the SDK is not
 * disabled, and `OTEL_METRICS_EXPORTER` (default `otlp`) names `otlp`.
 */
export const otlpMetricsFromEnv: Config.Config<boolean> = Config.all({
  endpoint: Config.option(Config.String("OTEL_EXPORTER_OTLP_ENDPOINT")),
  tracesEndpoint: Config.option(Config.String("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
  metricsEndpoint: Config.option(Config.String("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")),
  disabled: Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  exporters: Config.String("OTEL_METRICS_EXPORTER").pipe(Config.withDefault("otlp"))
}).pipe(Config.map(({ disabled, endpoint, exporters, metricsEndpoint, tracesEndpoint }) => {
  const set = (value: Option.Option<string>) => Option.isSome(value) && value.value.trim() !== ""
  const installed = set(endpoint) || set(tracesEndpoint)
  const named = exporters.split(",").some((name) => name.trim().toLowerCase() === "otlp")
  return installed && !disabled && (set(metricsEndpoint) || set(endpoint)) && named
}))

/** `DROPSHELF_METRICS_PORT`: the operator port serving `GET /metrics`; unset (the default) serves none. */
export const metricsPortFromEnv: Config.Config<number | undefined> = Config.Port("DROPSHELF_METRICS_PORT").pipe(
  Config.option,
  Config.map(Option.getOrUndefined)
)

/** `DROPSHELF_LOG_LEVEL`: the least severe log line written; `info` (the default) writes one line per request, `warn` drops them. */
export const LOG_LEVELS = {
  trace: "Trace",
  debug: "Debug",
  info: "Info",
  warn: "Warn",
  error: "Error",
  fatal: "Fatal",
  none: "None"
} as const

export const logLevelFromEnv: Config.Config<(typeof LOG_LEVELS)[keyof typeof LOG_LEVELS]> = Config.Literals(
  Object.keys(LOG_LEVELS) as Array<keyof typeof LOG_LEVELS>,
  "DROPSHELF_LOG_LEVEL"
).pipe(Config.withDefault("info" as const), Config.map((name) => LOG_LEVELS[name]))

/**
 * The OTel specification's samplers (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`), which
 * Effect's tracer does not read: which traces are recorded and exported. A trace begun here is
 * kept with probability `ratio`; one continued from a caller's `traceparent` follows the
 * caller's sampled flag under the `parentbased_*` samplers (the default, keeping every trace).
 */
export interface Sampler {
  readonly parentBased: boolean
  readonly ratio: number
}

const SAMPLERS = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"] as const

export const samplerFromEnv: Config.Config<Sampler> = Config.all({
  name: Config.Literals(SAMPLERS, "OTEL_TRACES_SAMPLER").pipe(Config.withDefault("parentbased_always_on" as const)),
  arg: Config.schema(Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 })), "OTEL_TRACES_SAMPLER_ARG").pipe(Config.withDefault(1))
}).pipe(Config.map(({ arg, name }) => ({
  parentBased: name.startsWith("parentbased_"),
  ratio: name.endsWith("always_on") ? 1 : name.endsWith("always_off") ? 0 : arg
})))

/**
 * Whether a new span is recorded: a span under one of this process's follows it; under a
 * caller's, follows the caller's flag when parent-based; otherwise (a new trace) with
 * probability `ratio` (`random` in [0, 1)).
 */
export const sampledFor = (sampler: Sampler, parent: Option.Option<Tracer.AnySpan>, inherited: boolean, random: () => number): boolean => {
  if (Option.isSome(parent) && (parent.value._tag === "Span" || sampler.parentBased)) return inherited
  const own = sampler.ratio >= 1 || (sampler.ratio > 0 && random() < sampler.ratio)
  // A new trace is still subject to Effect's own threshold (`MinimumTraceLevel`); a caller's flag
  // is what a sampler that is not parent-based overrides.
  return Option.isNone(parent) ? inherited && own : own
}

/** The installed tracer, with `sampler`'s decision on every span it starts. */
const layerSampling = (sampler: Sampler): Layer.Layer<never> =>
  sampler.ratio >= 1 && sampler.parentBased
    ? Layer.empty
    : Layer.effect(
      Tracer.Tracer,
      Effect.map(Effect.service(Tracer.Tracer), (inner) =>
        Tracer.make({
          span: (options) => inner.span({ ...options, sampled: sampledFor(sampler, options.parent, options.sampled, Math.random) }),
          context: inner.context
        }))
    ) as unknown as Layer.Layer<never>
