import {
  AccountStore,
  ApiKey,
  AvailabilityCheck,
  Cursor,
  Directory,
  Errors,
  Hold,
  HoldStore,
  Idempotency,
  IdempotencyStore,
  type Ids,
  Keyset,
  Listing,
  ListingFilter,
  ListingStore,
  ListQuery,
  Operators,
  RateLimiter,
  RevealStore,
  type RevealLedger,
  KeyStore,
  WatchStore
} from "@dropshelf/core"
import { Clock, Context, Effect, Layer, Result } from "effect"
import { Digest, Mac, SecureRandom } from "effect/crypto"
import * as WatchMemory from "./WatchMemory.ts"

/*
 * The in-memory adapter. Each operation runs as one synchronous step, so on one JS thread
 * every check-then-write is atomic, the property the SQL adapter gets from transactions.
 * The listing store reads the hold and reveal stores' state directly, so a page answers for
 * its reader exactly as those stores would at the same step.
 */

type ListingRecord = Listing.ListingRecord
type HoldRecord = Hold.HoldRecord
type KeyRecord = KeyStore.KeyRecord
type AccountRecord = AccountStore.AccountRecord

/** How far `synced_at` trails the clock, as in the spec. */
export const SYNC_LAG_MS = 120_000

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** What a page reads of the hold and reveal stores' state, to answer for its reader. */
interface ReaderState {
  readonly runningOn: (listingIds: ReadonlyArray<string>, at: number) => ReadonlyMap<string, HoldRecord>
  readonly revealedAmong: (accountId: string, listingIds: ReadonlyArray<string>) => ReadonlySet<string>
  /** Told of every write of a listing row, in the same step (the watch store's change events). */
  readonly written: (before: ListingRecord | undefined, after: ListingRecord) => void
}

const makeListingStore = (state: ReaderState, rows: Map<string, ListingRecord>) => Effect.gen(function*() {
  const now = Clock.currentTimeMillis

  const afterPosition = (position: Cursor.CursorPosition | undefined) => (row: ListingRecord): boolean => {
    if (position === undefined) return true
    if (position.order === "id") return row.id > position.id
    return row.discoveredAt < position.discoveredAt ||
      (row.discoveredAt === position.discoveredAt && row.id > position.id)
  }

  const page = (request: ListingStore.PageRequest) =>
    Effect.sync((): ListingStore.PageResult => {
      const isInRun = request.since === undefined
        ? (row: ListingRecord) => row.status === "active"
        : (row: ListingRecord) =>
          row.updatedAt >= request.since! && (row.status === "active" || Listing.isTombstone(row.status))
      const after = afterPosition(request.after)
      const matching = [...rows.values()].filter((row) =>
        isInRun(row) && row.discoveredAt <= request.visibleBefore && after(row) &&
        (row.status !== "active" || ListingFilter.matchesFilters(row, request.filters, request.now))
      )
      matching.sort(request.order === "id"
        ? (a, b) => compareIds(a.id, b.id)
        : (a, b) => b.discoveredAt - a.discoveredAt || compareIds(a.id, b.id))
      const page = matching.slice(0, request.limit)
      const ids = page.map((row) => row.id)
      const { after: anchor, reader } = request
      return {
        rows: page,
        hasMore: matching.length > request.limit,
        running: state.runningOn(ids, reader.at),
        revealed: reader.revealsOf === undefined ? new Set() : state.revealedAmong(reader.revealsOf, ids),
        anchorExists: anchor === undefined || rows.has(anchor.id)
      }
    })

  /** The rows as they are at the call (records are never mutated, only replaced), handed over chunk by chunk. */
  const snapshot = (request: ListingStore.SnapshotRequest, emit: (chunk: ListingStore.SnapshotChunk) => Effect.Effect<void>) =>
    Effect.gen(function*() {
      const visible = [...rows.values()].filter((row) => row.status === "active" && row.discoveredAt <= request.visibleBefore)
      const { reader } = request
      for (let start = 0; start < visible.length; start += request.chunkSize) {
        const chunk = visible.slice(start, start + request.chunkSize)
        const ids = chunk.map((row) => row.id)
        yield* emit({
          rows: chunk,
          running: state.runningOn(ids, reader.at),
          revealed: reader.revealsOf === undefined ? new Set() : state.revealedAmong(reader.revealsOf, ids)
        })
      }
    })

  const upsert = (batch: ReadonlyArray<ListingStore.ListingInput>) =>
    Effect.map(now, (at) => {
      let inserted = 0
      let updated = 0
      for (const input of batch) {
        const existing = rows.get(input.id)
        if (existing === undefined) inserted++
        else updated++
        const written = { ...input, discoveredAt: existing?.discoveredAt ?? input.discoveredAt, updatedAt: at }
        rows.set(input.id, written)
        state.written(existing, written)
      }
      return { inserted, updated }
    })

  const codesOf = (field: ListingStore.CodeField): Set<string> => {
    const known = new Set<string>()
    for (const row of rows.values()) {
      const code = row[field]
      if (row.status === "active" && code !== null) known.add(code)
    }
    return known
  }

  const delist = (ids: ReadonlyArray<Ids.ListingId>, reason: Listing.DelistReason) =>
    Effect.map(now, (at) => {
      const changed: Array<Ids.ListingId> = []
      for (const id of new Set(ids)) {
        const row = rows.get(id)
        if (row === undefined || row.status === "sold" || row.status === "delisted") continue
        const written = { ...row, status: reason, updatedAt: at }
        rows.set(id, written)
        state.written(row, written)
        changed.push(id)
      }
      return changed as ReadonlyArray<Ids.ListingId>
    })

  return ListingStore.ListingStore.of({
    page,
    snapshot,
    find: (id) => Effect.sync(() => rows.get(id)),
    findForReader: (id, reader) =>
      Effect.sync(() => {
        const listing = rows.get(id)
        if (listing === undefined) return undefined
        return {
          listing,
          running: state.runningOn([id], reader.at).get(id),
          revealed: reader.revealsOf !== undefined && state.revealedAmong(reader.revealsOf, [id]).has(id)
        }
      }),
    unknownCodes: (field, codes) =>
      Effect.sync(() => {
        const known = codesOf(field)
        return codes.filter((code) => !known.has(code))
      }),
    knownCodes: (field, from, limit) =>
      Effect.sync(() => [...codesOf(field)].filter((code) => code >= from).sort().slice(0, limit)),
    syncedAt: Effect.map(now, (at) => at - SYNC_LAG_MS),
    upsert,
    delist,
    pruneTombstones: (before) =>
      Effect.sync(() => {
        let pruned = 0
        for (const row of [...rows.values()]) {
          if (Listing.isTombstone(row.status) && row.updatedAt < before) {
            rows.delete(row.id)
            pruned++
          }
        }
        return pruned
      }),
    stampAvailability: (id, checkedAt) =>
      Effect.map(now, (at) => {
        const row = rows.get(id)
        if (row === undefined) return undefined
        const stamped = { ...row, availabilityCheckedAt: checkedAt, updatedAt: at }
        rows.set(id, stamped)
        state.written(row, stamped)
        return stamped
      }),
    backfillMasks: (mask) =>
      Effect.map(now, (at) => {
        let changed = 0
        for (const row of rows.values()) {
          if (row.maskHint !== null) continue
          const written = { ...row, maskHint: mask(row.domain), updatedAt: at }
          rows.set(row.id, written)
          state.written(row, written)
          changed++
        }
        return changed
      })
  })
})

const makeRevealStore = Effect.sync(() => {
  const entries = new Map<string, RevealLedger.RevealEntry>()
  const usage = new Map<string, number>()
  const entryKey = (accountId: string, listingId: string) => `${accountId}\u0000${listingId}`
  const usageKey = (accountId: string, month: string) => `${accountId}\u0000${month}`

  const revealedAmong = (accountId: string, listingIds: ReadonlyArray<string>): ReadonlySet<string> =>
    new Set(listingIds.filter((id) => entries.has(entryKey(accountId, id))))

  const store = RevealStore.RevealStore.of({
    find: (accountId, listingId) => Effect.sync(() => entries.get(entryKey(accountId, listingId))),
    revealedAmong: (accountId, listingIds) => Effect.sync(() => revealedAmong(accountId, listingIds)),
    record: (request) =>
      Effect.sync((): RevealStore.RecordOutcome => {
        const key = entryKey(request.accountId, request.listingId)
        const existing = entries.get(key)
        if (existing !== undefined) return { _tag: "Recorded", entry: existing, fresh: false }
        if (request.charge !== undefined) {
          const counter = usageKey(request.accountId, request.charge.month)
          const used = usage.get(counter) ?? 0
          if (used >= request.charge.limit) return { _tag: "AllowanceSpent" }
          usage.set(counter, used + 1)
        }
        const entry = {
          accountId: request.accountId,
          listingId: request.listingId,
          revealedAt: request.at,
          charged: request.charge !== undefined
        }
        entries.set(key, entry)
        return { _tag: "Recorded", entry, fresh: true }
      }),
    usedIn: (accountId, month) => Effect.sync(() => usage.get(usageKey(accountId, month)) ?? 0),
    forAccount: (accountId, range, page) =>
      Effect.sync(() => {
        const rows = [...entries.values()]
          .filter((entry) =>
            entry.accountId === accountId &&
            (range.from === undefined || entry.revealedAt >= range.from) &&
            (range.to === undefined || entry.revealedAt < range.to)
          )
          .sort((a, b) => a.revealedAt - b.revealedAt || compareIds(a.listingId, b.listingId))
        return Keyset.window(rows, page, (entry) => entry.listingId)
      })
  })
  return { store, revealedAmong }
})

const makeHoldStore = Effect.sync(() => {
  const holds = new Map<string, HoldRecord>()
  let sequence = 0

  const all = () => [...holds.values()]
  const runningOnListing = (listingId: string, now: number) =>
    all().find((hold) => hold.listingId === listingId && Hold.isRunningAt(hold, now))

  const own = (accountId: string, holdId: string) => {
    const hold = holds.get(holdId)
    return hold !== undefined && hold.accountId === accountId ? hold : undefined
  }

  const runningOn = (listingIds: ReadonlyArray<string>, now: number): ReadonlyMap<string, HoldRecord> => {
    const wanted = new Set(listingIds)
    const running = new Map<string, HoldRecord>()
    for (const hold of holds.values()) {
      if (wanted.has(hold.listingId) && Hold.isRunningAt(hold, now)) running.set(hold.listingId, hold)
    }
    return running
  }

  const store = HoldStore.HoldStore.of({
    acquire: (request) =>
      Effect.suspend((): Effect.Effect<
        { readonly hold: HoldRecord; readonly created: boolean },
        Errors.HeldByOther | Errors.HoldCapReached | Errors.HoldCooldown
      > => {
        const { accountId, listingId, now } = request
        const lastOwnHold = all()
          .filter((hold) => hold.accountId === accountId && hold.listingId === listingId && !Hold.isRunningAt(hold, now))
          .sort((a, b) => (Hold.endedAt(b, now) ?? 0) - (Hold.endedAt(a, now) ?? 0))[0]
        const decision = Hold.decideAcquire({
          accountId,
          plan: request.plan,
          now,
          runningOnListing: runningOnListing(listingId, now),
          accountRunning: all().filter((hold) => hold.accountId === accountId && Hold.isRunningAt(hold, now)).length,
          lastOwnHold
        })
        if (Result.isFailure(decision)) return Effect.fail(decision.failure)
        if (decision.success._tag === "Existing") return Effect.succeed({ hold: decision.success.hold, created: false })
        const hold: HoldRecord = {
          id: (request.id ?? `h_${(++sequence).toString(36).padStart(8, "0")}`) as Ids.HoldId,
          listingId,
          accountId,
          heldAt: decision.success.heldAt,
          expiresAt: decision.success.expiresAt,
          extended: false,
          endedAt: null,
          outcome: null
        }
        holds.set(hold.id, hold)
        return Effect.succeed({ hold, created: true })
      }),
    extend: (request) =>
      Effect.suspend((): Effect.Effect<HoldRecord, Errors.HoldNotFound | Errors.AlreadyExtended | Errors.HoldOver> => {
        const hold = own(request.accountId, request.holdId)
        if (hold === undefined) return Effect.fail(new Errors.HoldNotFound({ holdId: request.holdId }))
        const decision = Hold.decideExtend(hold, request.now, request.extensionMs)
        if (Result.isFailure(decision)) return Effect.fail(decision.failure)
        holds.set(hold.id, decision.success)
        return Effect.succeed(decision.success)
      }),
    end: (request) =>
      Effect.suspend((): Effect.Effect<HoldRecord, Errors.HoldNotFound | Errors.HoldOver> => {
        const hold = own(request.accountId, request.holdId)
        if (hold === undefined) return Effect.fail(new Errors.HoldNotFound({ holdId: request.holdId }))
        const decision = Hold.decideEnd(hold, request.now, request.outcome)
        if (Result.isFailure(decision)) return Effect.fail(decision.failure)
        holds.set(hold.id, decision.success)
        return Effect.succeed(decision.success)
      }),
    findOwn: (accountId, holdId) => Effect.sync(() => own(accountId, holdId)),
    runningOn: (listingIds, now) => Effect.sync(() => runningOn(listingIds, now)),
    forAccount: (accountId, endedSince, now) =>
      Effect.sync(() =>
        all()
          .filter((hold) => {
            if (hold.accountId !== accountId) return false
            const ended = Hold.endedAt(hold, now)
            return ended === null || ended >= endedSince
          })
          .sort((a, b) => b.heldAt - a.heldAt || compareIds(b.id, a.id))
      ),
    countRunning: (accountId, now) =>
      Effect.sync(() => all().filter((hold) => hold.accountId === accountId && Hold.isRunningAt(hold, now)).length),
    list: (filter, page) =>
      Effect.sync(() =>
        Keyset.window(
          all()
            .filter((hold) =>
              (filter.accountId === undefined || hold.accountId === filter.accountId) &&
              (filter.runningAt === undefined || Hold.isRunningAt(hold, filter.runningAt))
            )
            .sort((a, b) => a.heldAt - b.heldAt || compareIds(a.id, b.id)),
          page,
          (hold) => hold.id
        )
      )
  })
  return { store, runningOn }
})

/** Idempotency keys by account and key; each method is one synchronous step, so `begin` is atomic. */
const makeIdempotencyStore = Effect.sync(() => {
  const records = new Map<string, Idempotency.IdempotencyRecord>()
  const slot = (accountId: string, key: string) => `${accountId}\u0000${key}`
  const ownedBy = (run: IdempotencyStore.RunOf) => {
    const record = records.get(slot(run.accountId, run.key))
    return record !== undefined && record.startedAt === run.startedAt && record.outcome === null ? record : undefined
  }
  return IdempotencyStore.IdempotencyStore.of({
    begin: (request) =>
      Effect.sync(() => {
        const decision = Idempotency.decideBegin(records.get(slot(request.accountId, request.key)), request)
        if (decision._tag === "Run") {
          records.set(slot(request.accountId, request.key), {
            accountId: request.accountId,
            key: request.key,
            fingerprint: request.fingerprint,
            startedAt: request.now,
            outcome: null
          })
        }
        return decision
      }),
    complete: (run) =>
      Effect.sync(() => {
        const record = ownedBy(run)
        if (record === undefined) return false
        records.set(slot(run.accountId, run.key), { ...record, outcome: run.outcome })
        return true
      }),
    release: (run) =>
      Effect.sync(() => {
        if (ownedBy(run) !== undefined) records.delete(slot(run.accountId, run.key))
      }),
    find: (accountId, key) => Effect.sync(() => records.get(slot(accountId, key))),
    prune: (before) =>
      Effect.sync(() => {
        let pruned = 0
        for (const [name, record] of records) {
          if (record.startedAt < before) {
            records.delete(name)
            pruned++
          }
        }
        return pruned
      })
  })
})

const makeAccountsAndKeys = Effect.sync(() => {
  const accounts = new Map<string, AccountRecord>()
  const keys = new Map<string, KeyRecord>()
  let sequence = 0

  const accountStore = AccountStore.AccountStore.of({
    create: ({ at, name, plan }) =>
      Effect.sync(() => {
        const account: AccountRecord = { id: `acct_${(++sequence).toString(36).padStart(6, "0")}` as Ids.AccountId, name, plan, createdAt: at }
        accounts.set(account.id, account)
        return account
      }),
    setPlan: (id, plan) =>
      Effect.suspend(() => {
        const account = accounts.get(id)
        if (account === undefined) return Effect.fail(new Errors.AccountNotFound({ accountId: id }))
        const changed = { ...account, plan }
        accounts.set(id, changed)
        return Effect.succeed(changed)
      }),
    find: (id) => Effect.sync(() => accounts.get(id)),
    list: (page) =>
      Effect.sync(() =>
        Keyset.window(
          [...accounts.values()].sort((a, b) => a.createdAt - b.createdAt || compareIds(a.id, b.id)),
          page,
          (account) => account.id
        )
      )
  })

  const liveKeysOf = (accountId: string, at: number) =>
    [...keys.values()].filter((key) => key.accountId === accountId && ApiKey.isLiveAt(key, at))
  const insertKey = (accountId: string, fields: KeyStore.NewKey, at: number): KeyRecord => {
    const key: KeyRecord = {
      id: `key_${(++sequence).toString(36).padStart(6, "0")}` as Ids.KeyId,
      accountId,
      name: fields.name,
      prefix: fields.prefix,
      digest: fields.digest,
      createdAt: at,
      lastUsedAt: null,
      revokedAt: null,
      expiresAt: fields.expiresAt ?? null
    }
    keys.set(key.id, key)
    return key
  }
  const withAccount = (key: KeyRecord) => {
    const account = accounts.get(key.accountId)
    return account === undefined ? undefined : { key, account }
  }

  const keyStore = KeyStore.KeyStore.of({
    create: (request) =>
      Effect.suspend(() => {
        if (liveKeysOf(request.accountId, request.at).length >= request.liveLimit) {
          return Effect.fail(new Errors.KeyLimitReached({ limit: request.liveLimit }))
        }
        return Effect.succeed(insertKey(request.accountId, request, request.at))
      }),
    findByPrefix: (prefix) =>
      Effect.sync(() => {
        const key = [...keys.values()].find((candidate) => candidate.prefix === prefix)
        return key === undefined ? undefined : withAccount(key)
      }),
    forAccount: (accountId, page) =>
      Effect.sync(() =>
        Keyset.window(
          [...keys.values()].filter((key) => key.accountId === accountId).sort((a, b) => a.createdAt - b.createdAt || compareIds(a.id, b.id)),
          page,
          (key) => key.id
        )
      ),
    rotate: (request) =>
      Effect.suspend((): Effect.Effect<
        { readonly retired: KeyRecord; readonly successor: KeyRecord },
        Errors.KeyNotFound | Errors.KeyLimitReached
      > => {
        const old = [...keys.values()].find((candidate) => candidate.prefix === request.prefix)
        if (old === undefined || !ApiKey.isLiveAt(old, request.at)) return Effect.fail(new Errors.KeyNotFound({ prefix: request.prefix }))
        const others = liveKeysOf(old.accountId, request.at).filter((key) => key.id !== old.id)
        if (others.length >= request.liveLimit) return Effect.fail(new Errors.KeyLimitReached({ limit: request.liveLimit }))
        const successor = insertKey(old.accountId, request.successor, request.at)
        const retired: KeyRecord = { ...old, expiresAt: old.expiresAt === null ? request.retireAt : Math.min(old.expiresAt, request.retireAt) }
        keys.set(old.id, retired)
        return Effect.succeed({ retired, successor })
      }),
    findByDigest: (digest) =>
      Effect.sync(() => {
        for (const key of keys.values()) {
          if (key.digest === digest) return withAccount(key)
        }
        return undefined
      }),
    anyLiveWithPrefix: (start) =>
      Effect.sync(() => {
        for (const key of keys.values()) if (key.revokedAt === null && key.prefix.startsWith(start)) return true
        return false
      }),
    touch: (id, at) =>
      Effect.sync(() => {
        const key = keys.get(id)
        if (key !== undefined) keys.set(id, { ...key, lastUsedAt: at })
      }),
    revoke: (prefix, at) =>
      Effect.suspend(() => {
        const key = [...keys.values()].find((candidate) => candidate.prefix === prefix)
        if (key === undefined) return Effect.fail(new Errors.KeyNotFound({ prefix }))
        const revoked = key.revokedAt === null ? { ...key, revokedAt: at } : key
        keys.set(key.id, revoked)
        return Effect.succeed(revoked)
      })
  })
  return { accountStore, keyStore, planOf: (id: string) => accounts.get(id)?.plan }
})

/** The seven store ports, in memory, fresh for each build of the layer. */
export const layerStores = Layer.effectContext(
  Effect.gen(function*() {
    const { accountStore, keyStore, planOf } = yield* makeAccountsAndKeys
    const reveals = yield* makeRevealStore
    const holds = yield* makeHoldStore
    const idempotency = yield* makeIdempotencyStore
    const findListing = (id: string) => listingRows.get(id)
    const watches = WatchMemory.make({ planOf, findListing, allListings: () => listingRows.values() })
    const listingRows = new Map<string, ListingRecord>()
    const listings = yield* makeListingStore(
      { runningOn: holds.runningOn, revealedAmong: reveals.revealedAmong, written: watches.written },
      listingRows
    )
    return Context.make(ListingStore.ListingStore, listings).pipe(
      Context.add(WatchStore.WatchStore, watches.store),
      Context.add(RevealStore.RevealStore, reveals.store),
      Context.add(HoldStore.HoldStore, holds.store),
      Context.add(IdempotencyStore.IdempotencyStore, idempotency),
      Context.add(AccountStore.AccountStore, accountStore),
      Context.add(KeyStore.KeyStore, keyStore)
    )
  })
)

/** Every port in memory: the stores, an in-process rate limiter and the stamp-only availability check. */
export const layer = Layer.mergeAll(
  layerStores,
  RateLimiter.layerInProcess,
  AvailabilityCheck.AvailabilityCheck.layerStampOnly
)

/** Web Crypto for digests, MACs and secure randomness: available on Node, Deno, Bun and browsers. */
export const layerCrypto = Layer.mergeAll(Digest.layerWebCrypto, Mac.layerWebCrypto).pipe(
  Layer.provideMerge(SecureRandom.layerWebCrypto)
)

/** A cursor secret that lives as long as the layer: fine for one process. */
export const layerEphemeralCursorSecret = Layer.effect(
  Cursor.CursorSecret,
  Effect.gen(function*() {
    const random = yield* SecureRandom.SecureRandom
    return yield* random.randomBytes(32)
  })
)

/**
 * The whole directory in memory — `Directory` and `Operators` with every port they need — for
 * tests and for services that embed the core.
 */
export const layerDirectory = Layer.mergeAll(Directory.Directory.layer, Operators.Operators.layer).pipe(
  Layer.provide(Cursor.CursorCodec.layer.pipe(Layer.provide(layerEphemeralCursorSecret))),
  Layer.provideMerge(layer),
  Layer.provideMerge(layerCrypto)
)

/** A tiny end-to-end run, used by the plain-node smoke check. */
export const smoke = Effect.gen(function*() {
  const operators = yield* Operators.Operators
  const directory = yield* Directory.Directory
  const account = yield* operators.createAccount("smoke", "pro")
  const { secret } = yield* operators.createKey(account.id, "smoke")
  yield* operators.upsertListings([])
  const caller = yield* directory.authenticate(secret)
  return yield* directory.list(caller, yield* ListQuery.decode({}))
}).pipe(Effect.provide(layerDirectory))
