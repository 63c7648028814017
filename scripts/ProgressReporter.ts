import type { Reporter, TestCase, TestModule, TestSpecification, TestSuite } from "vitest/node"

/*
 * A reporter beside vitest's default one, for runs without a terminal (CI, a pipe): the default
 * reporter prints a file only when it ends, so a long file leaves the output silent for minutes.
 * This one says every 20 s which files are still running, and prints one line for each skipped
 * suite or test, whose name carries what it needs ("… (skipped: DATABASE_URL is not set)").
 */

const HEARTBEAT_MS = 20_000

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`

/**
 * The outermost skipped suites and tests of a module: a skipped suite whose name says why stands
 * for its children (a suite all of whose tests were skipped is skipped too, with no reason of its own).
 */
function* skippedIn(parent: TestModule | TestSuite): Generator<TestSuite | TestCase> {
  for (const child of parent.children) {
    if (child.type === "suite") {
      if (child.state() === "skipped" && /skipped/i.test(child.name)) yield child
      else yield* skippedIn(child)
    } else if (child.result().state === "skipped") {
      yield child
    }
  }
}

export default class ProgressReporter implements Reporter {
  private started = 0
  private total = 0
  private finished = 0
  private readonly running = new Map<string, number>()
  private timer: ReturnType<typeof setInterval> | undefined

  private write(line: string) {
    process.stdout.write(`${line}\n`)
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>) {
    this.started = Date.now()
    this.total = specifications.length
    this.timer = setInterval(() => this.heartbeat(), HEARTBEAT_MS)
    this.timer.unref()
  }

  onTestModuleStart(module: TestModule) {
    this.running.set(module.relativeModuleId, Date.now())
  }

  onTestModuleEnd(module: TestModule) {
    this.running.delete(module.relativeModuleId)
    this.finished++
    for (const skipped of skippedIn(module)) {
      this.write(`  skipped ${module.project.name} ${module.relativeModuleId} > ${skipped.fullName}`)
    }
  }

  onTestRunEnd() {
    if (this.timer !== undefined) clearInterval(this.timer)
  }

  private heartbeat() {
    const now = Date.now()
    const files = [...this.running].map(([file, since]) => `${file} (${seconds(now - since)})`).join(", ")
    this.write(`… ${seconds(now - this.started)}: ${this.finished} of ${this.total} files done; running ${files || "nothing"}`)
  }
}
