import { execFile } from "node:child_process"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { ensureMigratedPgliteTemplate, ensurePgliteTemplate } from "./PgliteTemplate.ts"

/*
 * vitest's globalSetup: what many test files would otherwise each make for themselves at once
 * on a clean clone, made once before the first file starts, one on each core.
 * - The empty PGlite database the tests copy, and the same migrated (scripts/PgliteTemplate.ts).
 * - The launcher's bundle of the CLI (apps/cli/bin/dropshelf.js builds it on first use into
 *   node_modules/.cache/dropshelf), which the suites that start `dropshelf` processes run.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")

/** A warm cache only: if the launcher fails here, the tests that run it say how. */
const launcherBundle = () =>
  promisify(execFile)(join(root, "node_modules", "node", "bin", "node"), [join(root, "apps", "cli", "bin", "dropshelf.js"), "--version"], { cwd: root })
    .catch(() => undefined)

export default async function setup() {
  await Promise.all([ensurePgliteTemplate().then(ensureMigratedPgliteTemplate), launcherBundle()])
}
