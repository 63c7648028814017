import { readFileSync, statSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/*
 * Which test files start first. With durations from an earlier run vitest's own order (longest
 * first) stands. Without them (a clean clone, CI) vitest starts the largest files first, but our
 * longest files are small: the operator contract runs from a 4-line file through operatorSuite.ts.
 * Here a file weighs its own size plus that of the test helpers it imports from its folder, so
 * the suites that spawn processes start first and the last minutes run short files side by side.
 */

const localImport = /from\s+"(\.\/[^"]+\.ts)"/g

const weightOf = (file: string): number => {
  try {
    const text = readFileSync(file, "utf8")
    let weight = text.length
    for (const [, path] of text.matchAll(localImport)) weight += statSync(resolve(dirname(file), path!)).size
    return weight
  } catch {
    return 0
  }
}

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const cache = this.ctx.cache
    if (files.every((spec) => cache.getTestSpecificationResult(spec) !== undefined)) return super.sort(files)
    const weights = new Map(files.map((spec) => [spec, weightOf(spec.moduleId)]))
    return [...files].sort((a, b) => weights.get(b)! - weights.get(a)!)
  }
}
