import { Effect, Formatter, Layer, Logger, type LogLevel, References } from "effect"

/** A value JSON writes as it is, which Effect's replacer would return unchanged too. */
const isPlain = (value: unknown): boolean =>
  value === null || value === undefined || typeof value === "string" || typeof value === "boolean" ||
  (typeof value === "number" && Number.isFinite(value))

const plainValues = (record: Readonly<Record<string, unknown>>): boolean => {
  for (const key in record) if (!isPlain(record[key])) return false
  return true
}

/**
 * `Logger.formatJson`'s line, byte for byte. Its replacer looks up every key's descriptor for a
 * value to redact, a few microseconds a line, with nothing to do when every value is a string,
 * a finite number, a boolean or null, as in the request's line: those are written by
 * `JSON.stringify` alone, anything else by Effect's formatter. (`cause` is already text.)
 */
export const formatJson = Logger.map(Logger.formatStructured, (entry) =>
  (Array.isArray(entry.message) ? entry.message.every(isPlain) : isPlain(entry.message)) &&
    plainValues(entry.annotations) && plainValues(entry.spans)
    ? JSON.stringify(entry)
    : Formatter.formatJson(entry))

/**
 * The server's log: Effect's JSON log lines on stdout (one per request from the boundary, plus
 * whatever else is logged while serving), written in batches rather than one write each
 * (docs/decisions/0505-auth-and-request-costs.md). A process killed outright loses at most the
 * last window's lines; a normal shutdown flushes them.
 */
export const stdoutJson = Logger.batched(formatJson, {
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
