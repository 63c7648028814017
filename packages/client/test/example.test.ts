/**
 * docs/examples/client.ts, printed in docs/api.md, run as written (plain Node, no build) against
 * the real server: on a pro key it lists, reveals and holds; on a business key it also reads the
 * since feed; and a refusal is caught and read, not thrown.
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { account, addListings, listing, memoryAdapter, type Running, start } from "../../../apps/server/test/harness.ts"

const run = promisify(execFile)
const example = fileURLToPath(new URL("../../../docs/examples/client.ts", import.meta.url))
const guide = readFileSync(new URL("../../../docs/api.md", import.meta.url), "utf8")

describe("docs/examples/client.ts", () => {
  let server: Running
  const rows = Array.from({ length: 5 }, (_, i) => listing({ domain: `example-client-${i}.com`, directoryScore: 57 }))
  beforeAll(async () => {
    server = await start(memoryAdapter)
    await addListings(server, [...rows, listing({ domain: "example-client-low.com", directoryScore: 12 })])
  })
  afterAll(() => server.close())

  const runExample = (secret: string) =>
    run(process.execPath, [example], { env: { ...process.env, DROPSHELF_URL: server.base, DROPSHELF_KEY: secret } })

  it("is the example docs/api.md prints", () => {
    const printed = /```ts client\.ts\n([\s\S]*?)```/.exec(guide)?.[1]
    expect(printed).toBe(readFileSync(example, "utf8"))
  })

  it("lists, reveals and holds on a pro key", async () => {
    const key = await account(server, "pro", "example-pro")
    const { stdout } = await runExample(key.secret)
    expect(stdout).toContain("plan pro, 500 reveals left this month")
    expect(stdout).toContain(`${rows.length} listings`)
    expect(stdout).toMatch(/revealed example-client-\w+\.com/)
    expect(stdout).toMatch(/held until \d{4}-\d\d-\d\dT/)
    expect(stdout).not.toContain("since feed")
  })

  it("reads a refusal instead of throwing it", async () => {
    // The first listing was held and released by the pro run: its cooldown refuses this account again.
    const key = await account(server, "pro", "example-pro")
    const first = await runExample(key.secret)
    expect(first.stdout).toMatch(/revealed /)
    const again = await runExample(key.secret)
    expect(again.stdout).toMatch(/refused 403 HOLD_COOLDOWN: /)
  })

  it("reads the since feed on a business key", async () => {
    const key = await account(server, "business", "example-business")
    const { stdout } = await runExample(key.secret)
    expect(stdout).toContain("plan business, unlimited reveals left this month")
    expect(stdout).toMatch(/since feed: \d+ to upsert, 0 to drop; next since=\d{4}-\d\d-\d\dT[\d:.]+Z/)
  })
})
