import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"
import SlowFirstSequencer from "./scripts/SlowFirstSequencer.ts"
import projects from "./vitest.workspace.ts"

export default defineConfig({
  test: {
    projects,
    // Most suites wait on what they start (CLI processes, servers, Postgres) rather than compute,
    // so one file per core leaves the machine half idle: run one more file than there are cores.
    maxWorkers: availableParallelism() + 1,
    // A child process per worker, not worker threads: V8 keeps one registry of JIT code pages per
    // process, and PGlite's WebAssembly compiled in several threads at once can abort the whole
    // run with "Check failed: jit_page.has_value()" (docs/performance.md, The test suite).
    pool: "forks",
    // The files that start processes first, so the run does not end on one of them alone.
    sequence: { sequencer: SlowFirstSequencer },
    // What many files would each make at once on a clean clone, made once first: the PGlite
    // databases they copy, empty and migrated (scripts/testSetup.ts).
    globalSetup: ["./scripts/testSetup.ts"],
    // The progress reporter keeps a run without a terminal talking: which files still run, and
    // each skipped suite with what it needs (scripts/ProgressReporter.ts).
    reporters: ["default", "./scripts/ProgressReporter.ts"]
  }
})
