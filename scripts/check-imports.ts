/**
 * tsc accepts a relative import ending in .js for a file x.ts; Node's type stripping does not. This check
 * fails on any relative import that does not name a `.ts` file that exists.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, resolve } from "node:path"

const roots = ["packages", "apps", "bench", "scripts", "docs/examples"]
const skip = new Set(["node_modules", ".dropshelf", "dist"])
const importPattern = /(?:from\s+|import\s*\(\s*|import\s+)["'](\.{1,2}\/[^"']+)["']/g

const files: Array<string> = []
const walk = (dir: string): void => {
  for (const entry of readdirSync(dir)) {
    if (skip.has(entry)) continue
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) walk(path)
    else if (/\.(ts|mts)$/.test(entry) && !entry.endsWith(".d.ts")) files.push(path)
  }
}
for (const root of roots) if (existsSync(root)) walk(root)

const problems: Array<string> = []
for (const file of files) {
  const text = readFileSync(file, "utf8")
  for (const match of text.matchAll(importPattern)) {
    const specifier = match[1]!
    const target = resolve(dirname(file), specifier)
    if (!/\.(ts|mts|json)$/.test(specifier)) problems.push(`${file}: import "${specifier}" must name a .ts file`)
    else if (!existsSync(target)) problems.push(`${file}: import "${specifier}" names no file`)
  }
}
if (problems.length > 0) {
  console.error(problems.join("\n"))
  process.exit(1)
}
console.log(`check-imports: ${files.length} files, every relative import names an existing .ts file`)
