/**
 * A bounded hostile suite against the real server, on every storage adapter. Requests are
 * generated from the served OpenAPI document (every operation and every parameter it lists,
 * filled with careless values) and spoken over raw sockets, alongside HTTP that is broken on
 * purpose. For every answer:
 *
 * - its status is one the document lists for the operation, or one of the boundary's
 *   documented answers (404 for another spelling of a path, 405, 413, the preflight's 204,
 *   Node-level refusals of broken HTTP), and never a 5xx;
 * - a refusal is the JSON envelope, and every answer carries `Access-Control-Allow-Origin: *`
 *   and an `X-Request-Id` (the request's own when it sent a sane one);
 * - a request with a valid key to `/api/v1` carries the rate-limit headers;
 * - a half-closed request is answered, or, when its FIN came first, taken as a client that went
 *   away (no answer, but it reached the log; decision 0200);
 * - no canary name the caller may not read appears anywhere in the answer: seeded listings the
 *   caller has not revealed (regular and featured, on plans with a reveal ceiling), one held by
 *   another account, one newer than the plan's access delay, one delisted.
 *
 * Bounded to a few seconds per adapter: few runs, a fixed seed (fast-check prints it with the
 * failing case; `DROPSHELF_HOSTILE_SEED` replays or varies it).
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Operators } from "@dropshelf/core"
import { adapters, cleanupPgliteDirs } from "./adapters.ts"
import { account, addListings, call, listing, type Running, start } from "./harness.ts"
import { type RawAnswer, rawExchange } from "./rawHttp.ts"

const SEED = Number(process.env.DROPSHELF_HOSTILE_SEED ?? 20_261_124)
/** The `X-Request-Id` the server keeps, or makes (docs/api.md). */
const SANE_REQUEST_ID = /^[A-Za-z0-9\-_.:+/=]{1,128}$/
const DAY = 86_400_000
const ERROR_CODES = ["invalid_request", "unauthorized", "upgrade_required", "forbidden", "not_found", "method_not_allowed", "rate_limited", "server_error"]

type Plan = "free" | "pro" | "business"

/** An account under test and its one key. */
interface Caller {
  readonly plan: Plan
  readonly secret: string
  /** Canary listings this account revealed during the run: their names are its to read. */
  readonly revealed: Set<string>
}

/** How the request presented a key. */
interface Presented {
  readonly header: string | undefined
  /** The caller whose valid key was sent, if one was. */
  readonly caller: Caller | undefined
}

const random = () => Math.random().toString(36).slice(2, 10).padEnd(8, "0")

/** UTF-8 percent-encoding of everything but unreserved characters; a lone surrogate becomes U+FFFD, as a client's encoder makes it. */
const percentEncoded = (text: string) =>
  Array.from(new TextEncoder().encode(text), (byte) =>
    /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("")

/**
 * The documented rule for one spelling per resource (docs/api.md): origin-form, no empty, `.`
 * or `..` segment, no trailing slash, no `;`, no percent-encoding. Anything else is 404.
 */
const isCanonical = (target: string) => {
  const pathname = target.split(/[?#]/)[0]!
  return target.startsWith("/") && !/\/\/|;|%|\/\.\.?(?:\/|$)/.test(pathname) && (pathname === "/" || !pathname.endsWith("/"))
}

/** Values a careless or hostile client sends, whatever the parameter. */
const careless: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ unit: "binary", maxLength: 30 }), weight: 2 },
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 12 }), weight: 1 },
  { arbitrary: fc.integer().map(String), weight: 1 },
  { arbitrary: fc.double().map(String), weight: 1 },
  {
    arbitrary: fc.constantFrom(
      "", " ", "\u0000", "a\u0000b", "\u0007\u001b[31m", "\r\n", "\t", "%", "%00", "%ZZ", "_", "\\", "'", "\"", "<script>",
      "\uFFFD", "\uD800", "😀", "ﬁ", "İ", "Ω", "-1", "0", "1e309", "99999999999999999999", "1.5", "0x10", "+5", "NaN", "Infinity",
      "true", "false", "null", "undefined", "[]", "{}", "[1,2]", "{\"a\":1}",
      "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "1970-01-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-24", "yesterday",
      "x".repeat(4_000), "9".repeat(400), ",".repeat(300), "a,".repeat(500)
    ),
    weight: 3
  }
)

/** A value that fits the parameter's schema, or nearly: its enum, integers at and past its bounds, both booleans. */
const plausible = (schema: any): fc.Arbitrary<string> => {
  const choices: Array<fc.Arbitrary<string>> = [fc.constantFrom("latest", "open", "low", "moderate", "tech", "com", "co.uk", "under-100", "2500-plus")]
  if (Array.isArray(schema?.enum)) choices.push(fc.constantFrom(...schema.enum.map(String)))
  if (schema?.type === "integer") {
    const min = schema.minimum ?? -1_000
    const max = schema.maximum ?? 1_000
    choices.push(fc.integer({ min: min - 2, max: max + 2 }).map(String), fc.constantFrom(String(min), String(max)))
  }
  if (schema?.type === "boolean") choices.push(fc.constantFrom("true", "false", "TRUE", "1", "yes"))
  if (schema?.format === "date-time") choices.push(fc.date({ noInvalidDate: true }).map((date) => date.toISOString()))
  return fc.oneof(...choices)
}

for (const adapter of adapters) {
  describe.skipIf(adapter.skip !== undefined)(`hostile input on ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ""}`, () => {
    let server: Running
    let spec: any
    const callers: Array<Caller> = []
    /** Accounts of their own for the raw-socket cases, so that their answers are not all 429. */
    const rawCallers: Array<Caller> = []
    let revoked = ""
    let holdId = ""
    const cursors: Array<string> = []
    const canary = {
      regular: listing({ domain: `canary${random()}.com` }),
      featured: listing({ domain: `canary${random()}.com`, tier: "featured", featuredRank: 1 }),
      held: listing({ domain: `canary${random()}.com` }),
      fresh: listing({ domain: `canary${random()}.com`, discoveredAt: Date.now() - DAY / 2 }),
      delisted: listing({ domain: `canary${random()}.com` })
    }
    const ordinary = [
      listing({ domain: `ordinary-${random()}.com` }),
      listing({ domain: `public-${random()}.net`, tier: "open" }),
      listing({ domain: `shelf-${random()}.org`, tier: "featured", featuredRank: 2 })
    ]
    const listingIds = [...Object.values(canary), ...ordinary].map((row) => row.id as string)

    /** The canary names `caller` may not read: all of them without a valid key. */
    const forbiddenFor = (caller: Caller | undefined): Array<string> => {
      if (caller === undefined) return Object.values(canary).map((row) => row.domain)
      const hidden = [canary.held, canary.delisted]
      if (caller.plan !== "business") hidden.push(canary.regular, canary.featured, canary.fresh)
      return hidden.filter((row) => !caller.revealed.has(row.id)).map((row) => row.domain)
    }

    beforeAll(async () => {
      server = await start(adapter)
      await addListings(server, [...Object.values(canary), ...ordinary])
      await server.run(Operators.Operators.use((operators) => operators.delist([canary.delisted.id], "delisted")))
      // Another account holds one canary: its name is hidden from every caller, business included.
      const holder = await account(server, "business", "hostile-holder")
      expect((await call(server, "POST", `/api/v1/domains/${canary.held.id}/reveal`, { key: holder.secret })).status).toBe(200)
      const hold = await call(server, "POST", `/api/v1/domains/${canary.held.id}/hold`, { key: holder.secret })
      expect(hold.status).toBe(200)
      holdId = hold.body.hold.id
      // Several accounts per plan, so the generated requests are not all over one key's limit.
      for (const plan of ["free", "free", "free", "pro", "pro", "business", "business"] as const) {
        callers.push({ plan, secret: (await account(server, plan, `hostile-${plan}-${callers.length}`)).secret, revealed: new Set() })
      }
      for (const plan of ["pro", "business", "pro"] as const) {
        rawCallers.push({ plan, secret: (await account(server, plan, `hostile-raw-${plan}-${rawCallers.length}`)).secret, revealed: new Set() })
      }
      const gone = await account(server, "pro", "hostile-revoked")
      await server.run(Operators.Operators.use((operators) => operators.revokeKey(gone.prefix)))
      revoked = gone.secret
      spec = (await call(server, "GET", "/api/v1/openapi.json", { key: callers[5]!.secret })).body
      for (const [caller, query] of [[callers[5]!, "limit=1"], [callers[6]!, "limit=2&sort=latest"], [callers[0]!, "limit=1"]] as const) {
        const page = await call(server, "GET", `/api/v1/domains?${query}`, { key: caller.secret })
        if (typeof page.body?.next_cursor === "string") cursors.push(page.body.next_cursor)
      }
      expect(cursors.length).toBeGreaterThan(0)
    })

    afterAll(async () => {
      await server?.close()
      cleanupPgliteDirs()
    })

    /** Every check an answer must pass; `statuses` are those allowed for this request. */
    const expectSound = (
      answer: RawAnswer | undefined,
      request: {
        readonly label: string
        readonly method: string
        readonly presented: Presented
        readonly counted: boolean
        readonly statuses: ReadonlySet<number>
        readonly requestId?: string | undefined
      }
    ) => {
      const what = `${request.label} → ${answer === undefined ? "closed without an answer" : `${answer.status} ${answer.text.slice(0, 300)}`}`
      expect(answer, what).toBeDefined()
      const { headers, status, text } = answer!
      expect(status, what).toBeLessThan(500)
      expect([...request.statuses], what).toContain(status)
      expect(headers["access-control-allow-origin"], what).toBe("*")
      expect(headers["x-request-id"], what).toMatch(SANE_REQUEST_ID)
      if (request.requestId !== undefined && SANE_REQUEST_ID.test(request.requestId)) expect(headers["x-request-id"], what).toBe(request.requestId)
      if (status >= 400 && request.method !== "HEAD") {
        expect(headers["content-type"], what).toMatch(/^application\/json/)
        const body = JSON.parse(text)
        expect(ERROR_CODES, what).toContain(body.error.code)
        expect(body.error.message, what).toBeTypeOf("string")
      }
      if (request.presented.caller !== undefined && request.counted) {
        for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
          expect(headers[name] ?? `no ${name}`, what).toMatch(/^\d+$/)
        }
      }
      // A granted reveal makes that name the caller's to read, from this very answer on.
      if (request.presented.caller !== undefined && status === 200 && request.method === "POST") {
        const body = JSON.parse(text)
        if (typeof body.revealed_at === "string") request.presented.caller.revealed.add(body.id)
      }
      const seen = `${Object.values(headers).join("\n")}\n${text}`.toLowerCase()
      for (const name of forbiddenFor(request.presented.caller)) expect(seen.includes(name), `${what}: shows ${name}`).toBe(false)
    }

    /**
     * A half-closed request is answered soundly, or, when the FIN came before its answer, taken
     * as a client that went away: no answer (decision 0200). Then it was a whole request that
     * reached the boundary, which logs it; a request the FIN cut short must be answered.
     */
    const halfClosed = async (request: string | Buffer, check: (answer: RawAnswer | undefined) => void) => {
      const logged = server.logs.length
      const answer = await rawExchange(server.base, request, { halfClose: true })
      if (answer !== undefined) return check(answer)
      const label = JSON.stringify(request.toString("latin1").slice(0, 300))
      await expect.poll(() => server.logs.length, { message: `${label} → closed without an answer, and never reached the boundary`, timeout: 5_000 })
        .toBeGreaterThan(logged)
    }

    /** Built once the accounts exist. */
    const presentedKey = (): fc.Arbitrary<Presented> => fc.oneof(
      { arbitrary: fc.nat().map((index) => callers[index % callers.length]!).map((caller) => ({ header: `Bearer ${caller.secret}`, caller })), weight: 8 },
      { arbitrary: fc.nat().map((index) => callers[index % callers.length]!).map((caller) => ({ header: `bearer   ${caller.secret}`, caller })), weight: 1 },
      {
        arbitrary: fc.oneof(
          fc.constant(undefined),
          fc.constantFrom("Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer ds_live_", "Bearer ds_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
          fc.constant(`Bearer ${revoked}`),
          fc.string({ unit: "binary-ascii", maxLength: 60 }).map((text) => `Bearer ${text.replace(/[\r\n\u0000]/g, "")}`)
        ).map((header) => ({ header, caller: undefined })),
        weight: 2
      }
    )

    /** Ids of every shape: real ones (canaries included), near misses, and nonsense. */
    const anyId = (): fc.Arbitrary<string> => fc.oneof(
      { arbitrary: fc.constantFrom(...listingIds), weight: 4 },
      { arbitrary: fc.constantFrom(...listingIds).map((id) => id.toLowerCase()), weight: 1 },
      { arbitrary: fc.constantFrom(...listingIds).map((id) => id.slice(0, 7)), weight: 1 },
      { arbitrary: fc.constantFrom(...listingIds).map((id) => `${id}A`), weight: 1 },
      { arbitrary: fc.constant(holdId), weight: 2 },
      { arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/), weight: 2 },
      { arbitrary: fc.constantFrom("", ".", "..", "../me", "a/b", "AAAAAAAA/reveal", "h_", "%2F", "\u0000", "AAAA\u0000AAA", "x".repeat(3_000)), weight: 2 },
      { arbitrary: careless, weight: 2 }
    )

    /** A cursor that was issued, or one edited on its way back. */
    const tamperedCursor = (): fc.Arbitrary<string> => fc.tuple(
      fc.constantFrom(...cursors),
      fc.nat(),
      fc.constantFrom("as issued", "one character changed", "lower-cased", "cut short", "lengthened", "forged")
    ).map(([cursor, at, how]) => {
      const index = at % cursor.length
      switch (how) {
        case "one character changed":
          return cursor.slice(0, index) + (cursor[index] === "A" ? "B" : "A") + cursor.slice(index + 1)
        case "lower-cased":
          return cursor.toLowerCase()
        case "cut short":
          return cursor.slice(0, index)
        case "lengthened":
          return `${cursor}A`
        case "forged":
          return Buffer.from(JSON.stringify({ id: canary.held.id, sort: "id" })).toString("base64url")
        default:
          return cursor
      }
    })

    it("answers every operation of the served document, filled with careless values, soundly", async () => {
      const operations = Object.entries<any>(spec.paths).flatMap(([template, item]) =>
        Object.entries<any>(item).map(([method, operation]) => ({ template, method: method.toUpperCase(), operation })))
      expect(operations.length).toBeGreaterThanOrEqual(9)
      const templates = operations.map(({ template }) => ({ template, pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`) }))

      /** The statuses a request may get: the document's for its operation, or the boundary's answer. */
      const statusesFor = (method: string, target: string, keyed: boolean): ReadonlySet<number> => {
        const limited = keyed ? [429] : []
        if (method === "OPTIONS") return new Set([204, ...limited])
        if (!isCanonical(target)) return new Set([404, ...limited])
        const pathname = target.split(/[?#]/)[0]!
        const match = templates.find(({ pattern }) => pattern.test(pathname))
        if (match === undefined) return new Set([404, 413, ...limited])
        const operation = spec.paths[match.template][(method === "HEAD" ? "GET" : method).toLowerCase()]
        if (operation === undefined) return new Set([405, ...limited])
        return new Set(Object.keys(operation.responses).map(Number))
      }

      const request = fc.constantFrom(...operations).chain(({ method, operation, template }) => {
        const parameters: Array<any> = operation.parameters ?? []
        const pathParameters = parameters.filter((parameter) => parameter.in === "path")
        const queryParameters = parameters.filter((parameter) => parameter.in === "query")
        const headerParameters = parameters.filter((parameter) => parameter.in === "header")
        // Entity tags as a careless client lists them, and any careless value, on one line each.
        const headerValue = fc.oneof(
          fc.constantFrom("*", "W/\"x\"", "\"a\", W/\"b\"", "\"\"", "W/", "\"unclosed", "*, \"a\"", "trace-1", "x".repeat(129)),
          careless.map((value) => value.replace(/[\r\n\u0000]/g, ""))
        )
        const queryValue = (parameter: any) =>
          parameter.name === "cursor" ? fc.oneof(tamperedCursor(), careless) : fc.oneof(plausible(parameter.schema), careless)
        const pair = queryParameters.length === 0
          ? fc.tuple(careless, careless)
          : fc.oneof(
            { arbitrary: fc.constantFrom(...queryParameters).chain((parameter) => fc.tuple(fc.constant(parameter.name as string), queryValue(parameter))), weight: 5 },
            { arbitrary: fc.tuple(careless, careless), weight: 1 }
          )
        return fc.record({
          method: fc.oneof(
            { arbitrary: fc.constant(method), weight: 8 },
            { arbitrary: fc.constantFrom("OPTIONS", "HEAD", "PUT", "PATCH", "POST", "DELETE", "GET"), weight: 2 }
          ),
          path: fc.tuple(...pathParameters.map(() => fc.tuple(anyId(), fc.boolean()))).map((ids) => {
            let index = 0
            return template.replace(/\{[^}]+\}/g, () => {
              const [id, raw] = ids[index++]!
              // Sent as is when it can be (dots and slashes walk the path), else percent-encoded.
              return raw && /^[\x21-\x7e]*$/.test(id) ? id : percentEncoded(id)
            })
          }),
          query: fc.array(pair, { maxLength: 4 }),
          body: operation.requestBody !== undefined || method === "POST"
            ? fc.option(fc.oneof(
              fc.constantFrom("{\"outcome\":\"released\"}", "{\"outcome\":\"registered\"}", "{\"outcome\":\"sold\"}", "{", "null", "[]", "\"x\"", "{\"outcome\":null}", "x".repeat(20_000)),
              careless.map((value) => JSON.stringify({ outcome: value })),
              careless
            ))
            : fc.constant(null),
          contentType: fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", undefined),
          headers: headerParameters.length === 0
            ? fc.constant([] as Array<[string, string]>)
            : fc.array(fc.tuple(fc.constantFrom(...headerParameters.map((parameter) => parameter.name as string)), headerValue), { maxLength: 2 }),
          presented: presentedKey()
        })
      })

      await fc.assert(
        fc.asyncProperty(request, async ({ body, contentType, headers, method, path, presented, query }) => {
          const target = query.length === 0 ? path : `${path}?${query.map(([name, value]) => `${percentEncoded(name)}=${percentEncoded(value)}`).join("&")}`
          const bytes = Buffer.from(body ?? "", "utf8")
          const head = [
            `${method} ${target} HTTP/1.1`,
            "Host: dropshelf.test",
            "Connection: close",
            ...(presented.header !== undefined ? [`Authorization: ${presented.header}`] : []),
            ...(body !== null && contentType !== undefined ? [`Content-Type: ${contentType}`] : []),
            ...(body !== null ? [`Content-Length: ${bytes.length}`] : []),
            ...headers.map(([name, value]) => `${name}: ${value}`)
          ]
          const answer = await rawExchange(server.base, Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), bytes]))
          // A target or header with characters HTTP does not allow there may be refused by Node before any route.
          const valid = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*$/.test(target) &&
            [presented.header ?? "", ...headers.map(([, value]) => value)].every((value) => /^[\t\x20-\x7e]*$/.test(value))
          const statuses = statusesFor(method, target, presented.caller !== undefined)
          // Node reads a repeated X-Request-Id as one value, the two joined.
          const sentIds = headers.filter(([name]) => name === "X-Request-Id").map(([, value]) => value.trim())
          expectSound(answer, {
            label: `${method} ${target.slice(0, 300)} ${JSON.stringify(headers).slice(0, 300)}`,
            method,
            presented,
            // Only the API's paths count a key; `GET /` and the others outside it need none.
            counted: valid && target.startsWith("/api/v1/"),
            statuses: valid ? statuses : new Set([...statuses, 400]),
            requestId: valid && sentIds.length === 1 ? sentIds[0] : undefined
          })
        }),
        { numRuns: 120, seed: SEED }
      )
    })

    it("answers broken, trickled, oversized and unusual HTTP in the envelope", async () => {
      const [pro, business] = [rawCallers[0]!, rawCallers[1]!]
      const key = (caller: Caller) => `Authorization: Bearer ${caller.secret}\r\n`
      const list = (caller: Caller, target = "/api/v1/domains?limit=250") =>
        `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${key(caller)}\r\n`
      const cases: Array<{
        readonly name: string
        readonly request: string
        readonly statuses: ReadonlyArray<number>
        readonly caller?: Caller | undefined
        /** Whether the key is read and counted: not when Node refuses the request before any route. */
        readonly counted?: boolean | undefined
        readonly halfClose?: boolean | undefined
        readonly trickle?: number | undefined
      }> = [
        { name: "a broken request line", request: "NOT HTTP AT ALL\r\n\r\n", statuses: [400] },
        { name: "a request line without a target", request: "GET\r\n\r\n", statuses: [400] },
        { name: "an unknown HTTP version", request: `GET /api/v1/me HTTP/9.9\r\nHost: x\r\n${key(pro)}\r\n`, statuses: [400], caller: pro, counted: false },
        { name: "a lower-case method", request: `get /api/v1/me HTTP/1.1\r\nHost: x\r\n${key(pro)}\r\n`, statuses: [400], caller: pro, counted: false },
        { name: "a NUL in a header", request: `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n${key(pro)}\r\n`, statuses: [400], caller: pro, counted: false },
        { name: "a folded header", request: `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n${key(pro)}\r\n`, statuses: [400], caller: pro, counted: false },
        {
          name: "a bad chunk size",
          request: `DELETE /api/v1/holds/${holdId} HTTP/1.1\r\nHost: x\r\n${key(pro)}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`,
          statuses: [400],
          caller: pro,
          counted: false
        },
        {
          name: "a chunk without its line end",
          request: `DELETE /api/v1/holds/${holdId} HTTP/1.1\r\nHost: x\r\n${key(pro)}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n`,
          statuses: [400],
          caller: pro,
          counted: false
        },
        {
          name: "a chunk size past any body",
          request: `DELETE /api/v1/holds/${holdId} HTTP/1.1\r\nHost: x\r\n${key(pro)}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\n{}\r\n`,
          statuses: [400, 413],
          caller: pro,
          counted: false
        },
        {
          name: "both Content-Length and chunked",
          request: `DELETE /api/v1/holds/${holdId} HTTP/1.1\r\nHost: x\r\n${key(pro)}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
          statuses: [400],
          caller: pro,
          counted: false
        },
        {
          name: "two different Content-Lengths",
          request: `DELETE /api/v1/holds/${holdId} HTTP/1.1\r\nHost: x\r\n${key(pro)}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
          statuses: [400],
          caller: pro,
          counted: false
        },
        { name: "headers over 16 KB", request: `GET /api/v1/me HTTP/1.1\r\nHost: x\r\n${key(pro)}X-Padding: ${"p".repeat(17_000)}\r\n\r\n`, statuses: [431], caller: pro, counted: false },
        { name: "a request line over 16 KB", request: `GET /api/v1/domains?q=${"q".repeat(17_000)} HTTP/1.1\r\nHost: x\r\n${key(pro)}\r\n`, statuses: [431], caller: pro, counted: false },
        { name: "oversized headers, trickled", request: `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Padding: ${"p".repeat(17_000)}\r\n\r\n`, statuses: [431], trickle: 2_048 },
        { name: "a whole request, trickled", request: list(pro), statuses: [200, 429], caller: pro, trickle: 7 },
        { name: "a business page, trickled", request: list(business), statuses: [200, 429], caller: business, trickle: 64 },
        { name: "no Host", request: `GET /api/v1/domains?limit=250 HTTP/1.1\r\n${key(pro)}\r\n`, statuses: [400, 429], caller: pro },
        { name: "no Host, HTTP/1.0", request: `GET /api/v1/domains?limit=250 HTTP/1.0\r\n${key(pro)}\r\n`, statuses: [200, 429], caller: pro },
        { name: "an absolute-form target", request: list(pro, "http://dropshelf.test/api/v1/domains?limit=250"), statuses: [404, 429], caller: pro },
        { name: "an asterisk target", request: list(pro, "*"), statuses: [404], caller: pro, counted: false },
        { name: "an empty segment", request: list(pro, "//api/v1/me"), statuses: [404], caller: pro, counted: false },
        { name: "a trailing slash", request: list(pro, `/api/v1/domains/${canary.regular.id}/`), statuses: [404, 429], caller: pro },
        { name: "a dot segment", request: list(pro, `/api/v1/domains/./${canary.regular.id}`), statuses: [404, 429], caller: pro },
        { name: "a dot-dot segment", request: list(pro, `/api/v1/holds/../domains/${canary.held.id}`), statuses: [404, 429], caller: pro },
        { name: "a percent-encoded path", request: list(pro, `/api/v1/domains/%${canary.regular.id.charCodeAt(0).toString(16)}${canary.regular.id.slice(1)}`), statuses: [404, 429], caller: pro },
        { name: "a ; parameter", request: list(pro, `/api/v1/domains;v=1/${canary.regular.id}`), statuses: [404, 429], caller: pro },
        { name: "a keyed OPTIONS", request: `OPTIONS /api/v1/domains HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${key(pro)}\r\n`, statuses: [204, 429], caller: pro },
        { name: "OPTIONS *", request: "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", statuses: [204] },
        { name: "CONNECT", request: "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", statuses: [404] },
        { name: "HTTP/2's prior-knowledge preface", request: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", statuses: [400] },
        { name: "an unknown Expect", request: `GET /api/v1/domains?limit=250 HTTP/1.1\r\nHost: x\r\nExpect: tea\r\nConnection: close\r\n${key(pro)}\r\n`, statuses: [200, 429], caller: pro },
        { name: "an Upgrade to h2c", request: `GET /api/v1/domains?limit=250 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n${key(pro)}\r\n`, statuses: [200, 429], caller: pro },
        { name: "a half-closed request", request: list(pro), statuses: [200, 429], caller: pro, halfClose: true },
        { name: "a half-closed reveal", request: `POST /api/v1/domains/${canary.fresh.id}/reveal HTTP/1.1\r\nHost: x\r\n${key(pro)}Content-Length: 0\r\n\r\n`, statuses: [404, 429], caller: pro, halfClose: true },
        { name: "a body cut short by a half-close", request: `DELETE /api/v1/holds/${holdId} HTTP/1.1\r\nHost: x\r\n${key(pro)}Content-Type: application/json\r\nContent-Length: 50\r\n\r\n{"outcome"`, statuses: [400], caller: pro, counted: false, halfClose: true },
        { name: "headers cut short by a half-close", request: `GET /api/v1/me HTTP/1.1\r\nHost: x\r\n${key(pro)}X-Half: `, statuses: [400], caller: pro, counted: false, halfClose: true }
      ]
      for (const { caller, counted = true, halfClose, name, request, statuses, trickle } of cases) {
        const check = (answer: RawAnswer | undefined) =>
          expectSound(answer, { label: name, method: request.split(" ")[0]!, presented: { header: undefined, caller }, counted, statuses: new Set(statuses) })
        if (halfClose === true) await halfClosed(request, check)
        else check(await rawExchange(server.base, request, { trickle }))
      }
    })

    it("answers requests with bytes inserted, removed or replaced, in the envelope when it refuses", async () => {
      const pro = rawCallers[2]!
      const templates = [
        `GET /api/v1/domains?limit=250&q=coffee HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${pro.secret}\r\n\r\n`,
        `GET /api/v1/domains/${canary.regular.id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${pro.secret}\r\n\r\n`,
        `DELETE /api/v1/holds/${holdId} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${pro.secret}\r\nContent-Type: application/json\r\nContent-Length: 22\r\n\r\n{"outcome":"released"}`,
        `POST /api/v1/domains/${canary.held.id}/hold HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${pro.secret}\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`
      ]
      const edit = fc.record({ at: fc.nat(), kind: fc.constantFrom("insert", "remove", "replace"), byte: fc.integer({ min: 0, max: 255 }), length: fc.integer({ min: 1, max: 6 }) })
      const everyStatus = new Set([200, 204, ...Object.values<any>(spec.paths).flatMap((item) => Object.values<any>(item).flatMap((operation) => Object.keys(operation.responses).map(Number)))])
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...templates), fc.array(edit, { minLength: 1, maxLength: 3 }), async (template, edits) => {
          let bytes = Buffer.from(template, "latin1")
          for (const { at, byte, kind, length } of edits) {
            const index = at % (bytes.length + 1)
            const inserted = Buffer.alloc(length, byte)
            bytes = kind === "insert"
              ? Buffer.concat([bytes.subarray(0, index), inserted, bytes.subarray(index)])
              : kind === "remove"
              ? Buffer.concat([bytes.subarray(0, index), bytes.subarray(index + length)])
              : Buffer.concat([bytes.subarray(0, index), inserted, bytes.subarray(index + length)])
          }
          // Half-closed, so a request left incomplete ends at once instead of waiting for the deadline.
          await halfClosed(bytes, (answer) =>
            expectSound(answer, {
              label: JSON.stringify(bytes.toString("latin1").slice(0, 300)),
              method: bytes.toString("latin1").split(" ")[0]!,
              // The key may not have survived the edits: only the name check applies as for the key's caller.
              presented: { header: undefined, caller: pro },
              counted: false,
              statuses: everyStatus
            }))
        }),
        { numRuns: 40, seed: SEED }
      )
    })
  })
}
