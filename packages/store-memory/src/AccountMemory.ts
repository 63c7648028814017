import { AccountStore, ApiKey, Email, Errors, type Ids, Keyset, KeyStore } from "@dropshelf/core"
import { Effect } from "effect"
import { compareIds } from "./IdOrder.ts"

type KeyRecord = KeyStore.KeyRecord
type AccountRecord = AccountStore.AccountRecord

/** Accounts and their API keys in memory, one store pair: a key's lookup returns its account. */
export const makeAccountsAndKeys = Effect.sync(() => {
  const accounts = new Map<string, AccountRecord>()
  const keys = new Map<string, KeyRecord>()
  let sequence = 0

  /** Whether an account other than `except` has this address, case aside. */
  const emailTaken = (email: string | null, except?: string) =>
    email !== null && [...accounts.values()].some((account) =>
      account.id !== except && account.email !== null && Email.key(account.email) === Email.key(email))

  const accountStore = AccountStore.AccountStore.of({
    create: ({ at, email = null, name, plan }) =>
      Effect.suspend(() => {
        if (emailTaken(email)) return Effect.fail(new Errors.EmailTaken({ email: email! }))
        const id = `acct_${(++sequence).toString(36).padStart(6, "0")}` as Ids.AccountId
        const account: AccountRecord = { id, name, plan, createdAt: at, email }
        accounts.set(account.id, account)
        return Effect.succeed(account)
      }),
    setEmail: (id, email) =>
      Effect.suspend((): Effect.Effect<AccountRecord, Errors.AccountNotFound | Errors.EmailTaken> => {
        const account = accounts.get(id)
        if (account === undefined) return Effect.fail(new Errors.AccountNotFound({ accountId: id }))
        if (emailTaken(email, id)) return Effect.fail(new Errors.EmailTaken({ email: email! }))
        const changed = { ...account, email }
        accounts.set(id, changed)
        return Effect.succeed(changed)
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
    findByEmail: (email) =>
      Effect.sync(() => [...accounts.values()].find((account) => account.email !== null && Email.key(account.email) === Email.key(email))),
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
      expiresAt: fields.expiresAt ?? null,
      application: fields.application ?? null
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
