import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { checksums, type Migration, problems } from "../../../scripts/MigrationCheck.ts"

/*
 * The check `npm run check` makes of the migrations (scripts/check-migrations.ts): the
 * released ones as released, new ones numbered above them. Fed bad lists here, and the real
 * list and Migrations.ts once.
 */

const source = (body: string) => `
const statements = (...sql: ReadonlyArray<string>) => sql
const COLUMNS = "a, b"
// 0002: why it exists
const second = statements(\`CREATE INDEX x ON t (\${COLUMNS})\`)
export const migrations: Record<string, unknown> = {
  "0001_initial": statements(\`CREATE TABLE t (a int, b int)\`),
  "0002_index": second${body}
}
`

const released = checksums(source(""))

describe("released migrations", () => {
  it("the code as released passes, and so does a new migration numbered above the released ones", () => {
    expect(problems(released, released)).toEqual([])
    expect(problems(released, checksums(source(`,\n  "0003_more": statements(\`SELECT 1\`)`)))).toEqual([])
  })

  it("a comment or a layout change is no edit", () => {
    const relaid = source("").replace("// 0002: why it exists", "// 0002: why it exists, said better").replace(`"0002_index": second`, `"0002_index":    second`)
    expect(problems(released, checksums(relaid))).toEqual([])
  })

  it("a released migration edited, directly or through a constant it uses, fails", () => {
    const edited = checksums(source("").replace("CREATE TABLE t (a int, b int)", "CREATE TABLE t (a bigint, b int)"))
    expect(problems(released, edited)).toEqual([expect.stringMatching(/^0001_initial: released, and edited/)])
    const constant = checksums(source("").replace(`"a, b"`, `"a, b, c"`))
    expect(problems(released, constant)).toEqual([expect.stringMatching(/^0002_index: released, and edited/)])
  })

  it("a released migration removed, renamed or renumbered fails", () => {
    expect(problems(released, released.slice(0, 1))).toEqual([expect.stringMatching(/^0002_index: released, and no longer/)])
    const renumbered: Array<Migration> = [released[0]!, { ...released[1]!, id: "0003_index" }]
    expect(problems(released, renumbered)).toEqual([expect.stringMatching(/^0002_index: released, and no longer/)])
  })

  it("a new migration numbered at or below a released one fails, as does a number used twice", () => {
    const below = [...released, { id: "0002_other", sha256: "x" }]
    expect(problems(released, below)).toEqual([
      expect.stringMatching(/^0002_other: numbered 0002 like 0002_index/),
      expect.stringMatching(/^0002_other: numbered at or below the released 0002_index/)
    ])
    const twice = [...released, { id: "0005_one", sha256: "x" }, { id: "0005_two", sha256: "y" }]
    expect(problems(released, twice)).toEqual([expect.stringMatching(/^0005_two: numbered 0005 like 0005_one/)])
    expect(problems(released, [...released, { id: "15_badly_named", sha256: "x" }])).toEqual([expect.stringMatching(/^15_badly_named: /)])
  })

  it("Migrations.ts matches packages/store-sql/migrations.released.json", () => {
    const root = join(import.meta.dirname, "..")
    const list = JSON.parse(readFileSync(join(root, "migrations.released.json"), "utf8")) as ReadonlyArray<Migration>
    expect(problems(list, checksums(readFileSync(join(root, "src", "Migrations.ts"), "utf8")))).toEqual([])
    expect(list.length).toBeGreaterThan(0)
  })
})
