/**
 * Idempotent writes over HTTP, on every storage adapter: the real server, plain `fetch` and raw
 * sockets for a client that drops its connection. A write sent with an `Idempotency-Key` runs
 * once; a repeat gets the first answer back with `Idempotent-Replayed: true` and changes nothing.
 */
import * as net from "node:net"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AvailabilityCheck, IdempotencyStore, Operators } from "@dropshelf/core"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, addListings, awayFromMinuteEdge, call, conformanceProblems, listing, type Running, start } from "./harness.ts"

const KEY_HEADER = "idempotency-key"
const REPLAYED = "idempotent-replayed"

/**
 * Availability checks that wait, for names starting `slow-`: the test learns when a reveal is
 * inside its write (`entered`) and lets it go on (`open`). Other names are stamped at once.
 */
const slowChecks = () => {
  const gates = new Map<string, { entered: Promise<void>; enter: () => void; opened: Promise<void>; open: () => void }>()
  const gate = (domain: string) => {
    let found = gates.get(domain)
    if (found === undefined) {
      let enter = () => {}
      let open = () => {}
      const entered = new Promise<void>((resolve) => (enter = resolve))
      const opened = new Promise<void>((resolve) => (open = resolve))
      found = { entered, enter, opened, open }
      gates.set(domain, found)
    }
    return found
  }
  const layer = Layer.succeed(AvailabilityCheck.AvailabilityCheck, {
    check: (domain) =>
      domain.startsWith("slow-")
        ? Effect.promise(async () => {
          const waiting = gate(domain)
          waiting.enter()
          await waiting.opened
          return { _tag: "Unregistered", checkedAt: Date.now() } as const
        })
        : Effect.sync(() => ({ _tag: "Unregistered", checkedAt: Date.now() }) as const)
  })
  return { layer, gate }
}

/** Sends a request on a socket of its own and closes it without reading a byte of the answer. */
const sendAndDrop = (server: Running, method: string, path: string, headers: Record<string, string>, body = "") =>
  new Promise<() => void>((resolve, reject) => {
    const url = new URL(server.base)
    const socket = net.connect(Number(url.port), url.hostname, () => {
      const head = [`${method} ${path} HTTP/1.1`, `Host: ${url.host}`, `Content-Length: ${Buffer.byteLength(body)}`]
      for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`)
      socket.write(`${head.join("\r\n")}\r\n\r\n${body}`, () => resolve(() => socket.destroy()))
    })
    socket.on("error", reject)
  })

/** Until the account's record of `key` holds an answer: the first request's write has ended. */
const answered = async (server: Running, accountId: string, key: string) => {
  for (let attempt = 0; attempt < 400; attempt++) {
    const record = await server.run(IdempotencyStore.IdempotencyStore.use((store) => store.find(accountId, key)))
    if (record?.outcome != null) return record
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`no answer was kept for ${key}`)
}

const revealsUsed = async (server: Running, secret: string) =>
  (await call(server, "GET", "/api/v1/me", { key: secret })).body.reveals

for (const adapter of adapters) {
  describe.skipIf(adapter.skip !== undefined)(`Idempotency-Key on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let server: Running
    const checks = slowChecks()

    beforeAll(async () => {
      server = await start(adapter, { availability: checks.layer })
    })

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    const newListing = async (overrides: Partial<Parameters<typeof listing>[0]> = {}) => {
      const row = listing({ domain: `idem-${Math.random().toString(36).slice(2, 10)}.com`, ...overrides })
      await addListings(server, [row])
      return row.id
    }

    it("a reveal whose client dropped the connection mid-write runs to its end; the retry replays it and charges once", async () => {
      const pro = await account(server, "pro", "dropped-reveal")
      const domain = `slow-${Math.random().toString(36).slice(2, 10)}.com`
      const id = await newListing({ domain })
      const key = crypto.randomUUID()
      const drop = await sendAndDrop(server, "POST", `/api/v1/domains/${id}/reveal`, {
        authorization: `Bearer ${pro.secret}`,
        [KEY_HEADER]: key
      })
      await checks.gate(domain).entered
      drop()
      checks.gate(domain).open()
      const retry = await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: pro.secret, headers: { [KEY_HEADER]: key } })
      expect(retry.status).toBe(200)
      expect(retry.headers.get(REPLAYED)).toBe("true")
      expect(retry.body.domain).toBe(domain)
      expect((await revealsUsed(server, pro.secret)).used).toBe(1)
    })

    it("a hold and an end whose answers were lost: the retries replay them, one hold made, the end still 200", async () => {
      const pro = await account(server, "pro", "lost-answers")
      const id = await newListing()
      await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: pro.secret })
      const holdKey = crypto.randomUUID()
      const headers = { authorization: `Bearer ${pro.secret}`, [KEY_HEADER]: holdKey }
      const dropHold = await sendAndDrop(server, "POST", `/api/v1/domains/${id}/hold`, headers)
      await answered(server, pro.accountId, holdKey)
      dropHold()
      const held = await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: pro.secret, headers: { [KEY_HEADER]: holdKey } })
      expect(held.status).toBe(200)
      expect(held.headers.get(REPLAYED)).toBe("true")
      const holds = await call(server, "GET", "/api/v1/holds", { key: pro.secret })
      expect(holds.body.data.map((hold: any) => hold.id)).toEqual([held.body.hold.id])

      const endKey = crypto.randomUUID()
      const dropEnd = await sendAndDrop(server, "DELETE", `/api/v1/holds/${held.body.hold.id}`, {
        authorization: `Bearer ${pro.secret}`,
        [KEY_HEADER]: endKey
      })
      await answered(server, pro.accountId, endKey)
      dropEnd()
      // Without the key the retry would be 400 HOLD_OVER: the hold has ended.
      const ended = await call(server, "DELETE", `/api/v1/holds/${held.body.hold.id}`, { key: pro.secret, headers: { [KEY_HEADER]: endKey } })
      expect(ended.status).toBe(200)
      expect(ended.headers.get(REPLAYED)).toBe("true")
      expect(ended.body.hold.state).toBe("released")
    })

    it("50 concurrent duplicates of one hold make one hold, and all get the same status and body", async () => {
      await awayFromMinuteEdge(15)
      const business = await account(server, "business", "fifty")
      const id = await newListing()
      await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: business.secret })
      const key = crypto.randomUUID()
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => call(server, "POST", `/api/v1/domains/${id}/hold`, { key: business.secret, headers: { [KEY_HEADER]: key } }))
      )
      expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200]))
      expect(new Set(answers.map((answer) => answer.text)).size).toBe(1)
      expect(answers.filter((answer) => answer.headers.get(REPLAYED) === "true").length).toBe(49)
      expect(answers.filter((answer) => answer.headers.get(REPLAYED) === null).length).toBe(1)
      const holds = await call(server, "GET", "/api/v1/holds", { key: business.secret })
      expect(holds.body.data).toHaveLength(1)
    })

    it("the same key with a different path or body is refused 422 idempotency_key_reused, and nothing is done", async () => {
      const pro = await account(server, "pro", "reused")
      const [first, second] = [await newListing(), await newListing()]
      for (const id of [first, second]) await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: pro.secret })
      const key = crypto.randomUUID()
      const held = await call(server, "POST", `/api/v1/domains/${first}/hold`, { key: pro.secret, headers: { [KEY_HEADER]: key } })
      expect(held.status).toBe(200)
      for (const [method, path] of [["POST", `/api/v1/domains/${second}/hold`], ["POST", `/api/v1/domains/${first}/reveal`]] as const) {
        const reused = await call(server, method, path, { key: pro.secret, headers: { [KEY_HEADER]: key } })
        expect(reused.status, path).toBe(422)
        expect(reused.body.error.code).toBe("idempotency_key_reused")
        expect(reused.body.error.message).toContain(key)
        expect(reused.body.error.hold_code).toBeUndefined()
        expect(reused.headers.get(REPLAYED)).toBeNull()
      }
      expect((await call(server, "GET", "/api/v1/holds", { key: pro.secret })).body.data).toHaveLength(1)

      // DELETE's body: absent, null, {} and {"outcome": "released"} are one request; "registered" another.
      const endKey = crypto.randomUUID()
      const path = `/api/v1/holds/${held.body.hold.id}`
      const ended = await call(server, "DELETE", path, { key: pro.secret, headers: { [KEY_HEADER]: endKey } })
      expect(ended.status).toBe(200)
      for (const body of ["null", "{}", JSON.stringify({ outcome: "released" })]) {
        const same = await call(server, "DELETE", path, { key: pro.secret, body, headers: { [KEY_HEADER]: endKey } })
        expect(same.status, body).toBe(200)
        expect(same.headers.get(REPLAYED)).toBe("true")
        expect(same.text).toBe(ended.text)
      }
      const other = await call(server, "DELETE", path, {
        key: pro.secret,
        body: JSON.stringify({ outcome: "registered" }),
        headers: { [KEY_HEADER]: endKey }
      })
      expect(other.status).toBe(422)
      expect(other.body.error.code).toBe("idempotency_key_reused")
    })

    it("keys belong to the account: another account's same key runs its own write", async () => {
      const id = await newListing()
      const key = crypto.randomUUID()
      for (const name of ["first", "second"]) {
        const pro = await account(server, "pro", `shared-key-${name}`)
        const revealed = await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: pro.secret, headers: { [KEY_HEADER]: key } })
        expect(revealed.status).toBe(200)
        expect(revealed.headers.get(REPLAYED)).toBeNull()
        expect((await revealsUsed(server, pro.secret)).used).toBe(1)
      }
    })

    it("refusals are kept and replayed (a 402 stays a 402 after an upgrade, a 403 after the reveal); /me's counts do not move, the rate limit does", async () => {
      await awayFromMinuteEdge(15)
      const free = await account(server, "free", "replayed-refusals")
      const featured = await newListing({ tier: "featured", featuredRank: 1 })
      const key = crypto.randomUUID()
      const refused = await call(server, "POST", `/api/v1/domains/${featured}/reveal`, { key: free.secret, headers: { [KEY_HEADER]: key } })
      expect(refused.status).toBe(402)
      expect(refused.body.error.reveal_code).toBe("FEATURED_REQUIRES_PRO")
      await server.run(Operators.Operators.use((operators) => operators.setPlan(free.accountId, "pro")))
      const before = await revealsUsed(server, free.secret)
      const remaining: Array<number> = []
      for (let repeat = 0; repeat < 3; repeat++) {
        const again = await call(server, "POST", `/api/v1/domains/${featured}/reveal`, { key: free.secret, headers: { [KEY_HEADER]: key } })
        expect(again.status).toBe(402)
        expect(again.headers.get(REPLAYED)).toBe("true")
        expect(again.text).toBe(refused.text)
        remaining.push(Number(again.headers.get("x-ratelimit-remaining")))
      }
      // A replay is a request like any other: each one counts against the key's minute.
      expect(remaining).toEqual([remaining[0]!, remaining[0]! - 1, remaining[0]! - 2])
      expect(await revealsUsed(server, free.secret)).toEqual(before)
      expect(before.used).toBe(0)

      const id = await newListing()
      const holdKey = crypto.randomUUID()
      const notRevealed = await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: free.secret, headers: { [KEY_HEADER]: holdKey } })
      expect(notRevealed.status).toBe(403)
      expect(notRevealed.body.error.hold_code).toBe("REVEAL_REQUIRED")
      const revealKey = crypto.randomUUID()
      const revealed = await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: free.secret, headers: { [KEY_HEADER]: revealKey } })
      expect(revealed.status).toBe(200)
      const counts = await revealsUsed(server, free.secret)
      expect(counts.used).toBe(1)
      const version = (await call(server, "GET", `/api/v1/domains/${id}`, { key: free.secret })).body.updated_at
      // A reveal sent again without its key would stamp availability again, moving updated_at; a replay runs nothing.
      const replayedReveal = await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: free.secret, headers: { [KEY_HEADER]: revealKey } })
      expect(replayedReveal.text).toBe(revealed.text)
      expect(await revealsUsed(server, free.secret)).toEqual(counts)
      expect((await call(server, "GET", `/api/v1/domains/${id}`, { key: free.secret })).body.updated_at).toBe(version)
      const stillRefused = await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: free.secret, headers: { [KEY_HEADER]: holdKey } })
      expect(stillRefused.status).toBe(403)
      expect(stillRefused.headers.get(REPLAYED)).toBe("true")
      expect((await call(server, "GET", "/api/v1/holds", { key: free.secret })).body.data).toHaveLength(0)
    })

    it("a key that is not 1 to 255 visible ASCII characters is 400 invalid_request naming Idempotency-Key, and nothing is done", async () => {
      const pro = await account(server, "pro", "bad-keys")
      const id = await newListing()
      for (const bad of ["", "with space", "x".repeat(256), "caf\u00e9", "tab\there"]) {
        const refused = await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: pro.secret, headers: { [KEY_HEADER]: bad } })
        expect(refused.status, JSON.stringify(bad)).toBe(400)
        expect(refused.body.error.code).toBe("invalid_request")
        expect(refused.body.error.parameter).toBe("Idempotency-Key")
        expect(refused.body.error.message).toContain("1 to 255 visible ASCII characters")
      }
      expect((await revealsUsed(server, pro.secret)).used).toBe(0)
      const longest = await call(server, "POST", `/api/v1/domains/${id}/reveal`, { key: pro.secret, headers: { [KEY_HEADER]: "~".repeat(255) } })
      expect(longest.status).toBe(200)
    })

    it("the served document describes the key, the replay header and the two refusals, and every answer here conforms to it", async () => {
      const pro = await account(server, "pro", "idempotency-openapi")
      const spec = (await call(server, "GET", "/api/v1/openapi.json", { key: pro.secret })).body
      const writes = [
        ["/api/v1/domains/{id}/reveal", "post"],
        ["/api/v1/domains/{id}/hold", "post"],
        ["/api/v1/holds/{id}/extend", "post"],
        ["/api/v1/holds/{id}", "delete"]
      ] as const
      for (const [path, method] of writes) {
        const operation = spec.paths[path][method]
        expect(operation.parameters.find((parameter: any) => parameter.name === "Idempotency-Key")).toMatchObject({ in: "header", required: false })
        expect(operation.responses["409"]).toBeDefined()
        expect(operation.responses["422"]).toBeDefined()
        expect(operation.responses["200"].headers["Idempotent-Replayed"]).toBeDefined()
      }
      expect(spec.paths["/api/v1/domains"].get.parameters.map((parameter: any) => parameter.name)).not.toContain("Idempotency-Key")
      expect(conformanceProblems(spec, server.exchanges)).toEqual([])
    })
  })

  describe.skipIf(adapter.skip !== undefined)(`Idempotency-Key while the first request runs, on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let server: Running
    const checks = slowChecks()

    beforeAll(async () => {
      server = await start(adapter, { availability: checks.layer, idempotencyWaitMs: 300 })
    })

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    it("a repeat waits for the first request; past the wait it is 409 idempotency_key_in_use, and a later one replays", async () => {
      const pro = await account(server, "pro", "in-use")
      const domain = `slow-${Math.random().toString(36).slice(2, 10)}.com`
      const row = listing({ domain })
      await addListings(server, [row])
      const key = crypto.randomUUID()
      const path = `/api/v1/domains/${row.id}/reveal`
      const first = call(server, "POST", path, { key: pro.secret, headers: { [KEY_HEADER]: key } })
      await checks.gate(domain).entered
      const busy = await call(server, "POST", path, { key: pro.secret, headers: { [KEY_HEADER]: key } })
      expect(busy.status).toBe(409)
      expect(busy.body.error.code).toBe("idempotency_key_in_use")
      expect(busy.headers.get(REPLAYED)).toBeNull()
      const waiting = call(server, "POST", path, { key: pro.secret, headers: { [KEY_HEADER]: key } })
      checks.gate(domain).open()
      const [answer, replay] = await Promise.all([first, waiting])
      expect(answer.status).toBe(200)
      expect(replay.status).toBe(200)
      expect(replay.headers.get(REPLAYED)).toBe("true")
      expect(replay.text).toBe(answer.text)
      expect((await revealsUsed(server, pro.secret)).used).toBe(1)
      const spec = (await call(server, "GET", "/api/v1/openapi.json", { key: pro.secret })).body
      expect(conformanceProblems(spec, server.exchanges)).toEqual([])
    })
  })
}
