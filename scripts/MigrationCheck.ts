/**
 * Released migrations stay as they were released (scripts/check-migrations.ts, run by
 * `npm run check`). `packages/store-sql/migrations.released.json` lists every released
 * migration with a checksum of its code; a listed migration edited, removed or renamed (its
 * number changed included) fails the check, and so does a new one numbered at or below a
 * released one, which a database that applied the released ones would never run.
 */
import { createHash } from "node:crypto"
import ts from "typescript"

export interface Migration {
  /** `<4-digit number>_<name>`, the key in Migrations.ts. */
  readonly id: string
  /** sha256 (hex) of the migration's code, comments left out (`checksums`). */
  readonly sha256: string
}

const ID = /^(\d{4})_[a-z0-9_]+$/

const numberOf = (id: string): number | undefined => {
  const match = ID.exec(id)
  return match === null ? undefined : Number(match[1])
}

/** What is wrong with `current` (the migrations in the code) against `released`; empty when nothing is. */
export const problems = (released: ReadonlyArray<Migration>, current: ReadonlyArray<Migration>): Array<string> => {
  const found: Array<string> = []
  const byId = new Map(current.map((migration) => [migration.id, migration]))
  const seen = new Map<number, string>()
  for (const migration of current) {
    const number = numberOf(migration.id)
    if (number === undefined) {
      found.push(`${migration.id}: a migration is named <4-digit number>_<lower-case name>`)
      continue
    }
    const other = seen.get(number)
    if (other !== undefined) found.push(`${migration.id}: numbered ${String(number).padStart(4, "0")} like ${other}`)
    seen.set(number, migration.id)
  }
  let highest = 0
  let highestId = ""
  for (const migration of released) {
    const number = numberOf(migration.id) ?? 0
    if (number > highest) [highest, highestId] = [number, migration.id]
    const now = byId.get(migration.id)
    if (now === undefined) found.push(`${migration.id}: released, and no longer in Migrations.ts (removed, renamed or renumbered)`)
    else if (now.sha256 !== migration.sha256) found.push(`${migration.id}: released, and edited since; add a new migration instead`)
  }
  const releasedIds = new Set(released.map((migration) => migration.id))
  for (const migration of current) {
    const number = numberOf(migration.id)
    if (releasedIds.has(migration.id) || number === undefined) continue
    if (number <= highest) {
      found.push(`${migration.id}: numbered at or below the released ${highestId}; a database that applied it would never run this one`)
    }
  }
  return found
}

const printer = ts.createPrinter({ removeComments: true })

/**
 * Each migration of the `migrations` record in `source` (Migrations.ts) with the sha256 of its
 * code: its value's expression and every declaration of the file that expression uses,
 * directly or through another (helpers and constants included), printed without comments. What
 * it imports from other modules is not part of it.
 */
export const checksums = (source: string, fileName = "Migrations.ts"): Array<Migration> => {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const declarations = new Map<string, ts.Node>()
  let record: ts.ObjectLiteralExpression | undefined
  for (const statement of file.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (!ts.isIdentifier(declaration.name)) continue
        if (declaration.name.text === "migrations" && declaration.initializer !== undefined && ts.isObjectLiteralExpression(declaration.initializer)) {
          record = declaration.initializer
        } else {
          declarations.set(declaration.name.text, declaration)
        }
      }
    } else if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name !== undefined) {
      declarations.set(statement.name.text, statement)
    }
  }
  if (record === undefined) throw new Error(`${fileName}: no \`const migrations = { … }\` found`)

  /** The declarations `node` uses, transitively, in the order of the file. */
  const used = (node: ts.Node): Array<ts.Node> => {
    const found = new Set<ts.Node>()
    const visit = (current: ts.Node) => {
      if (ts.isIdentifier(current)) {
        const declaration = declarations.get(current.text)
        if (declaration !== undefined && !found.has(declaration)) {
          found.add(declaration)
          visit(declaration)
        }
      }
      ts.forEachChild(current, visit)
    }
    visit(node)
    return [...found].sort((a, b) => a.pos - b.pos)
  }

  return record.properties.map((property) => {
    if (!ts.isPropertyAssignment(property) || !(ts.isStringLiteral(property.name) || ts.isIdentifier(property.name))) {
      throw new Error(`${fileName}: every entry of \`migrations\` is "<id>": <migration>`)
    }
    const code = [property.initializer, ...used(property.initializer)]
      .map((node) => printer.printNode(ts.EmitHint.Unspecified, node, file))
      .join("\n")
    return { id: property.name.text, sha256: createHash("sha256").update(code).digest("hex") }
  })
}
