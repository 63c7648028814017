/**
 * The served OpenAPI document works with the tools callers use on it: `openapi-typescript`
 * generates types from it that a small `openapi-fetch` program compiles against under
 * `tsc --strict` and then calls the running server with; and Spectral's `spectral:oas` ruleset
 * finds no error in it, and no warning but those docs/decisions/0602-openapi-tools.md accepts;
 * and Redocly's `recommended` rules (as `redocly.yaml` at the root configures them) find nothing.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import openapiTS, { astToString } from "openapi-typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { account, addListings, call, listing, memoryAdapter, type Running, start } from "./harness.ts"

const run = promisify(execFile)
const root = fileURLToPath(new URL("../../../", import.meta.url))

/**
 * Every `minimum`/`maximum` (exclusive ones included) anywhere in a document whose size is that of
 * `Number.MAX_SAFE_INTEGER` or beyond: a bound no field of this API has, which the reference page
 * would print as an example.
 */
const unsafeBounds = (node: unknown, path = "#"): Array<string> => {
  if (Array.isArray(node)) return node.flatMap((item, index) => unsafeBounds(item, `${path}/${index}`))
  if (typeof node !== "object" || node === null) return []
  return Object.entries(node).flatMap(([key, value]) =>
    /^(exclusiveM|m)(in|ax)imum$/.test(key) && typeof value === "number" && Math.abs(value) >= 2 ** 31 - 1
      ? [`${path}/${key}: ${value}`]
      : unsafeBounds(value, `${path}/${key}`)
  )
}

/** The warnings of `spectral:oas` the document keeps, each for the reason in decision 0602. */
const ACCEPTED_WARNINGS = new Set(["info-contact"])

/**
 * A caller's program: typed by the generated `paths`, it lists, reads, reveals and meets a
 * refusal. (Its import of the generated file is spliced in, so scripts/check-imports.ts does
 * not read it as an import of this test's.)
 */
const PROGRAM = `import createClient from "openapi-fetch"
import type { components, paths } from ${JSON.stringify("./schema.ts")}

const [baseUrl, key, id] = process.argv.slice(2) as [string, string, string]
const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } })

const page = await client.GET("/api/v1/domains", { params: { query: { tld: "com", limit: 2 } } })
if (page.data === undefined) throw new Error(\`list answered \${page.response.status}\`)
const ids: Array<string> = page.data.data.map((row) => row.id)
const hasMore: boolean = page.data.has_more

const one = await client.GET("/api/v1/domains/{id}", { params: { path: { id } } })
if (one.data === undefined) throw new Error(\`get answered \${one.response.status}\`)
const listing: components["schemas"]["Listing"] = one.data

const revealed = await client.POST("/api/v1/domains/{id}/reveal", { params: { path: { id } } })
if (revealed.data === undefined) throw new Error(\`reveal answered \${revealed.response.status}\`)
const domain: string | null = revealed.data.domain
const revealedAt: string = revealed.data.revealed_at

const refused = await client.POST("/api/v1/domains/{id}/hold", { params: { path: { id: "ZZZZZZZZ" } } })
if (refused.error === undefined) throw new Error("a hold of a missing listing was not refused")
const code: string = refused.error.error.code
const holdCode = "hold_code" in refused.error.error ? refused.error.error.hold_code : undefined

// The generated types refuse what the API refuses; never called.
export const typeChecks = () => {
  // @ts-expect-error spam accepts low or moderate
  void client.GET("/api/v1/domains", { params: { query: { spam: "high" } } })
  // @ts-expect-error a listing publishes no exact score
  void listing.directory_score_exact
  // @ts-expect-error the path takes an id
  void client.GET("/api/v1/domains/{id}", {})
}

console.log(JSON.stringify({ ids, hasMore, listing: listing.id, domain, revealedAt, status: refused.response.status, code, holdCode }))
`

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    target: "es2024",
    module: "nodenext",
    moduleResolution: "nodenext",
    allowImportingTsExtensions: true,
    verbatimModuleSyntax: true,
    noEmit: true,
    skipLibCheck: true,
    types: ["node"]
  },
  files: ["program.ts", "schema.ts"]
}

describe("the served OpenAPI document with mainstream tools", () => {
  let server: Running
  let key: string
  let document: Record<string, unknown>
  let dir: string
  const rows = [listing({ domain: "openapi-tools-a.com" }), listing({ domain: "openapi-tools-b.com" }), listing({ domain: "openapi-tools-c.com" })]

  beforeAll(async () => {
    server = await start(memoryAdapter)
    await addListings(server, rows)
    key = (await account(server, "pro", "openapi-tools")).secret
    const served = await call(server, "GET", "/api/v1/openapi.json", { key })
    expect(served.status).toBe(200)
    document = served.body
    // A folder outside node_modules (Node strips types only there), resolving packages from the repository's.
    dir = mkdtempSync(join(tmpdir(), "dropshelf-openapi-tools-"))
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir")
  })
  afterAll(async () => {
    await server.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("generates types with openapi-typescript that an openapi-fetch program compiles against under tsc --strict, and calls the server with", async () => {
    writeFileSync(join(dir, "schema.ts"), astToString(await openapiTS(document as unknown as Parameters<typeof openapiTS>[0])))
    writeFileSync(join(dir, "program.ts"), PROGRAM)
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG))
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }))
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc")
    const compiled = await run(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")]).catch((error) => error)
    expect(`${compiled.stdout}${compiled.stderr ?? ""}`).toBe("")

    const target = rows[1]!
    const { stdout } = await run(process.execPath, [join(dir, "program.ts"), server.base, key, target.id], { cwd: dir })
    expect(JSON.parse(stdout)).toEqual({
      ids: [...rows.map((row) => row.id)].sort().slice(0, 2),
      hasMore: true,
      listing: target.id,
      domain: target.domain,
      revealedAt: expect.stringMatching(/Z$/),
      status: 404,
      code: "not_found",
      holdCode: "NOT_FOUND"
    })
  })

  it("has no integer bound of the size of Number.MAX_SAFE_INTEGER anywhere in it", () => {
    expect(unsafeBounds(document)).toEqual([])
    // The walk reaches the bounds the document does carry.
    expect(unsafeBounds({ a: [{ b: { maximum: Number.MAX_SAFE_INTEGER, minimum: -Number.MAX_SAFE_INTEGER } }] })).toHaveLength(2)
  })

  it("passes Spectral's spectral:oas ruleset with no error, and no warning but the accepted ones", async () => {
    const file = join(dir, "openapi.json")
    writeFileSync(file, JSON.stringify(document, null, 2))
    const spectral = join(root, "node_modules", "@stoplight", "spectral-cli", "dist", "index.js")
    const linted = await run(process.execPath, [spectral, "lint", file, "--ruleset", join(root, ".spectral.yaml"), "--format", "json", "--quiet"])
      .catch((error) => error)
    const results: Array<{ readonly code: string; readonly severity: number; readonly message: string; readonly path: ReadonlyArray<string> }> = JSON.parse(linted.stdout)
    const describe = (result: (typeof results)[number]) => `${result.code} at ${result.path.join(".")}: ${result.message}`
    expect(results.filter((result) => result.severity === 0).map(describe)).toEqual([])
    expect(results.filter((result) => result.severity === 1 && !ACCEPTED_WARNINGS.has(result.code)).map(describe)).toEqual([])
  })

  it("passes `redocly lint` with no error and no warning", async () => {
    const file = join(dir, "openapi.json")
    writeFileSync(file, JSON.stringify(document, null, 2))
    const redocly = join(root, "node_modules", "@redocly", "cli", "bin", "cli.js")
    // Telemetry off and no update check: the lint runs offline.
    const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }
    const linted = await run(process.execPath, [redocly, "lint", file, "--config", join(root, "redocly.yaml"), "--format", "json"], { env, cwd: dir })
      .catch((error) => error)
    const report: {
      readonly totals: { readonly errors: number; readonly warnings: number }
      readonly problems: ReadonlyArray<{ readonly ruleId: string; readonly message: string; readonly location: ReadonlyArray<{ readonly pointer: string }> }>
    } = JSON.parse(linted.stdout)
    expect(report.problems.map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`)).toEqual([])
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
  })
})
