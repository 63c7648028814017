import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import fc from "fast-check"
import { batchedLines } from "../src/http/LineWriter.ts"

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("batchedLines", () => {
  it("writes the lines of one turn together, in order, once the turn is over", async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.array(fc.string(), { maxLength: 30 }), { maxLength: 5 }), async (turns) => {
      const writes: Array<string> = []
      const log = batchedLines((text) => writes.push(text))
      for (const lines of turns) {
        const before = writes.length
        for (const line of lines) log(line)
        assert.strictEqual(writes.length, before, "nothing is written before the turn ends")
        await nextTurn()
        if (lines.length === 0) assert.strictEqual(writes.length, before)
        else assert.deepStrictEqual(writes.slice(before), [lines.map((line) => `${line}\n`).join("")])
      }
    }), { numRuns: 100 })
  })

  it("writes at once when what is buffered passes the cap", async () => {
    const writes: Array<string> = []
    const log = batchedLines((text) => writes.push(text), { maxBufferedChars: 10 })
    log("1234")
    log("5678")
    assert.deepStrictEqual(writes, ["1234\n5678\n"])
    log("9")
    await nextTurn()
    assert.deepStrictEqual(writes, ["1234\n5678\n", "9\n"])
  })

  it("loses no line when the process exits in the same turn", () => {
    const module = pathToFileURL(join(import.meta.dirname, "..", "src", "http", "LineWriter.ts")).href
    const script = `import { stdoutLines } from ${JSON.stringify(module)}
for (let i = 0; i < 1000; i++) stdoutLines(JSON.stringify({ line: i }))
process.exit(0)`
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })
    assert.deepStrictEqual(out.trimEnd().split("\n").map((line) => JSON.parse(line).line), Array.from({ length: 1000 }, (_, i) => i))
  })
})
