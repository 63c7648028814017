import { defineConfig } from "vitest/config"
import projects from "./vitest.workspace.ts"

export default defineConfig({
  test: {
    projects,
    // The progress reporter keeps a run without a terminal talking: which files still run, and
    // each skipped suite with what it needs (scripts/ProgressReporter.ts).
    reporters: ["default", "./scripts/ProgressReporter.ts"]
  }
})
