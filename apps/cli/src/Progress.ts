import { Effect } from "effect"

/**
 * A one-line progress bar on stderr, drawn only when stdout is a terminal (a person watching),
 * redrawn at most ten times a second. Silent otherwise, so scripts and tests see no noise.
 */
export interface Progress {
  /** `done` of `total` units (`total` undefined: unknown, only the count is shown). */
  readonly update: (done: number, total: number | undefined, unit: string) => void
  readonly finish: () => void
}

const silent: Progress = { update: () => {}, finish: () => {} }

const WIDTH = 30

const bar = (done: number, total: number | undefined, unit: string): string => {
  if (total === undefined || total <= 0) return `${done.toLocaleString("en-US")} ${unit}`
  const ratio = Math.min(1, done / total)
  const filled = Math.round(ratio * WIDTH)
  const percent = (ratio * 100).toFixed(0).padStart(3)
  return `[${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}] ${percent}% ${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")} ${unit}`
}

export const make = (label: string): Effect.Effect<Progress> =>
  Effect.sync(() => {
    if (process.stdout.isTTY !== true) return silent
    let last = 0
    let drawn = false
    return {
      update: (done, total, unit) => {
        const now = performance.now()
        if (drawn && now - last < 100 && !(total !== undefined && done >= total)) return
        last = now
        drawn = true
        process.stderr.write(`\r${label} ${bar(done, total, unit)}\u001b[K`)
      },
      finish: () => {
        if (drawn) process.stderr.write("\n")
      }
    }
  })
