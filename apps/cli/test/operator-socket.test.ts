import { execFileSync, spawnSync } from "node:child_process"
import { chmodSync, copyFileSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { MAX_REQUEST_LINE_LENGTH } from "../src/OperatorSocket.ts"
import { binScript, embeddedTarget, killStragglers, node24, runJson, type Running, serve, type Target } from "./support.ts"

/*
 * The operator endpoint of a serving embedded database, as another local user and a careless
 * client meet it: only the owner may connect, whatever umask the server runs under, and a
 * request line without end closes its connection, not the server.
 */

/** Why the cross-user check cannot run here, or undefined when it can: it needs root and the tools to make a user. */
const crossUserSkip = (() => {
  if (process.platform !== "linux") return "not Linux"
  if (process.getuid?.() !== 0) return "not root: cannot create a second user"
  for (const tool of ["useradd", "userdel", "runuser"]) {
    if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) return `no ${tool}`
  }
  return undefined
})()

describe.skipIf(process.platform === "win32")("the operator socket of a server started under umask 002", { timeout: 240_000 }, () => {
  let target: Target
  let server: Running
  let socket: string

  beforeAll(async () => {
    target = embeddedTarget({ migrated: true })
    const dataDir = target.env.DROPSHELF_DATA_DIR!
    // Every folder above the socket open to the group, as a shared machine's may be: only the
    // socket's own permissions then stand between another user and the endpoint.
    chmodSync(dirname(dataDir), 0o775)
    chmodSync(dataDir, 0o775)
    const wrapper = join(dirname(dataDir), "umask-002.sh")
    writeFileSync(wrapper, `umask 002\nexec '${node24}' '${binScript}' "$@"\n`)
    server = (await serve({ env: target.env, via: { executable: "/bin/sh", script: wrapper } })).server
    socket = join(dataDir, "dropshelf.sock")
  })
  afterEach(() => killStragglers(server === undefined ? [] : [server.child]))
  afterAll(async () => {
    if (server !== undefined) expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    await target?.dispose()
  })

  it("is the owner's alone (0600), with nothing left of how it was made", () => {
    const info = statSync(socket)
    expect(info.isSocket()).toBe(true)
    expect((info.mode & 0o777).toString(8)).toBe("600")
    expect(readdirSync(dirname(socket)).filter((name) => name.startsWith(".s"))).toEqual([])
  })

  it.skipIf(crossUserSkip !== undefined)(
    `refuses a second user of the same group${crossUserSkip === undefined ? "" : ` (skipped: ${crossUserSkip})`}`,
    () => {
      const user = `dsk${process.pid}${Date.now().toString(36)}`.slice(0, 30)
      // In the server's own group (root), so a group-writable socket would let it in.
      execFileSync("useradd", ["--no-create-home", "--gid", "0", "--shell", "/bin/false", user])
      try {
        const probe = `const s = require("node:net").connect(${JSON.stringify(socket)});` +
          `s.on("connect", () => { console.log("connected"); s.destroy() });` +
          `s.on("error", (e) => console.log(e.code))`
        // A copy of node the second user may run: the checkout's own may sit below a folder only its owner can enter.
        const shared = mkdtempSync(join(tmpdir(), "dropshelf-node-"))
        chmodSync(shared, 0o755)
        const node = join(shared, "node")
        copyFileSync(node24, node)
        chmodSync(node, 0o755)
        try {
          const attempt = spawnSync("runuser", ["-u", user, "--", node, "-e", probe], { encoding: "utf8", timeout: 30_000 })
          expect(attempt.stderr).toBe("")
          expect(attempt.stdout.trim()).toBe("EACCES")
        } finally {
          rmSync(shared, { recursive: true, force: true })
        }
      } finally {
        execFileSync("userdel", [user])
      }
    }
  )

  it("closes a connection whose request line outgrows the bound, and keeps serving", async () => {
    const closed = await new Promise<"closed" | "still open">((resolve, reject) => {
      const client = connect(socket)
      client.on("error", () => {}) // the server hangs up mid-write: EPIPE or ECONNRESET
      client.on("close", () => resolve("closed"))
      client.on("connect", () => {
        const chunk = Buffer.alloc(1024 * 1024, "x")
        // Past the bound by 2 MiB: under effect/rpc's own default bound (16 MiB), so only ours closes it.
        for (let sent = 0; sent <= MAX_REQUEST_LINE_LENGTH + 2 * chunk.length; sent += chunk.length) client.write(chunk)
        // What the server does with it is seen by now, on a loaded machine too.
        setTimeout(() => {
          resolve("still open")
          client.destroy()
        }, 30_000)
      })
      client.on("timeout", reject)
    })
    expect(closed).toBe("closed")
    const account = await runJson(["accounts", "create", "--name", "after-long-line", "--plan", "pro"], { env: target.env })
    expect(account.plan).toBe("pro")
  })
})
