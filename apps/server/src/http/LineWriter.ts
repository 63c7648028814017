/**
 * Lines for an output written together once per turn of the event loop, not one write each.
 *
 * A busy server finishes tens of requests in one turn (all those one shared statement
 * answered), and a synchronous write to stdout per access-log line was ~4 % of a default page's
 * CPU (docs/performance.md). Each line is given without its newline, and lines keep their
 * order. What is buffered is written on the next turn (`setImmediate`), at once when it passes
 * `maxBufferedChars`, and at exit: a process that ends normally, by `process.exit` or an
 * uncaught error loses none. One killed outright (SIGKILL) loses at most the lines of its last
 * turn.
 */
export const batchedLines = (
  write: (text: string) => void,
  options: {
    /** Buffered text that is written at once, without waiting for the turn to end. */
    readonly maxBufferedChars?: number
    /** Called once, with the flush to run when the process exits. */
    readonly atExit?: (flush: () => void) => void
  } = {}
): (line: string) => void => {
  const maxBufferedChars = options.maxBufferedChars ?? 64 * 1024
  let pending: Array<string> = []
  let pendingChars = 0
  let scheduled = false
  let exitHooked = false

  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const text = pending.join("")
    pending = []
    pendingChars = 0
    write(text)
  }

  return (line) => {
    if (!exitHooked) {
      exitHooked = true
      options.atExit?.(flush)
    }
    pending.push(`${line}\n`)
    pendingChars += line.length + 1
    if (pendingChars >= maxBufferedChars) {
      flush()
    } else if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
}

/** The server's standard output, as batched lines. */
export const stdoutLines: (line: string) => void = batchedLines((text) => process.stdout.write(text), {
  atExit: (flush) => process.once("exit", flush)
})
