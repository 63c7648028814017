/*
 * The commands that serve (`serve`, and `demo`, which `npm start` runs) cap V8's young
 * generation. V8 sizes it from the machine's memory: on this 24 GB machine its semi-spaces grow
 * to 64 MB each under load, and a server that has served a list load holds ~128 MB of young
 * generation from then on (`v8.getHeapSpaceStatistics()`), most of its ~265 MB RSS. With 16 MB
 * semi-spaces (V8's default before it scaled them with memory) the same load leaves ~177 MB and
 * a million-row since pull after it peaks at ~184 MB instead of ~267; CPU per request did not
 * move (docs/decisions/0506-memory.md).
 *
 * The size is fixed when V8 starts, so it can only be given on node's command line:
 * `v8.setFlagsFromString` at run time changes nothing (measured). A serving command started
 * without it replaces itself (`process.execve`: same pid, same stdio, nothing opened yet) with
 * the same command line plus the flag. An operator's own `--max-semi-space-size`, on the command
 * line or in NODE_OPTIONS, is left as it is; where `process.execve` does not exist (Windows) the
 * command runs with V8's default.
 */

/** The semi-space size serving commands get, in MB (`--max-semi-space-size`). */
export const SERVING_SEMI_SPACE_MB = 16

/** The CLI's commands (Cli.ts's root; a test keeps the two in step), to find which one argv names. */
export const COMMANDS: ReadonlyArray<string> = ["migrate", "serve", "import", "delist", "accounts", "keys", "masks", "seed", "demo"]

const SERVING = new Set(["serve", "demo"])

/** V8 takes its flags with dashes or underscores. */
const setsSemiSpace = (arg: string) => /^--max[-_]semi[-_]space[-_]size(=|$)/.test(arg)

/**
 * The command line a serving command should be restarted with, or `undefined` when it runs as
 * it is: not a serving command, or the semi-space size already given. `argv` and `execArgv` are
 * `process.argv` and `process.execArgv`; the result is `argv` with the flag added after node's
 * own options, for `process.execve(argv[0], result)`.
 */
export const restartArguments = (current: {
  readonly argv: ReadonlyArray<string>
  readonly execArgv: ReadonlyArray<string>
  readonly nodeOptions: string | undefined
}): ReadonlyArray<string> | undefined => {
  const [node, script, ...args] = current.argv
  if (node === undefined || script === undefined) return undefined
  const command = args.find((arg) => COMMANDS.includes(arg))
  if (command === undefined || !SERVING.has(command)) return undefined
  const given = [...current.execArgv, ...(current.nodeOptions ?? "").split(/\s+/)]
  if (given.some(setsSemiSpace)) return undefined
  return [node, ...current.execArgv, `--max-semi-space-size=${SERVING_SEMI_SPACE_MB}`, script, ...args]
}

/** Restarts this process with the young generation capped when `restartArguments` says so; otherwise returns. */
export const capYoungGenerationOfServer = (): void => {
  if (typeof process.execve !== "function") return
  const args = restartArguments({ argv: process.argv, execArgv: process.execArgv, nodeOptions: process.env.NODE_OPTIONS })
  if (args === undefined) return
  process.execve(process.execPath, args, process.env)
}
