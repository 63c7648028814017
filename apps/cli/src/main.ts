import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Console, Effect, Exit, Layer, Logger } from "effect"
import { CliOutput } from "effect/cli"
import { run } from "./Cli.ts"
import { ExitCode, reportCause, stopsOnSignal } from "./Failure.ts"

/*
 * The process around the command tree: stdout carries only results, every failure becomes one
 * line on stderr and an exit code, SIGINT/SIGTERM interrupt the command (serve shuts down
 * gracefully and exits 0).
 */

/** Help and version go to stdout as usual; an invalid invocation is reported by `reportCause` as one line. */
const presenter = CliOutput.layerPresenter({
  present: (event) => event._tag === "InvalidInvocation" ? Effect.void : CliOutput.defaultPresenter.present(event)
})

const logsToStderr = Layer.succeed(Logger.LogToStderr, true)

const program = run.pipe(
  Effect.provide(Layer.mergeAll(NodeServices.layer, presenter, logsToStderr)),
  Effect.catchCause((cause) => {
    const report = reportCause(cause)
    if (report === undefined) return Effect.failCause(cause)
    process.exitCode = report.code
    return Console.error(`dropshelf: ${report.line}`)
  })
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) {
      // A server stopped by a signal has done its job; any other command stopped half-way has not.
      onExit(stopsOnSignal.gracefully ? ExitCode.ok : ExitCode.interrupted)
    }
    else onExit(typeof process.exitCode === "number" ? process.exitCode : ExitCode.ok)
  }
})
