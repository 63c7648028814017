import { describe, expect, it } from "vitest"
import { minimumOf, refusal, satisfies } from "../src/NodeSupport.ts"

describe("the bundle's Node check", () => {
  it("reads a >= range and compares versions part by part", () => {
    expect(minimumOf(">=22.19")).toEqual([22, 19, 0])
    expect(minimumOf(">= v24")).toEqual([24, 0, 0])
    expect(minimumOf("^22.19 || >=24")).toBeUndefined()
    for (const [version, ok] of [["20.20.2", false], ["22.18.9", false], ["22.19.0", true], ["22.20.0", true], ["24.0.0", true], ["v100.1.1", true]] as const) {
      expect(satisfies(version, [22, 19, 0]), version).toBe(ok)
    }
  })

  it("says nothing on a supported Node; otherwise names the command that works, quoted for a shell", () => {
    const base = { engines: ">=22.19", bundle: "/srv/app/dist/dropshelf.js", args: ["serve", "--port", "8080"], pinnedNodeDir: "/srv/app/node_modules/node/bin" }
    expect(refusal({ ...base, running: "24.21.0" })).toBeUndefined()
    expect(refusal({ ...base, running: "20.20.2" })).toBe(
      "dropshelf: this bundle needs Node >=22.19 and this is Node 20.20.2; run PATH=/srv/app/node_modules/node/bin:$PATH /srv/app/dist/dropshelf.js serve --port 8080"
    )
    expect(refusal({ ...base, running: "20.20.2", args: ["import", "my file.ndjson"], pinnedNodeDir: undefined })).toBe(
      "dropshelf: this bundle needs Node >=22.19 and this is Node 20.20.2; put a Node >=22.19 first on PATH and run /srv/app/dist/dropshelf.js import 'my file.ndjson'"
    )
  })
})
