import { linkSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/*
 * One process at a time opens an embedded data directory: two PGlite instances writing one
 * directory would damage it. The lock is a file holding the owner's pid, created atomically
 * (written under a private name, then hard-linked into place, which fails if the lock exists),
 * so a reader never sees a half-written pid. A lock whose pid no longer runs is stale and is
 * taken over.
 */

export const LOCK_FILE = "dropshelf.lock"

/** Default embedded data directory, relative to the working directory. */
export const DEFAULT_DATA_DIR = "./.dropshelf"

export type Acquired = { readonly _tag: "Acquired"; readonly release: () => void }
export type Held = { readonly _tag: "Held"; readonly pid: number; readonly lockPath: string }

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readPid = (path: string): number | undefined => {
  try {
    const text = readFileSync(path, "utf8").trim()
    return /^\d+$/.test(text) ? Number(text) : undefined
  } catch {
    return undefined
  }
}

const tryLink = (from: string, to: string): boolean => {
  try {
    linkSync(from, to)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  }
}

const removeQuietly = (path: string) => {
  try {
    unlinkSync(path)
  } catch {
    // already gone
  }
}

/**
 * The live process holding the lock of `dir`, with the time it took the lock (ms since the
 * epoch); `undefined` when the lock is free or stale. Reads only: nothing is taken or moved.
 */
export const holder = (dir: string): { readonly pid: number; readonly since: number } | undefined => {
  const lockPath = join(dir, LOCK_FILE)
  const pid = readPid(lockPath)
  if (pid === undefined || !isAlive(pid)) return undefined
  try {
    return { pid, since: statSync(lockPath).mtimeMs }
  } catch {
    return undefined
  }
}

/** Takes the lock of `dir` (created if missing) for this process, or names the process holding it. */
export const acquire = (dir: string): Acquired | Held => {
  // The database in it holds the cursor secret and the OAuth signing keys: a directory made
  // here is its owner's alone. One that exists keeps the mode its owner gave it.
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const lockPath = join(dir, LOCK_FILE)
  const pid = process.pid
  const mine = join(dir, `${LOCK_FILE}.${pid}`)
  writeFileSync(mine, `${pid}\n`)
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (tryLink(mine, lockPath)) {
        return {
          _tag: "Acquired",
          release: () => {
            if (readPid(lockPath) === pid) removeQuietly(lockPath)
          }
        }
      }
      const holder = readPid(lockPath)
      if (holder !== undefined && holder !== pid && isAlive(holder)) return { _tag: "Held", pid: holder, lockPath }
      if (holder === pid) return { _tag: "Held", pid, lockPath }
      // Stale (dead pid) or unreadable: move it aside under a name only we use, then check
      // that what we moved is what we judged stale; a fresh lock moved by mistake goes back.
      const aside = join(dir, `${LOCK_FILE}.stale.${pid}`)
      try {
        renameSync(lockPath, aside)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue
        throw error
      }
      const moved = readPid(aside)
      if (moved !== holder && moved !== undefined && isAlive(moved)) {
        tryLink(aside, lockPath)
        removeQuietly(aside)
        return { _tag: "Held", pid: moved, lockPath }
      }
      removeQuietly(aside)
    }
    const holder = readPid(lockPath)
    return { _tag: "Held", pid: holder ?? 0, lockPath }
  } finally {
    removeQuietly(mine)
  }
}
