import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/*
 * The read-replica tests pause the replica's replay and stop it (scripts/replica.sh), so the
 * test files that do are run one at a time however vitest spreads them: each holds this lock,
 * a directory (mkdir is atomic) naming its process, for as long as it uses the replica. A
 * holder that died without releasing it is taken over.
 */

const LOCK = join(tmpdir(), "dropshelf-replica-tests.lock")

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits until this process holds the replica (at most `waitMs`); the function given back lets it go. */
export const holdReplica = async (waitMs = 600_000): Promise<() => void> => {
  const deadline = Date.now() + waitMs
  while (true) {
    try {
      mkdirSync(LOCK)
      writeFileSync(join(LOCK, "pid"), String(process.pid))
      return () => rmSync(LOCK, { recursive: true, force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    let holder = 0
    try {
      holder = Number(readFileSync(join(LOCK, "pid"), "utf8"))
    } catch {
      // Taken a moment ago; its pid follows.
    }
    if (holder > 0 && holder !== process.pid && !alive(holder)) rmSync(LOCK, { recursive: true, force: true })
    if (Date.now() > deadline) throw new Error(`the replica is still held by process ${holder} (${LOCK})`)
    await new Promise((wake) => setTimeout(wake, 200))
  }
}
