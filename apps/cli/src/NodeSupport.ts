/*
 * The bundle (`npm run build`) is run by whatever `node` starts it. Under a Node older than
 * package.json's `engines.node` it would run without the flags the server is measured with and
 * on a runtime nobody tests, so it stops with one line naming the command that works. (The
 * launcher of the sources, bin/dropshelf.js, re-runs itself on the pinned Node 24 instead.)
 */

/** The lowest version an `engines.node` range of the form `>=X[.Y[.Z]]` admits, or undefined. */
export const minimumOf = (range: string): readonly [number, number, number] | undefined => {
  const match = /^\s*>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/.exec(range)
  return match === null ? undefined : [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)]
}

const versionOf = (version: string): readonly [number, number, number] => {
  const [major = 0, minor = 0, patch = 0] = version.replace(/^v/, "").split(".").map((part) => Number.parseInt(part, 10))
  return [major, minor, patch]
}

/** Whether `version` (`process.versions.node`) is at least `minimum`. */
export const satisfies = (version: string, minimum: readonly [number, number, number]): boolean => {
  const running = versionOf(version)
  for (let i = 0; i < 3; i++) {
    if (running[i]! !== minimum[i]!) return running[i]! > minimum[i]!
  }
  return true
}

/** A word for a POSIX shell: as it is when it needs no quoting, else in single quotes. */
const shellWord = (word: string) => /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`

export interface Invocation {
  /** `engines.node` of the repository, as built into the bundle. */
  readonly engines: string
  /** `process.versions.node`. */
  readonly running: string
  /** The bundle's path and the arguments it was given. */
  readonly bundle: string
  readonly args: ReadonlyArray<string>
  /** The directory of the repo's pinned Node 24 (`node_modules/node/bin`), when it is installed. */
  readonly pinnedNodeDir: string | undefined
}

/** The one line a bundle started on an unsupported Node prints before it exits, or undefined when the Node is fine. */
export const refusal = (invocation: Invocation): string | undefined => {
  const minimum = minimumOf(invocation.engines)
  if (minimum === undefined || satisfies(invocation.running, minimum)) return undefined
  const command = [invocation.bundle, ...invocation.args].map(shellWord).join(" ")
  const works = invocation.pinnedNodeDir === undefined
    ? `put a Node ${invocation.engines} first on PATH and run ${command}`
    : `run PATH=${shellWord(invocation.pinnedNodeDir)}:$PATH ${command}`
  return `dropshelf: this bundle needs Node ${invocation.engines} and this is Node ${invocation.running}; ${works}`
}
