import { readFileSync } from "node:fs"
import { isAbsolute, join } from "node:path"

/*
 * A bundle (`npm run build`) does not follow the sources: after a `git pull` or a checkout,
 * `dist/dropshelf.js serve` keeps running the old code until someone rebuilds. The build records
 * the commit the checkout was at, and the bundle compares it with the checkout's HEAD at start:
 * a few small files under `.git`, never the sources. Edits not yet committed are invisible to it.
 */

/** What the build records in the bundle (as the constant `DROPSHELF_BUILD`, see scripts/build.ts). */
export interface BuildRecord {
  /** The repository root, relative to the folder of the bundle's entry file. */
  readonly root: string
  /** The commit HEAD named when the bundle was built; `null` when it was built outside a checkout. */
  readonly commit: string | null
}

/** Reads a small text file, or answers `undefined` when there is none to read. */
export type ReadText = (path: string) => string | undefined

const readText: ReadText = (path) => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return undefined
  }
}

const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/

/**
 * The commit the checkout at `root` is at, read from `.git` the way git lays it out (a linked
 * worktree's `.git` file, its `commondir`, loose or packed refs); `undefined` when `root` is not
 * a checkout or its HEAD cannot be read without git itself (an unborn branch, a reftable store).
 */
export const headCommit = (root: string, read: ReadText = readText): string | undefined => {
  let gitDir = join(root, ".git")
  let head = read(join(gitDir, "HEAD"))
  if (head === undefined) {
    // A linked worktree (`git worktree add`): `.git` is a file naming its own git directory.
    const link = /^gitdir: (.+)$/m.exec(read(gitDir) ?? "")?.[1]?.trim()
    if (link === undefined) return undefined
    gitDir = isAbsolute(link) ? link : join(root, link)
    head = read(join(gitDir, "HEAD"))
    if (head === undefined) return undefined
  }
  head = head.trim()
  if (COMMIT.test(head)) return head
  const ref = /^ref: (refs\/\S+)$/.exec(head)?.[1]
  if (ref === undefined) return undefined
  // Branches live in the repository's common directory, which a worktree's `commondir` names.
  const common = read(join(gitDir, "commondir"))?.trim()
  const commonDir = common === undefined ? gitDir : isAbsolute(common) ? common : join(gitDir, common)
  const loose = read(join(commonDir, ref))?.trim()
  if (loose !== undefined) return COMMIT.test(loose) ? loose : undefined
  for (const line of (read(join(commonDir, "packed-refs")) ?? "").split("\n")) {
    const [commit, name] = line.trim().split(" ")
    if (name === ref && commit !== undefined && COMMIT.test(commit)) return commit
  }
  return undefined
}

/** The warning for a bundle built at another commit than the one the checkout at `root` is at now, if it was. */
export const staleWarning = (root: string, record: BuildRecord, read: ReadText = readText): string | undefined => {
  if (record.commit === null) return undefined
  const head = headCommit(root, read)
  if (head === undefined || head === record.commit) return undefined
  return `dropshelf: warning: this bundle was built at commit ${record.commit.slice(0, 12)}, the checkout in ${root} is at ${head.slice(0, 12)}; run npm run build`
}
