/** CPU time of processes, read from /proc (Linux), for the benchmarks that report CPU per request or per row. */
import { readdirSync, readFileSync } from "node:fs"

/** utime + stime of a process, in clock ticks (100 per second here); 0 once it is gone. */
export const ticksOf = (pid: number | string): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0 // exited meanwhile
  }
}

/** Resolves once `pid` has used under a tenth of a core over a second, or after `limitMs`. */
export const untilQuiet = async (pid: number | string, limitMs = 60_000): Promise<void> => {
  const started = performance.now()
  let before = ticksOf(pid)
  while (performance.now() - started < limitMs) {
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const now = ticksOf(pid)
    if (now - before < 10) return
    before = now
  }
}

/**
 * Nanoseconds the main thread of a process (a Node server's event loop) has spent runnable but
 * waiting for a CPU, from /proc/<pid>/schedstat; 0 once it is gone.
 */
export const runQueueWaitOf = (pid: number | string): number => {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[1])
  } catch {
    return 0 // exited meanwhile
  }
}

/** The pids of the processes whose command is `command` (as /proc/<pid>/comm names it). */
export const pidsOf = (command: string): Array<string> =>
  readdirSync("/proc").filter((name) => {
    if (!/^\d+$/.test(name)) return false
    try {
      return readFileSync(`/proc/${name}/comm`, "utf8").trim() === command
    } catch {
      return false // gone
    }
  })

/** The pids of every PostgreSQL process: the postmaster, its helpers and the backends. */
export const postgresPids = (): Array<string> => pidsOf("postgres")

/** The pids of the PostgreSQL backends serving `database` (their process title names it). */
export const backendPidsOf = (database: string): Array<string> =>
  postgresPids().filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(` ${database} `)
    } catch {
      return false // gone
    }
  })
