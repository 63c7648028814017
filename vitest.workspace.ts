import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"

/**
 * One test project per workspace package: every `packages/<name>` and `apps/<name>` with a
 * `test/` folder. vitest 5 reads no workspace file by itself; vitest.config.ts passes this list on.
 */
const projectsIn = (folder: string) =>
  existsSync(folder)
    ? readdirSync(folder)
      .filter((name) => existsSync(join(folder, name, "test")))
      .map((name) => ({
        test: {
          name: `${folder}/${name}`,
          root: join(folder, name),
          include: ["test/**/*.test.ts"],
          // Generous: the CLI and server suites start real processes, slow on a loaded two-core machine.
          testTimeout: 180_000,
          hookTimeout: 120_000
        }
      }))
    : []

export default [...projectsIn("packages"), ...projectsIn("apps")]
