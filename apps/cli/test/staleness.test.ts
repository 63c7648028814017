import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { headCommit, type ReadText, staleWarning } from "../src/Staleness.ts"

/*
 * The bundle's start-up check (Staleness.ts) against real git checkouts: it finds the commit git
 * itself names, in every layout git writes, and reads nothing but a few small files under `.git`.
 */

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }
  }).trim()

/** A reader that records what it was asked for: the check's only way to the disk. */
const recording = () => {
  const paths: Array<string> = []
  const read: ReadText = (path) => {
    paths.push(path)
    try {
      return readFileSync(path, "utf8")
    } catch {
      return undefined
    }
  }
  return { paths, read }
}

const base = mkdtempSync(join(tmpdir(), "dropshelf-staleness-"))
const checkout = join(base, "checkout")
const worktree = join(base, "worktree")

beforeAll(() => {
  mkdirSync(join(checkout, "apps", "cli", "src"), { recursive: true })
  git(checkout, "init", "-q", "-b", "main")
  for (let i = 0; i < 3; i++) {
    writeFileSync(join(checkout, "apps", "cli", "src", "Cli.ts"), `export const version = ${i}\n`)
    git(checkout, "add", ".")
    git(checkout, "commit", "-q", "-m", `change ${i}`)
  }
  git(checkout, "worktree", "add", "-q", "-b", "side", worktree, "HEAD~1")
})
afterAll(() => rmSync(base, { recursive: true, force: true }))

/** Asserts the check read at most `most` files, each inside the checkout's git directories. */
const expectFewGitReads = (paths: ReadonlyArray<string>, most: number) => {
  expect(paths.length).toBeLessThanOrEqual(most)
  for (const path of paths) expect(relative(base, path)).toMatch(/^(checkout|worktree)\/\.git(\/|$)/)
}

describe("headCommit", () => {
  it("reads a checkout's branch from its loose ref", () => {
    const { paths, read } = recording()
    expect(headCommit(checkout, read)).toBe(git(checkout, "rev-parse", "HEAD"))
    expectFewGitReads(paths, 3)
  })

  it("reads a linked worktree's own HEAD, at another commit than the main checkout", () => {
    const { paths, read } = recording()
    const head = headCommit(worktree, read)
    expect(head).toBe(git(worktree, "rev-parse", "HEAD"))
    expect(head).not.toBe(git(checkout, "rev-parse", "HEAD"))
    // .git (a file in a worktree) is read, and the worktree's directory under the main .git.
    expect(paths.length).toBeLessThanOrEqual(5)
    for (const path of paths) expect(relative(base, path)).toMatch(/^(checkout\/\.git|worktree\/\.git)(\/|$)/)
  })

  it("finds a packed ref, and a detached HEAD", () => {
    const packed = join(base, "packed")
    git(base, "clone", "-q", checkout, packed)
    git(packed, "pack-refs", "--all")
    expect(headCommit(packed)).toBe(git(packed, "rev-parse", "HEAD"))
    git(packed, "checkout", "-q", "--detach", "HEAD~2")
    expect(headCommit(packed)).toBe(git(packed, "rev-parse", "HEAD"))
  })

  it("answers nothing outside a checkout", () => {
    const { paths, read } = recording()
    expect(headCommit(join(checkout, "apps"), read)).toBeUndefined()
    expect(paths.length).toBeLessThanOrEqual(2)
  })
})

describe("staleWarning", () => {
  it("is silent when the bundle was built at HEAD, even with every source touched since", () => {
    const head = git(checkout, "rev-parse", "HEAD")
    writeFileSync(join(checkout, "apps", "cli", "src", "Cli.ts"), "export const version = 'edited, not committed'\n")
    const { paths, read } = recording()
    expect(staleWarning(checkout, { root: "..", commit: head }, read)).toBeUndefined()
    expectFewGitReads(paths, 3)
  })

  it("names both commits when the checkout moved on after the build", () => {
    const built = git(checkout, "rev-parse", "HEAD~1")
    const head = git(checkout, "rev-parse", "HEAD")
    expect(staleWarning(checkout, { root: "..", commit: built })).toBe(
      `dropshelf: warning: this bundle was built at commit ${built.slice(0, 12)}, the checkout in ${checkout} is at ${head.slice(0, 12)}; run npm run build`
    )
  })

  it("is silent for a bundle built outside a checkout, or run outside one", () => {
    expect(staleWarning(checkout, { root: "..", commit: null })).toBeUndefined()
    expect(staleWarning(join(base, "nowhere"), { root: "..", commit: "0".repeat(40) })).toBeUndefined()
  })
})
