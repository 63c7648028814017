/**
 * `npm run check`: no released migration edited, removed or renumbered, and every new one
 * numbered above the released ones (MigrationCheck.ts). `--release` adds the migrations not
 * yet listed to the released list: run it in the commit that releases a version.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { checksums, type Migration, problems } from "./MigrationCheck.ts"

const root = join(import.meta.dirname, "..")
const sourcePath = join(root, "packages", "store-sql", "src", "Migrations.ts")
const listPath = join(root, "packages", "store-sql", "migrations.released.json")

const current = checksums(readFileSync(sourcePath, "utf8"), sourcePath)
const released = JSON.parse(readFileSync(listPath, "utf8")) as ReadonlyArray<Migration>
const found = problems(released, current)

if (found.length > 0) {
  for (const problem of found) console.error(`migrations: ${problem}`)
  console.error(`migrations: released migrations are listed in ${listPath}; see docs/operations.md, Migrations`)
  process.exit(1)
}

if (process.argv.includes("--release")) {
  const listed = new Set(released.map((migration) => migration.id))
  const added = current.filter((migration) => !listed.has(migration.id))
  writeFileSync(listPath, JSON.stringify([...released, ...added], null, 2) + "\n")
  console.log(added.length === 0 ? "migrations: nothing new to release" : `migrations: released ${added.map((migration) => migration.id).join(", ")}`)
}
