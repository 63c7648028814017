import {
  AccountArea,
  AccountReveals,
  type AvailabilityCheck,
  Cursor,
  Directory,
  DirectoryArea,
  EmailSignIn,
  Operators,
  Passkeys,
  RateLimiter,
  SecurityLog,
  Sessions,
  UseCases
} from "@dropshelf/core"
import * as RememberedCursors from "@dropshelf/server/RememberedCursors"
import * as WebAuthnSimple from "@dropshelf/server/WebAuthnSimple"
import { CopyLoader, type FirstLoad, PoolMetrics, StoreCaches, StoreSql } from "@dropshelf/store-sql"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { createHmac, createSecretKey, type KeyObject } from "node:crypto"
import { setFlagsFromString } from "node:v8"
import { Context, Effect, Layer } from "effect"
import { type Digest, Mac } from "effect/crypto"
import { storeSwitches } from "./Caches.ts"
import type { DropshelfConfig } from "./Config.ts"

/**
 * Configuration → layers, in one place: every operator command that opens the storage itself,
 * `dropshelf serve` and any other start-up (the server's own main, a test) build the same storage
 * from the same environment. Commands load this module only when they open storage
 * (Storage.ts decides).
 */

export type { DropshelfConfig } from "./Config.ts"
export { describeStorage, signInUrl } from "./Config.ts"

/**
 * The SqlClient and the six storage ports, on PostgreSQL when `DATABASE_URL` is set, else
 * embedded PGlite; `purpose` says how long the process will keep it (PGlite's settings).
 */
export const storage = (
  config: DropshelfConfig,
  purpose: "command" | "server" = "command"
): Layer.Layer<StoreSql.Services | PoolMetrics.PoolMetrics, StoreSql.StoreOpenError> =>
  config.databaseUrl !== undefined
    ? purpose === "server"
      ? StoreSql.layerServer({ url: config.databaseUrl, ...config.pool, ...config.replicas }).pipe(Layer.provide(storeCachesOf(config)))
      // A command keeps no key look-ups long enough to need telling of changes: no listener.
      : StoreSql.layerStores.pipe(Layer.provideMerge(StoreSql.layerServerClient({ url: config.databaseUrl, ...config.pool })))
    : purpose === "server"
    ? StoreSql.layerPglite({ dataDir: config.dataDir }).pipe(Layer.provide(storeCachesOf(config)))
    : StoreSql.layerPglite({ dataDir: config.dataDir, settings: StoreSql.PGLITE_COMMAND_SETTINGS }).pipe(
      Layer.provide(Layer.effectDiscard(Effect.sync(keepWasmOnFirstTier)))
    )

/** The SQL adapter's caches as DROPSHELF_CACHES_OFF leaves them (Caches.ts). */
const storeCachesOf = (config: DropshelfConfig) => Layer.succeed(StoreCaches.StoreCaches, storeSwitches(config.cachesOff))

/** The embedded database opened by this one command, with its dump; not migrated (a backup copies it as it is). */
export const embeddedStorage = (config: DropshelfConfig): Layer.Layer<StoreSql.Services | StoreSql.EmbeddedDump, StoreSql.StoreOpenError> =>
  StoreSql.layerPglite({ dataDir: config.dataDir, settings: StoreSql.PGLITE_COMMAND_SETTINGS }).pipe(
    Layer.provide(Layer.effectDiscard(Effect.sync(keepWasmOnFirstTier)))
  )

/**
 * V8 compiles PGlite's WebAssembly fast (Liftoff), then recompiles the functions that run most
 * with its optimising compiler on background threads; opening the database is enough to start
 * that, and a process that exits waits for it: seconds of CPU and hundreds of MB for a command
 * that runs a few statements. A one-command process raises the bar for recompiling; a long one
 * (a large import) still gets there. Read when the module is compiled, so set just before
 * (docs/decisions/0300-cli.md). `serve` keeps V8's default.
 */
const keepWasmOnFirstTier = () => setFlagsFromString("--wasm-tiering-budget=1000000000")

/**
 * The storage, migrated when that is safe to do implicitly: the embedded database belongs to
 * this process alone, so it is brought up to date on open; a shared PostgreSQL server changes
 * schema only through `dropshelf migrate` (or `serve`), when the operator says so.
 */
const migratedStorage = (config: DropshelfConfig, purpose: "command" | "server") =>
  Layer.effectDiscard(purpose === "server" || config.databaseUrl === undefined ? StoreSql.migrate : Effect.void).pipe(
    Layer.provideMerge(storage(config, purpose))
  )

/**
 * HMAC on node:crypto with each key imported once. `NodeCrypto.layerMac` hands `createHmac`
 * the key's bytes, which Node imports into a key object on every call, several times the cost
 * of the MAC itself (docs/decisions/0505-auth-and-request-costs.md). Same primitive, same output.
 */
const nodeHashNames: Record<Digest.Algorithm["name"], string> = {
  "MD5": "md5",
  "SHA-1": "sha1",
  "SHA-256": "sha256",
  "SHA-384": "sha384",
  "SHA-512": "sha512"
}
/** HMAC on node:crypto, each key given imported once (a key's bytes are the cursor secret's, fixed for the layer's life). */
const layerHmac = Layer.suspend(() => {
  const keyObjects = new WeakMap<Uint8Array, KeyObject>()
  return Mac.layerWebCryptoWith({
    hmac: (hash: Digest.Algorithm["name"], key: Uint8Array, data: Uint8Array): Uint8Array => {
      let keyObject = keyObjects.get(key)
      if (keyObject === undefined) {
        keyObject = createSecretKey(key)
        keyObjects.set(key, keyObject)
      }
      return new Uint8Array(createHmac(nodeHashNames[hash], keyObject).update(data).digest())
    }
  })
})

/**
 * node:crypto for key digests and cursor MACs: synchronous hashing, where Web Crypto's
 * promise per call was a measurable share of every authenticated request
 * (docs/decisions/0505-auth-and-request-costs.md).
 */
export const layerCrypto = Layer.mergeAll(NodeCrypto.layerDigest, layerHmac).pipe(
  Layer.provideMerge(NodeCrypto.layerSecureRandom)
)

/** What operator commands run against. */
export type OperatorServices = Operators.Operators

/**
 * The operator use cases over the configured storage, opened by this process, and the import's
 * first load (which declines on PGlite).
 */
export const operatorLayer = (config: DropshelfConfig): Layer.Layer<OperatorServices | FirstLoad.FirstLoad, StoreSql.StoreOpenError> =>
  Layer.merge(Operators.Operators.layer.pipe(Layer.provide(layerCrypto)), CopyLoader.layerFirstLoad).pipe(
    Layer.provide(migratedStorage(config, "command"))
  )

/**
 * Per-key rate-limit counters: in Redis when REDIS_URL is set, so instances behind one load
 * balancer share one counter per key (falling back to this process while Redis is unreachable);
 * in this process otherwise. The Redis adapter, and the Redis client it brings, is loaded only
 * when REDIS_URL is set, so a server without Redis does not hold it in memory.
 */
export const rateLimiterLayer = (config: DropshelfConfig): Layer.Layer<RateLimiter.RateLimiter> => {
  const redisUrl = config.redisUrl
  const counting = redisUrl !== undefined
    ? Layer.unwrap(
      Effect.map(
        Effect.promise(() => import("@dropshelf/ratelimit-redis")),
        ({ RateLimitRedis }) =>
          Layer.effectContext(Effect.gen(function*() {
            const limiter = yield* RateLimiter.RateLimiter
            const { ping } = yield* RateLimitRedis.RedisPing
            return Context.make(RateLimiter.RateLimiter, limiter).pipe(Context.add(RedisCheck, ping))
          })).pipe(Layer.provide(RateLimitRedis.layerWithPing(redisUrl, !config.cachesOff.has("redis-batches"))))
      )
    )
    : RateLimiter.layerInProcess
  if (config.rateLimitMode === "enforce") return counting
  return Layer.effect(
    RateLimiter.RateLimiter,
    Effect.gen(function*() {
      yield* Effect.logWarning(
        "DROPSHELF_RATE_LIMIT=count-only: requests are counted but never refused. For benchmarks only."
      )
      return RateLimiter.countOnly(yield* RateLimiter.RateLimiter)
    })
  ).pipe(Layer.provideMerge(counting))
}

/**
 * Whether the Redis the rate limiter counts in answers now, when it counts in one: what
 * `/readyz` asks beside the database. Unset without `REDIS_URL`.
 */
export const RedisCheck = Context.Reference<Effect.Effect<void, unknown> | undefined>("@dropshelf/cli/Runtime/RedisCheck", {
  defaultValue: () => undefined
})

/** What the API server runs against: the directory, operator and account area use cases, rate limits, migrated storage. */
export type ServerServices =
  | Directory.Directory
  | Sessions.Sessions
  | EmailSignIn.EmailSignIn
  | AccountArea.AccountArea
  | DirectoryArea.DirectoryArea
  | AccountReveals.AccountReveals
  | SecurityLog.SecurityLog
  | Passkeys.Passkeys
  | RateLimiter.RateLimiter
  | OperatorServices
  | StoreSql.Services
  | PoolMetrics.PoolMetrics

/**
 * Everything `serve` needs, migrations applied first. `availability` is the reveal's re-check
 * (the server's RDAP check, or `AvailabilityCheck.layerStampOnly`).
 */
export const serverLayer = <E, M = never>(
  config: DropshelfConfig,
  availability: Layer.Layer<AvailabilityCheck.AvailabilityCheck, E>,
  /** How many days back the since feed reaches (`DROPSHELF_SINCE_HORIZON_DAYS`); default the core's. */
  sinceHorizonDays?: number | undefined,
  /** The account area's mail and sign-up policy (the server's SmtpMail.layerFrom); default none, by invitation. */
  accountMail?: Layer.Layer<M> | undefined
): Layer.Layer<ServerServices, StoreSql.StoreOpenError | E> =>
  UseCases.layer.pipe(
    Layer.provide(WebAuthnSimple.layer),
    Layer.provide(sinceHorizonDays === undefined ? Layer.empty : Layer.succeed(Directory.SinceHorizonDays, sinceHorizonDays)),
    Layer.provide(accountMail ?? Layer.empty),
    Layer.provide(RememberedCursors.layer(
      Cursor.CursorCodec.layer.pipe(Layer.provide(Layer.effect(Cursor.CursorSecret, StoreSql.cursorSecret))),
      !config.cachesOff.has("cursors")
    )),
    Layer.provide(availability),
    Layer.provide(layerCrypto),
    Layer.provideMerge(rateLimiterLayer(config)),
    Layer.provideMerge(migratedStorage(config, "server"))
  )

/** Applies pending migrations; the names of those applied. */
export const migrate = (config: DropshelfConfig): Effect.Effect<ReadonlyArray<string>, StoreSql.StoreOpenError> =>
  StoreSql.migrate.pipe(Effect.provide(storage(config)))
