import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"

/*
 * A bundle (`npm run build`) does not follow the sources: after a change or a `git pull`,
 * `node dist/dropshelf.js serve` keeps running the old code until someone rebuilds. The build
 * records when the newest source it saw was changed, and the bundle compares that with the
 * sources beside it at every start, warning on stderr when they are newer. Comparing change
 * times costs a stat per source file (~75 of them, 2-5 ms); a bundle deployed without
 * its sources skips the check.
 */

/** What the build records in the bundle (as the constant `DROPSHELF_BUILD`, see scripts/build.ts). */
export interface BuildRecord {
  /** The repository root, relative to the folder of the bundle's entry file. */
  readonly root: string
  /** The newest change time (ms) among the sources the bundle was built from. */
  readonly newestSourceMs: number
}

/** The folders a bundle is built from, relative to the repository root: every package's and app's `src`. */
const sourceFolders = (root: string): Array<string> =>
  ["apps", "packages"].flatMap((group) => {
    const groupPath = join(root, group)
    if (!existsSync(groupPath)) return []
    return readdirSync(groupPath).map((name) => join(groupPath, name, "src")).filter((path) => existsSync(path))
  })

/** The newest change time among the sources under `root`, or `undefined` when there are none. */
export const newestSourceMs = (root: string): number | undefined => {
  let newest: number | undefined
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile()) newest = Math.max(newest ?? 0, statSync(path).mtimeMs)
    }
  }
  for (const folder of sourceFolders(root)) walk(folder)
  return newest
}

/** The warning for a bundle built before the newest change to the sources beside it, if it was. */
export const staleWarning = (root: string, record: BuildRecord): string | undefined => {
  const newest = newestSourceMs(root)
  if (newest === undefined || newest <= record.newestSourceMs) return undefined
  return `dropshelf: warning: the sources in ${root} changed after this bundle was built; run npm run build`
}
