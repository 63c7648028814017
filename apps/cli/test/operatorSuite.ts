import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { tmpdir } from "node:os"
import { expectOneLineFailure, killStragglers, run, runJson, type Running, type RunOptions, serve, type Target } from "./support.ts"

/*
 * The Operator interface table of product.md, checked from outside: every command run as a
 * child process, its `--json` document, its exit code, and its one-line refusals. Each storage
 * calls this suite from its own test file, so the two run in parallel.
 */

const listing = (fields: Record<string, unknown>) => JSON.stringify({ tier: "regular", ...fields })

/** Each test runs several CLI processes of a few seconds each; a loaded machine needs the slack. */
const TIMEOUT = { timeout: 240_000 }

export const operatorSuite = (
  name: string,
  make: () => Promise<Target>,
  /** Another way in than Node 24 on the launcher (the bundle of `npm run build`), named by `through`. */
  via?: RunOptions["via"] & { readonly through: string },
  /**
   * Run every command beside a `dropshelf serve` of the same storage, started before the first
   * test: the results and exit codes must be those of the stopped case.
   */
  options: { readonly besideServer?: boolean } = {}
) => describe(`dropshelf on ${name} storage${via === undefined ? "" : ` through ${via.through}`}${options.besideServer === true ? " beside a running server" : ""}`, TIMEOUT, () => {
  let target: Target
  let server: Running | undefined
  let port = 0
  const on = (): RunOptions => (via === undefined ? { env: target.env } : { env: target.env, via })
  const beside = options.besideServer === true

  beforeAll(async () => {
    target = await make()
    if (beside) {
      const started = await serve(on())
      server = started.server
      port = started.port
    }
  })
  afterEach(() => killStragglers(server === undefined ? [] : [server.child]))
  afterAll(async () => {
    if (server !== undefined) expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    await target.dispose()
  })

  it(beside ? "migrate beside the server: it migrated the storage when it started, so nothing is left to apply" : "migrate applies the migrations once, then has nothing to apply", async () => {
    if (beside) {
      expect(await runJson(["migrate"], on())).toEqual({ applied: [] })
    } else {
      const first = await runJson(["migrate"], on())
      expect(first.applied.length).toBeGreaterThan(0)
      expect(first.applied.every((name: unknown) => typeof name === "string")).toBe(true)
    }
    expect(await runJson(["migrate"], on())).toEqual({ applied: [] })
  })

  it("accounts: create and set-plan (lapsed included), refusals as one line", async () => {
    const account = await runJson(["accounts", "create", "--name", "acme", "--plan", "pro"], on())
    expect(Object.keys(account).sort()).toEqual(["id", "plan"])
    expect(account.plan).toBe("pro")
    expect(typeof account.id).toBe("string")

    expect(await runJson(["accounts", "set-plan", account.id, "lapsed"], on())).toEqual({ id: account.id, plan: "lapsed" })
    expect(await runJson(["accounts", "set-plan", account.id, "business"], on())).toEqual({ id: account.id, plan: "business" })

    expectOneLineFailure(await run(["accounts", "set-plan", "acct_nope", "free", "--json"], on()), 1, /^dropshelf: no account with id "acct_nope"$/)
    expectOneLineFailure(await run(["accounts", "create", "--name", "x", "--plan", "gold", "--json"], on()), 2, /--plan/)
    expectOneLineFailure(await run(["accounts", "create", "--plan", "free"], on()), 2, /--name/)
  })

  it("accounts: an owner email at creation or later, unique case aside, refusals as one line", async () => {
    const owned = await runJson(["accounts", "create", "--name", "owned", "--plan", "free", "--email", "Owner@Example.com"], on())
    expect(owned).toEqual({ id: expect.any(String), plan: "free", email: "Owner@Example.com" })
    const other = await runJson(["accounts", "create", "--name", "other", "--plan", "pro"], on())
    expect(await runJson(["accounts", "set-email", other.id, " other@example.com "], on())).toEqual({ id: other.id, email: "other@example.com" })
    expect((await runJson(["accounts", "show", other.id], on())).email).toBe("other@example.com")

    expectOneLineFailure(
      await run(["accounts", "set-email", other.id, "owner@EXAMPLE.com", "--json"], on()),
      1,
      /^dropshelf: another account already has the email "owner@EXAMPLE.com"$/
    )
    expectOneLineFailure(
      await run(["accounts", "create", "--name", "copy", "--plan", "free", "--email", "OWNER@example.com", "--json"], on()),
      1,
      /^dropshelf: another account already has the email "OWNER@example.com"$/
    )
    expectOneLineFailure(await run(["accounts", "set-email", other.id, "not-an-address", "--json"], on()), 2, /^dropshelf: email must be an email address/)
    expectOneLineFailure(await run(["accounts", "set-email", "acct_nope", "x@example.com", "--json"], on()), 1, /^dropshelf: no account with id "acct_nope"$/)
    expect((await run(["accounts", "set-email", "--help"])).stdout).toMatch(/unique among accounts/)
  })

  it("accounts sign-in-link: a one-time link at DROPSHELF_PUBLIC_URL or this server's address, refusals as one line", async () => {
    const account = await runJson(["accounts", "create", "--name", "person", "--plan", "pro"], on())
    const before = Date.now()
    const link = await runJson(["accounts", "sign-in-link", account.id], on())
    expect(Object.keys(link).sort()).toEqual(["expires_at", "url"])
    expect(link.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/signin\?token=dsl_[A-Za-z0-9_-]{43}$/)
    const lifetime = Date.parse(link.expires_at) - before
    expect(lifetime).toBeGreaterThan(14 * 60_000)
    expect(lifetime).toBeLessThanOrEqual(15 * 60_000 + 60_000)
    const again = await runJson(["accounts", "sign-in-link", account.id], on())
    expect(again.url).not.toBe(link.url)

    const published = { ...on(), env: { ...on().env, DROPSHELF_PUBLIC_URL: "https://shelf.example.com/" } }
    expect((await runJson(["accounts", "sign-in-link", account.id], published)).url).toMatch(/^https:\/\/shelf\.example\.com\/signin\?token=dsl_/)
    const text = await run(["accounts", "sign-in-link", account.id], published)
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/usable once until .*\nhttps:\/\/shelf\.example\.com\/signin\?token=dsl_/)

    expectOneLineFailure(await run(["accounts", "sign-in-link", "acct_nope", "--json"], on()), 1, /^dropshelf: no account with id "acct_nope"$/)
    const badOrigin = { ...on(), env: { ...on().env, DROPSHELF_PUBLIC_URL: "https://shelf.example.com/app" } }
    expectOneLineFailure(await run(["accounts", "sign-in-link", account.id, "--json"], badOrigin), 2, /DROPSHELF_PUBLIC_URL is more than an origin/)
  })

  it("watches list: an account's watches, none at first; an unknown account refused as one line", async () => {
    const account = await runJson(["accounts", "create", "--name", "watcher", "--plan", "pro"], on())
    // The document REST answers for GET /api/v1/watches.
    expect(await runJson(["watches", "list", account.id], on())).toEqual({ data: [] })
    expectOneLineFailure(await run(["watches", "list", "acct_nope", "--json"], on()), 1, /^dropshelf: no account with id "acct_nope"$/)
  })

  it("keys: created with the secret once, the plan's live-key ceiling refused, revoke frees a slot", async () => {
    const account = await runJson(["accounts", "create", "--name", "ceiling", "--plan", "free"], on())
    const first = await runJson(["keys", "create", account.id, "--name", "one"], on())
    expect(Object.keys(first).sort()).toEqual(["key", "name", "prefix"])
    expect(first.name).toBe("one")
    expect(first.key.startsWith(first.prefix)).toBe(true)
    expect(first.key).toMatch(/^dsk_[0-9A-Za-z]{49}$/)
    const second = await runJson(["keys", "create", account.id, "--name", "two"], on())
    expect(second.key).not.toBe(first.key)

    expectOneLineFailure(
      await run(["keys", "create", account.id, "--name", "three", "--json"], on()),
      1,
      /^dropshelf: the account already has 2 live keys, the most its plan allows; revoke one first$/
    )

    expect(await runJson(["keys", "revoke", first.prefix], on())).toEqual({ revoked: first.prefix })
    const third = await runJson(["keys", "create", account.id, "--name", "three"], on())
    expect(third.name).toBe("three")

    expectOneLineFailure(await run(["keys", "revoke", "ds_live_nothere", "--json"], on()), 1, /^dropshelf: no key with prefix "ds_live_nothere"$/)
    expectOneLineFailure(await run(["keys", "create", "acct_nope", "--name", "x", "--json"], on()), 1, /^dropshelf: no account with id "acct_nope"$/)
  })

  it("the operator's view: accounts, keys with expiry and rotation, holds, reveals and listings, paged, never a secret", async () => {
    const made = []
    for (const name of ["view-a", "view-b", "view-c"]) made.push(await runJson(["accounts", "create", "--name", name, "--plan", "free"], on()))
    const page = await runJson(["accounts", "list", "--after", made[0].id, "--limit", "1"], on())
    expect(page).toEqual({ data: [expect.objectContaining({ id: made[1].id, name: "view-b", plan: "free", reads_as: "free" })], next: made[1].id })
    const rest = await runJson(["accounts", "list", "--after", page.next, "--limit", "10"], on())
    expect(rest.data.map((account: { id: string }) => account.id)).toEqual([made[2].id])
    expect(rest.next).toBe(null)

    const account = made[0]
    const before = Date.now()
    const expiring = await runJson(["keys", "create", account.id, "--name", "ci", "--expires-in", "90d"], on())
    expect(Date.parse(expiring.expires_at) - before).toBeGreaterThanOrEqual(90 * 86_400_000 - 60_000)
    const lasting = await runJson(["keys", "create", account.id, "--name", "laptop"], on())
    // The account is at its ceiling of two, and the rotated key makes room for its successor.
    const rotated = await runJson(["keys", "rotate", lasting.prefix, "--grace", "1h"], on())
    expect(rotated).toEqual({ key: expect.stringMatching(/^dsk_/), prefix: expect.any(String), name: "laptop", retired: lasting.prefix, retires_at: expect.any(String) })
    expect(Date.parse(rotated.retires_at) - Date.now()).toBeLessThanOrEqual(3_600_000)
    expect(Date.parse(rotated.retires_at) - before).toBeGreaterThan(3_500_000)

    const keys = await runJson(["keys", "list", account.id], on())
    expect(keys.next).toBe(null)
    expect(keys.data.map((key: { prefix: string; state: string; name: string }) => [key.prefix, key.name, key.state])).toEqual([
      [expiring.prefix, "ci", "live"],
      [lasting.prefix, "laptop", "live"],
      [rotated.prefix, "laptop", "live"]
    ])
    for (const key of keys.data) {
      expect(Object.keys(key).sort()).toEqual(["application", "created_at", "expires_at", "id", "last_used_at", "name", "prefix", "revoked_at", "state"])
      expect(key.application).toBeNull()
    }
    expect(JSON.stringify(keys)).not.toContain(expiring.key)
    expect(await runJson(["keys", "list", account.id, "--after", keys.data[1].id], on())).toEqual({ data: [keys.data[2]], next: null })

    const shown = await runJson(["accounts", "show", account.id], on())
    expect(shown).toEqual(expect.objectContaining({
      id: account.id,
      plan: "free",
      keys: keys.data,
      reveals_this_month: { month: new Date().toISOString().slice(0, 7), used: 0, limit: 10 },
      running_holds: []
    }))
    const human = await run(["accounts", "show", account.id], on())
    expect(human.code).toBe(0)
    expect(human.stdout).toContain(rotated.prefix)
    expect(human.stdout).not.toContain(rotated.key)

    expect(await runJson(["holds", "list", "--account", account.id, "--state", "running"], on())).toEqual({ data: [], next: null })
    expect(await runJson(["reveals", "list", account.id, "--month", "2026-01"], on())).toEqual({ data: [], next: null })

    await runJson(["import", "-"], { ...on(), input: listing({ id: "viewAAA1", domain: "quiet-harbor.com", tier: "featured", estimated_value_cents: 123_456, backlinks: 4321 }) + "\n" })
    const listingShown = await runJson(["listings", "show", "viewAAA1"], on())
    expect(listingShown.stored).toEqual(expect.objectContaining({ domain: "quiet-harbor.com", estimated_value_cents: 123_456, backlinks: 4321 }))
    expect(listingShown.published).toEqual(expect.objectContaining({ id: "viewAAA1", estimated_value_cents: 123_456 }))
    expect(listingShown.published.backlinks).not.toBe(4321)
    expect(listingShown.plans.free).toEqual(expect.objectContaining({ can_reveal: false, reveal_charged: true }))
    expect(listingShown.plans.business).toEqual(expect.objectContaining({ can_reveal: true, reveal_charged: false }))

    expectOneLineFailure(await run(["accounts", "show", "acct_nope", "--json"], on()), 1, /^dropshelf: no account with id "acct_nope"$/)
    expectOneLineFailure(await run(["reveals", "list", "acct_nope", "--json"], on()), 1, /^dropshelf: no account with id "acct_nope"$/)
    expectOneLineFailure(await run(["listings", "show", "zzzzzzz9", "--json"], on()), 1, /^dropshelf: no listing with id "zzzzzzz9"$/)
    expectOneLineFailure(await run(["keys", "rotate", "dsk_nothere0", "--json"], on()), 1, /^dropshelf: no key with prefix "dsk_nothere0"$/)
    expectOneLineFailure(await run(["keys", "create", account.id, "--name", "x", "--expires-in", "90x", "--json"], on()), 2, /--expires-in/)
    expectOneLineFailure(await run(["accounts", "list", "--limit", "0", "--json"], on()), 2, /--limit/)
    expectOneLineFailure(await run(["reveals", "list", account.id, "--month", "2026-13", "--json"], on()), 2, /--month|YYYY-MM/)
  })

  it("import: good lines load, bad lines are rejected with their number and reason, re-import updates", async () => {
    const file = join(tmpdir(), `dropshelf-import-${process.pid}-${Date.now()}.ndjson`)
    writeFileSync(file, [
      listing({ id: "impAAAA1", domain: "greenleaf-garden.com", estimated_value_cents: 12_000, tags: ["garden"] }),
      "{not json",
      "",
      listing({ domain: "no-id-given.io", tier: "open" }),
      listing({ id: "impAAAA2", domain: "Upper.com" }),
      listing({ id: "impAAAA3", domain: "atlas-notes.co.uk", tier: "featured", featured_rank: 4, agent_citability: { score: 40, sources: ["x"] } }),
      listing({ id: "impAAAA4", domain: "ok.com", surprise: true }),
      listing({ id: "impAAAA1", domain: "greenleaf-garden.com", estimated_value_cents: 13_000 }),
      // Over what an integer column holds: refused with its line, not a failed batch.
      listing({ id: "impAAAA5", domain: "very-old-name.com", age_years: 3_000_000_000 })
    ].join("\n") + "\n")

    // Rejected lines: the good ones load, the report is still the one document on stdout, and
    // the exit code is 1 with one line on stderr, so a script notices.
    const withRejections = await run(["import", file, "--json"], on())
    expect(withRejections.code).toBe(1)
    expect(withRejections.stderr.trim().split("\n")).toEqual([
      "dropshelf: 4 line(s) rejected (the report on stdout names them); the other lines were loaded"
    ])
    expect(withRejections.stdout.trim().split("\n")).toHaveLength(1)
    const report = JSON.parse(withRejections.stdout)
    expect(Object.keys(report).sort()).toEqual(["inserted", "rejected", "updated"])
    // Line 8 repeats line 1's id: the later line wins, as an update of the row line 1 inserted.
    expect(report.inserted).toBe(3)
    expect(report.updated).toBe(1)
    expect(report.rejected.map((rejection: { line: number }) => rejection.line)).toEqual([2, 5, 7, 9])
    for (const rejection of report.rejected) {
      expect(Object.keys(rejection).sort()).toEqual(["error", "line"])
      expect(rejection.error).not.toContain("\n")
      expect(rejection.error.length).toBeGreaterThan(0)
    }
    expect(report.rejected[0].error).toMatch(/JSON/)
    expect(report.rejected[1].error).toMatch(/domain/)
    expect(report.rejected[3].error).toMatch(/age_years/)

    const again = await runJson(["import", "-"], { ...on(), input: listing({ id: "impAAAA3", domain: "atlas-notes.co.uk", tier: "open" }) + "\n" })
    expect(again).toEqual({ inserted: 0, updated: 1, rejected: [] })

    const windows = await runJson(["import", "-"], {
      ...on(),
      input: "\uFEFF" + listing({ id: "impAAAA5", domain: "saved-on-windows.com" }) + "\r\n" + listing({ id: "impAAAA6", domain: "crlf-lines.net" }) + "\r\n"
    })
    expect(windows).toEqual({ inserted: 2, updated: 0, rejected: [] })

    const human = await run(["import", file], on())
    expect(human.code).toBe(1)
    expect(human.stdout).toMatch(/line 2: /)
    expect(human.stderr.trim()).toBe("dropshelf: 4 line(s) rejected (the report on stdout names them); the other lines were loaded")

    expectOneLineFailure(await run(["import", join(tmpdir(), "no-such-file.ndjson"), "--json"], on()), 2, /no such file/)
    expectOneLineFailure(await run(["import", "--json"], on()), 2, /file/)
  })

  it("delist: listings leave the directory once, with a reason", async () => {
    await runJson(["import", "-"], {
      ...on(),
      input: [listing({ id: "delBBBB1", domain: "sold-soon.com" }), listing({ id: "delBBBB2", domain: "blocked-soon.net" })].join("\n")
    })
    expect(await runJson(["delist", "delBBBB1", "--reason", "sold"], on())).toEqual({ delisted: ["delBBBB1"] })
    const both = await runJson(["delist", "delBBBB1", "delBBBB2", "zzzzzzz9"], on())
    expect(both).toEqual({ delisted: ["delBBBB2"] })
    expectOneLineFailure(await run(["delist", "delBBBB2", "--reason", "gone", "--json"], on()), 2, /--reason/)
    expectOneLineFailure(await run(["delist", "bad", "--json"], on()), 2, /listing id/)
  })

  it("masks backfill reports how many rows it changed", async () => {
    const result = await runJson(["masks", "backfill"], on())
    expect(Object.keys(result)).toEqual(["updated"])
    expect(Number.isInteger(result.updated)).toBe(true)
    // Imports compute the mask already, so nothing is left to fill.
    expect(await runJson(["masks", "backfill"], on())).toEqual({ updated: 0 })
  })

  it("seed adds a deterministic directory: the same seed again inserts nothing new", async () => {
    expect(await runJson(["seed", "--listings", "300", "--seed", "7"], on())).toEqual({ inserted: 300 })
    expect(await runJson(["seed", "--listings", "300", "--seed", "7"], on())).toEqual({ inserted: 0 })
    expect(await runJson(["seed", "--listings", "20", "--seed", "8"], on())).toEqual({ inserted: 20 })
    expectOneLineFailure(await run(["seed", "--json"], on()), 2, /--listings/)
    expectOneLineFailure(await run(["seed", "--listings", "-1", "--json"], on()), 2, /--listings/)
  })

  // Each mode registers only its own tests, so a run skips nothing it was not told to.
  if (!beside) it("serve answers until SIGTERM, logging each request on stdout, then exits 0; meanwhile commands run beside it, and a second server on the embedded directory is refused", async () => {
    const { server, port } = await serve(on())
    try {
      const health = await fetch(`http://127.0.0.1:${port}/healthz`)
      expect(health.status).toBe(200)
      expect(await runJson(["migrate"], on())).toEqual({ applied: [] })
      if (target.embedded) {
        const second = await run(["serve", "--port", "0"], on())
        expectOneLineFailure(second, 3, new RegExp(`in use by process ${server.child.pid}`))
      }
    } finally {
      const exit = await server.stop("SIGTERM")
      expect(exit).toEqual({ code: 0, signal: null })
    }
    // Its access log is on stdout, one JSON line per request.
    const logged = server.stdout().trimEnd().split("\n").map((line) => JSON.parse(line))
    expect(logged).toContainEqual(expect.objectContaining({
      level: "INFO",
      annotations: expect.objectContaining({ method: "GET", path: "/healthz", status: 200 })
    }))
    // The lock went with the process.
    expect(await runJson(["migrate"], on())).toEqual({ applied: [] })
  })

  if (beside) it("a key created beside the server authenticates on it at once, and is refused once revoked there", async () => {
    const account = await runJson(["accounts", "create", "--name", "beside", "--plan", "business"], on())
    const { key, prefix } = await runJson(["keys", "create", account.id, "--name", "beside"], on())
    const list = () => fetch(`http://127.0.0.1:${port}/api/v1/domains?limit=1`, { headers: { authorization: `Bearer ${key}` } })
    expect((await list()).status).toBe(200)
    expect(await runJson(["keys", "revoke", prefix], on())).toEqual({ revoked: prefix })
    expect((await list()).status).toBe(401)
  })

  if (beside) it("a server killed without cleaning up leaves its lock and socket: the next command opens the directory itself", async () => {
    const killed = server!
    server = undefined
    expect(await killed.stop("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" })
    const dataDir = target.env.DROPSHELF_DATA_DIR!
    expect(existsSync(join(dataDir, "dropshelf.lock"))).toBe(true)
    expect(existsSync(join(dataDir, "dropshelf.sock"))).toBe(true)
    const account = await runJson(["accounts", "create", "--name", "after-crash", "--plan", "pro"], on())
    expect(account.plan).toBe("pro")
    expect(await runJson(["accounts", "set-plan", account.id, "free"], on())).toEqual({ id: account.id, plan: "free" })
  })
})
