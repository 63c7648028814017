import { Effect, Layer, Logger, type LogLevel, References } from "effect"

/**
 * The server's log: Effect's JSON log lines on stdout (one per request from the boundary, plus
 * whatever else is logged while serving), written in batches rather than one write each
 * (docs/decisions/0505-auth-and-request-costs.md). A process killed outright loses at most the
 * last window's lines; a normal shutdown flushes them.
 */
export const stdoutJson = Logger.batched(Logger.formatJson, {
  window: "10 millis",
  flush: (lines) =>
    Effect.sync(() => {
      process.stdout.write(`${lines.join("\n")}\n`)
    })
})

/**
 * The server's loggers, replacing the process's; `logger` instead of stdout (tests read what
 * would be written). Lines less severe than `level` (default `Info`) are not written.
 */
export const layer = (logger?: Logger.Logger<unknown, unknown>, level: LogLevel.LogLevel = "Info"): Layer.Layer<never> =>
  Layer.merge(Logger.layer([logger ?? stdoutJson]), Layer.succeed(References.MinimumLogLevel, level))
