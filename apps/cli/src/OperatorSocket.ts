import {
  type AccountStore,
  Errors,
  type Hold,
  type Ids,
  type Keyset,
  type KeyStore,
  Listing,
  type ListingStore,
  Operators,
  Plan,
  type RevealLedger,
  type Sessions,
  type WatchView
} from "@dropshelf/core"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import { Duration, Effect, Layer, Schema } from "effect"
import type { SocketServer } from "effect/socket"
import { Rpc, RpcClient, RpcGroup, RpcSerialization, RpcServer } from "effect/rpc"
import { createHash } from "node:crypto"
import { connect } from "node:net"
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import type { BackupReport } from "./BackupFile.ts"
import { StorageUnavailable, UsageError } from "./Failure.ts"

/*
 * The operator endpoint of a process serving the embedded database. PGlite admits one process
 * per data directory, so while `serve` (or `npm start`) holds it, an operator command run beside
 * it sends its use case here and the serving process runs it on its own storage, in turn with
 * the API's statements: the same `Operators`, the same results and refusals, one writer.
 * Effect RPC over a local socket (a unix socket in the data directory, a named pipe on
 * Windows), newline-delimited JSON. docs/decisions/0300-cli.md says why.
 */

export const SOCKET_FILE = "dropshelf.sock"

/** A unix socket's path has room for about 104 bytes; a longer one goes to the temp directory. */
const MAX_SOCKET_PATH = 100

/**
 * The folder of the sockets that do not fit in their data directory: this user's own, in the
 * temp directory, so that no other user can put a socket where a command will look.
 */
const privateSocketDir = () => join(tmpdir(), `dropshelf-${process.getuid?.() ?? "user"}`)

/** Where the process holding `dataDir` listens; the same for the server and every command. */
export const socketPath = (dataDir: string): string => {
  const dir = resolve(dataDir)
  const digest = createHash("sha256").update(dir).digest("hex").slice(0, 16)
  if (process.platform === "win32") return `\\\\.\\pipe\\dropshelf-${digest}`
  const inDir = join(dir, SOCKET_FILE)
  return Buffer.byteLength(inDir) <= MAX_SOCKET_PATH ? inDir : join(privateSocketDir(), `${digest}.sock`)
}

/** A socket outside its data directory is used only in a folder this user owns and alone may write. */
const trusted = (path: string, create: boolean): boolean => {
  const dir = privateSocketDir()
  if (dirname(path) !== dir) return true
  try {
    if (create) mkdirSync(dir, { recursive: true, mode: 0o700 })
    const info = lstatSync(dir)
    return info.isDirectory() && info.uid === process.getuid?.() && (info.mode & 0o077) === 0
  } catch {
    return false
  }
}

/** Records of the core travel as their JSON; both ends are the same build. */
const Record = Schema.Any

const Page = { after: Schema.optional(Schema.String), limit: Schema.Number }

export class OperatorRpcs extends RpcGroup.make(
  Rpc.make("Migrate", { success: Schema.Array(Schema.String) }),
  Rpc.make("CreateAccount", {
    payload: { name: Schema.String, plan: Plan.StoredPlan, email: Schema.optional(Schema.String) },
    success: Record,
    error: Schema.Union([Errors.EmailTaken, Errors.InvalidRequest])
  }),
  Rpc.make("SetPlan", { payload: { accountId: Schema.String, plan: Plan.StoredPlan }, success: Record, error: Errors.AccountNotFound }),
  Rpc.make("IssueSignInLink", { payload: { accountId: Schema.String }, success: Record, error: Errors.AccountNotFound }),
  Rpc.make("SetEmail", {
    payload: { accountId: Schema.String, email: Schema.NullOr(Schema.String) },
    success: Record,
    error: Schema.Union([Errors.AccountNotFound, Errors.EmailTaken, Errors.InvalidRequest])
  }),
  Rpc.make("CreateKey", {
    payload: { accountId: Schema.String, name: Schema.String, lifetimeMs: Schema.optional(Schema.Number) },
    success: Record,
    error: Schema.Union([Errors.AccountNotFound, Errors.KeyLimitReached])
  }),
  Rpc.make("RevokeKey", { payload: { prefix: Schema.String }, success: Record, error: Errors.KeyNotFound }),
  Rpc.make("RevokeGrantKey", { payload: { grantId: Schema.String } }),
  Rpc.make("ConnectApplication", {
    payload: { accountId: Schema.String, application: Record, expiresAt: Schema.NullOr(Schema.Number) },
    success: Record,
    error: Schema.Union([Errors.AccountNotFound, Errors.KeyLimitReached])
  }),
  Rpc.make("UpsertListings", {
    payload: { batch: Schema.Array(Record) },
    success: Schema.Struct({ inserted: Schema.Number, updated: Schema.Number })
  }),
  Rpc.make("Delist", {
    payload: { ids: Schema.Array(Schema.String), reason: Schema.Literals(Listing.DELIST_REASONS) },
    success: Schema.Array(Schema.String)
  }),
  Rpc.make("BackfillMasks", { success: Schema.Number }),
  Rpc.make("RotateKey", {
    payload: { prefix: Schema.String, graceMs: Schema.Number, lifetimeMs: Schema.optional(Schema.Number) },
    success: Record,
    error: Schema.Union([Errors.KeyNotFound, Errors.KeyLimitReached, Errors.InvalidRequest])
  }),
  Rpc.make("ListAccounts", { payload: Page, success: Record }),
  Rpc.make("ShowAccount", { payload: { accountId: Schema.String }, success: Record, error: Errors.AccountNotFound }),
  Rpc.make("ListKeys", { payload: { accountId: Schema.String, ...Page }, success: Record, error: Errors.AccountNotFound }),
  Rpc.make("ListHolds", {
    payload: { accountId: Schema.optional(Schema.String), running: Schema.Boolean, ...Page },
    success: Record
  }),
  Rpc.make("ShowListing", { payload: { id: Schema.String }, success: Record, error: Errors.ListingNotFound }),
  Rpc.make("ListReveals", {
    payload: { accountId: Schema.String, month: Schema.optional(Schema.String), ...Page },
    success: Record,
    error: Errors.AccountNotFound
  }),
  Rpc.make("Backup", { payload: { file: Schema.String }, success: Record, error: UsageError }),
  Rpc.make("ListWatches", { payload: { accountId: Schema.String }, success: Schema.Array(Record), error: Errors.AccountNotFound })
) {}

const pageOf = (payload: { readonly after?: string | undefined; readonly limit: number }): Keyset.KeysetRequest => ({
  after: payload.after,
  limit: payload.limit
})

const removeQuietly = (path: string) => {
  try {
    unlinkSync(path)
  } catch {
    // not there
  }
}

/**
 * The longest request line the endpoint reads, in characters (bytes, for the ASCII JSON of a
 * request); effect/rpc's NDJSON parser fails the connection past it, which closes it. The
 * largest request is an import's batch: at most `BATCH_SIZE` listings, and no more once its
 * lines pass `MAX_BATCH_LENGTH` (4 Mi characters, Import.ts); 2 000 typical listings are ~1 MB.
 * 8 Mi fits that with room, and a client cannot make the server buffer more.
 */
export const MAX_REQUEST_LINE_LENGTH = 8 * 1024 * 1024

/**
 * Listens at `path` for this user alone, whatever the umask: bound in a fresh directory only
 * this user may enter (mkdtemp makes it 0700), made 0600, then renamed into place, so no other
 * user ever finds the socket at a path they could connect to. (A chmod after listening at
 * `path` itself would leave an instant in which anyone could connect and be served.)
 */
const listenPrivately = (path: string): Layer.Layer<SocketServer.SocketServer, SocketServer.SocketServerError> => {
  const removedOnClose = <A, E>(layer: Layer.Layer<A, E>) =>
    Layer.tap(layer, () => Effect.addFinalizer(() => Effect.sync(() => removeQuietly(path))))
  if (process.platform === "win32") return NodeSocketServer.layer({ path }).pipe(removedOnClose)
  return Layer.unwrap(Effect.sync(() => {
    const staging = mkdtempSync(join(dirname(path), ".s"))
    const bound = join(staging, "s")
    const cleanUp = Effect.sync(() => rmSync(staging, { recursive: true, force: true }))
    return NodeSocketServer.layer({ path: bound }).pipe(
      Layer.tap(() =>
        Effect.andThen(
          Effect.sync(() => {
            chmodSync(bound, 0o600)
            removeQuietly(path)
            renameSync(bound, path)
          }),
          cleanUp
        )
      ),
      Layer.tapCause(() => cleanUp),
      removedOnClose
    )
  }))
}

/**
 * Serves the operator use cases of this process on the socket of `dataDir`, until the scope
 * closes. Only the holder of the data directory's lock may call it: a socket file left there is
 * a dead server's, and is replaced.
 */
export const layerServer = (
  dataDir: string,
  migrate: Effect.Effect<ReadonlyArray<string>>,
  /** Writes a backup of the open storage to this absolute path (Backup.ts); its report. */
  backup: (file: string) => Effect.Effect<BackupReport, UsageError>
): Layer.Layer<never, never, Operators.Operators> => {
  const path = socketPath(dataDir)
  const handlers = OperatorRpcs.toLayer(Effect.gen(function*() {
    const operators = yield* Operators.Operators
    return OperatorRpcs.of({
      Migrate: () => migrate,
      CreateAccount: ({ email, name, plan }) => operators.createAccount(name, plan, email),
      SetPlan: ({ accountId, plan }) => operators.setPlan(accountId, plan),
      SetEmail: ({ accountId, email }) => operators.setEmail(accountId, email),
      IssueSignInLink: ({ accountId }) => operators.issueSignInLink(accountId),
      CreateKey: ({ accountId, lifetimeMs, name }) => operators.createKey(accountId, name, lifetimeMs),
      RevokeKey: ({ prefix }) => operators.revokeKey(prefix),
      RevokeGrantKey: ({ grantId }) => operators.revokeGrantKey(grantId),
      ConnectApplication: ({ accountId, application, expiresAt }) =>
        operators.connectApplication(accountId, application as unknown as KeyStore.Application, expiresAt),
      UpsertListings: ({ batch }) => operators.upsertListings(batch as ReadonlyArray<ListingStore.ListingInput>),
      Delist: ({ ids, reason }) => operators.delist(ids as ReadonlyArray<Ids.ListingId>, reason),
      BackfillMasks: () => operators.backfillMasks,
      RotateKey: ({ graceMs, lifetimeMs, prefix }) => operators.rotateKey(prefix, graceMs, lifetimeMs),
      ListAccounts: (page) => operators.listAccounts(pageOf(page)),
      ShowAccount: ({ accountId }) => operators.showAccount(accountId),
      ListKeys: ({ accountId, ...page }) => operators.listKeys(accountId, pageOf(page)),
      ListHolds: ({ accountId, running, ...page }) => operators.listHolds({ accountId, running }, pageOf(page)),
      ShowListing: ({ id }) => operators.showListing(id),
      ListReveals: ({ accountId, month, ...page }) => operators.listReveals(accountId, month, pageOf(page)),
      Backup: ({ file }) => backup(file),
      ListWatches: ({ accountId }) => operators.listWatches(accountId)
    })
  }))
  const listening = listenPrivately(path)
  return RpcServer.layer(OperatorRpcs).pipe(
    Layer.provide(handlers),
    Layer.provide(RpcServer.layerProtocolSocketServer),
    Layer.provide(RpcSerialization.layerNdjsonWith({ maxBufferSize: MAX_REQUEST_LINE_LENGTH })),
    Layer.provide(Layer.unwrap(Effect.suspend(() => {
      if (!trusted(path, true)) return Effect.die(new Error(`${dirname(path)} is not this user's own folder`))
      if (process.platform !== "win32") removeQuietly(path)
      return Effect.succeed(listening)
    }))),
    // Not listening is no reason to stop serving the API: operator commands then say the
    // directory is in use, as they would without this endpoint.
    Layer.catchCause((cause) => Layer.effectDiscard(Effect.logWarning(`dropshelf: no operator endpoint at ${path}`, cause)))
  )
}

/** Whether something accepts connections at `path` now (a quick connect, then hang up). */
export const answers = (path: string): Effect.Effect<boolean> =>
  Effect.callback<boolean>((resume) => {
    if (!trusted(path, false)) {
      resume(Effect.succeed(false))
      return
    }
    const socket = connect({ path })
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => {
      socket.destroy()
      resume(Effect.succeed(false))
    })
    return Effect.sync(() => socket.destroy())
  })

/**
 * A connection to the operator endpoint at `path`. A local socket has no use for keep-alive
 * pings: the serving process may be busy in one long statement (PGlite runs on its event loop),
 * and a ping unanswered meanwhile would fail a call that is still running there.
 */
const protocol = (path: string) =>
  RpcClient.layerProtocolSocket({ pingInterval: Duration.infinity }).pipe(
    Layer.provide(Layer.orDie(NodeSocket.layerNet({ path }))),
    Layer.provide(RpcSerialization.layerNdjson)
  )

/** The connection is gone (the serving process stopped mid-call): the storage is unusable for this command. */
const lost = (holder: string) => (error: { readonly message: string }) =>
  Effect.die(new StorageUnavailable({ message: `lost the connection to the ${holder} before the command finished: ${error.message}` }))

/**
 * The core's `Operators`, each use case run by the process serving at `path` (`holder` names it
 * in messages). Refusals arrive as the same tagged errors; a lost connection is a storage failure.
 */
export const layerClient = (path: string, holder: string): Layer.Layer<Operators.Operators> =>
  Layer.effect(
    Operators.Operators,
    Effect.gen(function*() {
      const client = yield* RpcClient.make(OperatorRpcs)
      const onLost = lost(holder)
      return Operators.Operators.of({
        createAccount: (name, plan, email) =>
          client.CreateAccount({ name, plan, ...(email === undefined ? {} : { email }) }).pipe(
            Effect.map((record) => record as AccountStore.AccountRecord),
            Effect.catchTag("RpcClientError", onLost)
          ),
        setPlan: (accountId, plan) =>
          client.SetPlan({ accountId, plan }).pipe(
            Effect.map((record) => record as AccountStore.AccountRecord),
            Effect.catchTag("RpcClientError", onLost)
          ),
        setEmail: (accountId, email) =>
          client.SetEmail({ accountId, email }).pipe(
            Effect.map((record) => record as AccountStore.AccountRecord),
            Effect.catchTag("RpcClientError", onLost)
          ),
        issueSignInLink: (accountId) =>
          client.IssueSignInLink({ accountId }).pipe(
            Effect.map((link) => link as Sessions.SignInLink),
            Effect.catchTag("RpcClientError", onLost)
          ),
        createKey: (accountId, name, lifetimeMs) =>
          client.CreateKey({ accountId, name, ...(lifetimeMs === undefined ? {} : { lifetimeMs }) }).pipe(
            Effect.map((created) => created as { readonly secret: string; readonly key: KeyStore.KeyRecord }),
            Effect.catchTag("RpcClientError", onLost)
          ),
        revokeKey: (prefix) =>
          client.RevokeKey({ prefix }).pipe(
            Effect.map((record) => record as KeyStore.KeyRecord),
            Effect.catchTag("RpcClientError", onLost)
          ),
        revokeGrantKey: (grantId) => client.RevokeGrantKey({ grantId }).pipe(Effect.catchTag("RpcClientError", onLost)),
        connectApplication: (accountId, application, expiresAt) =>
          client.ConnectApplication({ accountId, application: { ...application }, expiresAt }).pipe(
            Effect.map((record) => record as KeyStore.KeyRecord),
            Effect.catchTag("RpcClientError", onLost)
          ),
        upsertListings: (batch) => client.UpsertListings({ batch }).pipe(Effect.catchTag("RpcClientError", onLost)),
        delist: (ids, reason) =>
          client.Delist({ ids, reason }).pipe(
            Effect.map((delisted) => delisted as ReadonlyArray<Ids.ListingId>),
            Effect.catchTag("RpcClientError", onLost)
          ),
        backfillMasks: client.BackfillMasks().pipe(Effect.catchTag("RpcClientError", onLost)),
        rotateKey: (prefix, graceMs, lifetimeMs) =>
          client.RotateKey({ prefix, graceMs, ...(lifetimeMs === undefined ? {} : { lifetimeMs }) }).pipe(
            Effect.map((rotated) => rotated as Effect.Success<ReturnType<Operators.Operators["Service"]["rotateKey"]>>),
            Effect.catchTag("RpcClientError", onLost)
          ),
        listAccounts: (page) =>
          client.ListAccounts(pagePayload(page)).pipe(
            Effect.map((listed) => listed as Keyset.KeysetPage<AccountStore.AccountRecord>),
            Effect.catchTag("RpcClientError", onLost)
          ),
        showAccount: (accountId) =>
          client.ShowAccount({ accountId }).pipe(
            Effect.map((shown) => shown as Operators.AccountOverview),
            Effect.catchTag("RpcClientError", onLost)
          ),
        listKeys: (accountId, page) =>
          client.ListKeys({ accountId, ...pagePayload(page) }).pipe(
            Effect.map((listed) => listed as Keyset.KeysetPage<KeyStore.KeyRecord>),
            Effect.catchTag("RpcClientError", onLost)
          ),
        listHolds: (filter, page) =>
          client.ListHolds({
            running: filter.running,
            ...(filter.accountId === undefined ? {} : { accountId: filter.accountId }),
            ...pagePayload(page)
          }).pipe(
            Effect.map((listed) => listed as Keyset.KeysetPage<Hold.HoldRecord>),
            Effect.catchTag("RpcClientError", onLost)
          ),
        showListing: (id) =>
          client.ShowListing({ id }).pipe(
            Effect.map((shown) => shown as Operators.ListingOverview),
            Effect.catchTag("RpcClientError", onLost)
          ),
        listReveals: (accountId, month, page) =>
          client.ListReveals({ accountId, ...(month === undefined ? {} : { month }), ...pagePayload(page) }).pipe(
            Effect.map((listed) => listed as Keyset.KeysetPage<RevealLedger.RevealEntry>),
            Effect.catchTag("RpcClientError", onLost)
          ),
        listWatches: (accountId) =>
          client.ListWatches({ accountId }).pipe(
            Effect.map((watches) => watches as ReadonlyArray<WatchView.WatchView>),
            Effect.catchTag("RpcClientError", onLost)
          )
      })
    })
  ).pipe(Layer.provide(protocol(path)))

const pagePayload = (page: Keyset.KeysetRequest) => ({ limit: page.limit, ...(page.after === undefined ? {} : { after: page.after }) })

/** `dropshelf backup` written by the process serving at `path`, to the absolute path `file`. */
export const backupVia = (path: string, holder: string, file: string): Effect.Effect<BackupReport, UsageError> =>
  Effect.gen(function*() {
    const client = yield* RpcClient.make(OperatorRpcs)
    return (yield* client.Backup({ file }).pipe(Effect.catchTag("RpcClientError", lost(holder)))) as BackupReport
  }).pipe(Effect.scoped, Effect.provide(protocol(path)))

/** `dropshelf migrate` run by the process serving at `path`. */
export const migrateVia = (path: string, holder: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    const client = yield* RpcClient.make(OperatorRpcs)
    return yield* client.Migrate().pipe(Effect.catchTag("RpcClientError", lost(holder)))
  }).pipe(Effect.scoped, Effect.provide(protocol(path)))
