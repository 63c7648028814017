import { ImportLine, type ListingStore, Operators } from "@dropshelf/core"
import * as FirstLoad from "@dropshelf/store-sql/FirstLoad"
import { Clock, Effect, Fiber, Option, Result, Stream } from "effect"
import { createReadStream, type ReadStream } from "node:fs"
import { stat } from "node:fs/promises"
import { createInterface } from "node:readline"
import { UsageError } from "./Failure.ts"
import type { Progress } from "./Progress.ts"

/** Listings written per upsert: large enough to amortise a round trip, small enough to stay in memory. */
export const BATCH_SIZE = 2000

/**
 * A batch is also written once its lines reach this many characters, so that a batch of
 * unusually large listings still fits in one request line of the operator endpoint
 * (OperatorSocket.ts, `MAX_REQUEST_LINE_LENGTH`); 2 000 typical lines are a quarter of it.
 */
export const MAX_BATCH_LENGTH = 4 * 1024 * 1024

/** Upserts in flight at once (each on its own connection; PGlite runs them one after another). */
export const WRITERS = 2

export interface Rejection {
  readonly line: number
  readonly error: string
}

export interface ImportReport {
  readonly inserted: number
  readonly updated: number
  readonly rejected: ReadonlyArray<Rejection>
}

const randomIdBytes = (): Uint8Array => crypto.getRandomValues(new Uint8Array(8))

/**
 * Upserts lines in batches as they arrive (`BATCH_SIZE` lines, or fewer once they reach
 * `MAX_BATCH_LENGTH`); the whole input is never held in memory. A line that
 * does not decode is rejected with its number and reason and the others still load. Within one
 * batch an id appears at most once (a repeated id flushes the batch first), so the later line
 * wins, as it would line by line.
 */
export const upsertLines = Effect.fnUntraced(function*<A, E>(
  lines: Stream.Stream<A, E>,
  options: {
    /** The listing a line stands for, a reason to reject it, or `undefined` to skip it (a blank line). */
    readonly decode: (line: A) => Result.Result<ListingStore.ListingInput, string> | undefined
    readonly onBatch?: (linesRead: number) => void
    /** A line's length in characters, counted towards `MAX_BATCH_LENGTH`; none: only `BATCH_SIZE` bounds a batch. */
    readonly lengthOf?: (line: A) => number
    /** How a batch is written; none: the operators' upsert. */
    readonly write?: ((batch: ReadonlyArray<ListingStore.ListingInput>) => Effect.Effect<ListingStore.UpsertResult>) | undefined
  }
) {
  const operators = yield* Operators.Operators
  const upsert = options.write ?? operators.upsertListings
  const rejected: Array<Rejection> = []
  let inserted = 0
  let updated = 0
  let lineNumber = 0
  let batch: Array<ListingStore.ListingInput> = []
  let batchLength = 0
  let idsInBatch = new Set<string>()

  // Batches are written by WRITERS connections at once while the next is decoded: writing is
  // index upkeep inside one Postgres backend, decoding is this process; one at a time, each sat
  // idle half the time. A batch that repeats an id of a batch still being written waits for
  // it, so the later line still wins.
  const writing: Array<{ readonly fiber: Fiber.Fiber<void>; readonly ids: ReadonlySet<string> }> = []
  const waitFor = (count: number) =>
    Effect.forEach(writing.splice(0, count), ({ fiber }) => Fiber.join(fiber), { discard: true })

  const flush = Effect.suspend(() => {
    if (batch.length === 0) return Effect.void
    const pending = batch
    const ids = idsInBatch
    const linesRead = lineNumber
    batch = []
    batchLength = 0
    idsInBatch = new Set()
    let lastOverlapping = -1
    writing.forEach((earlier, index) => {
      for (const id of ids) {
        if (earlier.ids.has(id)) {
          lastOverlapping = index
          break
        }
      }
    })
    const write = Effect.map(upsert(pending), (result) => {
      inserted += result.inserted
      updated += result.updated
      options.onBatch?.(linesRead)
    })
    return waitFor(Math.max(lastOverlapping + 1, writing.length - WRITERS + 1)).pipe(
      Effect.andThen(Effect.forkChild(write)),
      Effect.map((fiber) => {
        writing.push({ fiber, ids })
      })
    )
  })

  yield* Stream.runForEach(lines, (line) => {
    lineNumber++
    const decoded = options.decode(line)
    if (decoded === undefined) return Effect.void
    if (Result.isFailure(decoded)) {
      rejected.push({ line: lineNumber, error: decoded.failure })
      return Effect.void
    }
    const input = decoded.success
    const before = idsInBatch.has(input.id) ? flush : Effect.void
    const length = options.lengthOf?.(line) ?? 0
    return Effect.andThen(before, () => {
      batch.push(input)
      batchLength += length
      idsInBatch.add(input.id)
      return batch.length >= BATCH_SIZE || batchLength >= MAX_BATCH_LENGTH ? flush : Effect.void
    })
  })
  yield* flush
  yield* waitFor(writing.length)
  return { inserted, updated, rejected } satisfies ImportReport
})

const parseJson = (text: string): Result.Result<unknown, string> => {
  try {
    return Result.succeed(JSON.parse(text))
  } catch (error) {
    return Result.fail(`not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
}

const openSource = Effect.fnUntraced(function*(source: string) {
  if (source === "-") return { input: process.stdin, size: undefined, file: undefined }
  const info = yield* Effect.tryPromise({
    try: () => stat(source),
    catch: (error) => new UsageError({ message: `cannot read ${source}: ${describeFsError(error)}` })
  })
  if (!info.isFile()) return yield* new UsageError({ message: `cannot read ${source}: not a file` })
  const file = createReadStream(source)
  return { input: file, size: info.size, file }
})

const describeFsError = (error: unknown): string => {
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : ""
  if (code === "ENOENT") return "no such file"
  if (code === "EACCES") return "permission denied"
  return error instanceof Error ? error.message : String(error)
}

/**
 * `dropshelf import <file|->`: NDJSON lines from a file, or from stdin for `-`. Into an empty
 * directory on server PostgreSQL the lines go through a first load (FirstLoad.ts): nothing is
 * readable until the indexes are built and every loaded line appears at once.
 */
export const importNdjson = (source: string, progress: Progress) =>
  Effect.scoped(Effect.gen(function*() {
    const firstLoad = yield* Effect.serviceOption(FirstLoad.FirstLoad)
    const session = Option.isSome(firstLoad) ? yield* firstLoad.value.begin : undefined
    const report = yield* importLines(source, progress, session?.upsert)
    // Nothing written (every line rejected, or none): the scope's end rolls the empty load back.
    if (session !== undefined && report.inserted > 0) {
      yield* session.finish((built, total) => progress.update(built, total, "indexes built"))
    }
    progress.finish()
    return report
  }))

const importLines = Effect.fnUntraced(function*(
  source: string,
  progress: Progress,
  write: ((batch: ReadonlyArray<ListingStore.ListingInput>) => Effect.Effect<ListingStore.UpsertResult>) | undefined
) {
  const now = yield* Clock.currentTimeMillis
  const { input, size, file } = yield* openSource(source)
  const reader = createInterface({ input, crlfDelay: Infinity })
  const lines = Stream.fromAsyncIterable(
    reader,
    (error) => new UsageError({ message: `cannot read ${source === "-" ? "standard input" : source}: ${describeFsError(error)}` })
  )
  const bytesRead = (stream: ReadStream | undefined) => stream?.bytesRead ?? 0
  const report = yield* upsertLines(lines, {
    decode: (raw) => {
      // A byte-order mark (files saved by some Windows editors) is not part of the first line.
      const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw
      if (text.trim() === "") return undefined
      const value = parseJson(text)
      return Result.isFailure(value) ? Result.fail(value.failure) : ImportLine.importLineToInput(value.success, now, randomIdBytes)
    },
    lengthOf: (raw) => raw.length,
    write,
    onBatch: (linesRead) => size !== undefined ? progress.update(bytesRead(file), size, "bytes") : progress.update(linesRead, undefined, "lines")
  }).pipe(Effect.ensuring(Effect.sync(() => {
    reader.close()
    file?.destroy()
  })))
  if (size !== undefined) progress.update(size, size, "bytes")
  return report
})
