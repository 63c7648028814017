import { generateKeyPairSync, randomBytes } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Clock, Context, Effect, Layer, Schedule } from "effect"
import { HttpServer } from "effect/http"
import { NetAddress } from "effect/net"
import type { Adapter, AdapterPayload, Configuration, default as Provider, KoaContextWithOIDC } from "oidc-provider"
import { AuthorizationStore, Directory, Errors, Operators, Scope } from "@dropshelf/core"
import { AccessTokens } from "../http/AccessTokens.ts"
import { layout } from "../http/account/Pages.ts"
import { AccountSettings } from "../http/account/SignedIn.ts"
import { MCP_PATH } from "../mcp/McpRoute.ts"
import { html } from "@remix-run/html-template"

/*
 * dropshelf as its own OAuth 2.1 authorization server, for assistants connecting to `/mcp`
 * (MCP authorization, revision 2025-11-25): oidc-provider, OpenID-certified and maintained,
 * does the protocol (docs/decisions/0807-oauth.md). What is ours: where its documents live
 * (the core's AuthorizationStore), who signs in and consents (the account area), and that a
 * grant is a key (Operators.connectApplication), so its token speaks for that key.
 */

/** How long an access token lives: an assistant refreshes it, and a revocation needs no list of tokens. */
export const ACCESS_TOKEN_TTL_S = 15 * 60
/** A refresh token lapses after this long unused; each use rotates it. */
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 60 * 60
/** Client registrations one address may make in a minute: enough for any person, not for filling the store. */
export const DEFAULT_REGISTRATIONS_PER_MINUTE = 10

/** How long a connection lasts before the person signs in again: its grant, and its key. */
export const GRANT_TTL_S = 365 * 24 * 60 * 60

/** The authorization server's endpoints, all under `/oauth`; its metadata is at the RFC 8414 well-known path. */
export const OAUTH_ROUTES = {
  authorization: "/oauth/authorize",
  token: "/oauth/token",
  registration: "/oauth/register",
  revocation: "/oauth/revoke",
  jwks: "/oauth/jwks",
  end_session: "/oauth/end-session",
  userinfo: "/oauth/userinfo",
  introspection: "/oauth/introspect",
  code_verification: "/oauth/device",
  device_authorization: "/oauth/device/auth",
  pushed_authorization_request: "/oauth/par",
  backchannel_authentication: "/oauth/backchannel",
  challenge: "/oauth/challenge",
  credential: "/oauth/credential"
} as const

/** Where the browser is sent to sign in and consent, one page per interaction. */
export const consentPath = (uid: string) => `/oauth/consent/${uid}`

/** The models whose documents belong to a grant, and go when it is revoked. */
const GRANT_MEMBERS = new Set(["AccessToken", "AuthorizationCode", "RefreshToken", "DeviceCode", "BackchannelAuthenticationRequest"])

export class AuthorizationServer extends Context.Service<AuthorizationServer, {
  /** The issuer: the origin the server is reached at. */
  readonly issuer: string
  /** The protected resource its tokens are for: `{issuer}/mcp`. */
  readonly resource: string
  /**
   * The library's provider, made by the first request that needs it: a server no assistant
   * signs in to does not hold it (docs/performance.md, idle memory).
   */
  readonly provider: Effect.Effect<Provider>
  /** Client registrations (RFC 7591) one address may make in a minute. */
  readonly registrationsPerMinute: number
  /** Hands a request to the provider, once it has answered. */
  readonly handle: (request: IncomingMessage, response: ServerResponse) => Effect.Effect<void>
  /**
   * The caller an access token speaks for, at `resource`: the token must be live, issued by
   * this server, for this resource (RFC 8707), and its grant's key live.
   */
  readonly callerOf: (token: string, resource: string) => Effect.Effect<Directory.KeyCaller, Errors.Unauthorized>
}>()("@dropshelf/server/AuthorizationServer") {}

const refused = (message: string) => new Errors.Unauthorized({ message })

/** The signing key and cookie keys, made once per deployment and kept in the store. */
interface ServerSecrets {
  readonly cookieKeys: ReadonlyArray<string>
  readonly jwk: Record<string, unknown>
}

const freshSecrets = (): ServerSecrets => {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  return {
    cookieKeys: [randomBytes(32).toString("base64url")],
    jwk: { ...privateKey.export({ format: "jwk" }), kid: randomBytes(8).toString("hex"), use: "sig", alg: "RS256" }
  }
}

/**
 * oidc-provider's storage interface over the core's AuthorizationStore. `grantRevoked` ends a
 * grant's key: the library destroys a grant only when it revokes it (a code or refresh token
 * used twice, the client revoking), and awaits that before it answers.
 */
const adapterOver = (
  run: <A>(effect: Effect.Effect<A, never, AuthorizationStore.AuthorizationStore>) => Promise<A>,
  grantRevoked: (grantId: string) => Promise<void>
) => {
  /** A store call made at the clock's now. */
  const now = <A>(use: (store: AuthorizationStore.AuthorizationStore["Service"], at: number) => Effect.Effect<A>) =>
    run(AuthorizationStore.AuthorizationStore.use((store) => Effect.flatMap(Clock.currentTimeMillis, (at) => use(store, at))))
  const found = (payload: Promise<unknown>) => payload as Promise<AdapterPayload | undefined>
  return class StoreAdapter implements Adapter {
    readonly kind: string
    constructor(kind: string) {
      this.kind = kind
    }
    upsert(id: string, payload: AdapterPayload, expiresIn: number) {
      return now((store, at) =>
        store.upsert({
          kind: this.kind,
          id,
          payload,
          expiresAt: typeof expiresIn === "number" ? at + expiresIn * 1000 : null,
          grantId: this.kind === "Grant" ? id : GRANT_MEMBERS.has(this.kind) ? payload.grantId : undefined,
          uid: payload.uid,
          userCode: payload.userCode
        })
      )
    }
    find(id: string) {
      return found(now((store, at) => store.find(this.kind, id, at)))
    }
    findByUid(uid: string) {
      return found(now((store, at) => store.findByUid(this.kind, uid, at)))
    }
    findByUserCode(userCode: string) {
      return found(now((store, at) => store.findByUserCode(this.kind, userCode, at)))
    }
    consume(id: string) {
      return now((store, at) => store.consume(this.kind, id, at))
    }
    async destroy(id: string) {
      await now((store) => store.destroy(this.kind, id))
      if (this.kind === "Grant") await grantRevoked(id)
    }
    revokeByGrantId(grantId: string) {
      return now((store) => store.revokeGrant(grantId))
    }
  }
}

/** The error page the provider shows a person (a bad authorization request, an expired interaction). */
const errorPage = (ctx: KoaContextWithOIDC, out: { readonly error?: string | undefined; readonly error_description?: string | undefined }) => {
  ctx.type = "html"
  ctx.set("content-security-policy", "default-src 'none'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'")
  ctx.set("referrer-policy", "no-referrer")
  ctx.set("cache-control", "no-store")
  ctx.body = layout(
    "The application could not connect",
    html`<p class="notice bad" role="alert">${out.error_description ?? out.error ?? "The request was refused."}</p>
<p class="hint">Error: <code>${out.error ?? "server_error"}</code>. Start connecting again from the application.</p>
<p><a href="/account">Your account</a></p>`
  )
}

/** The issuer: `DROPSHELF_PUBLIC_URL`, else the address the server listens at (a wildcard one read as 127.0.0.1, as for links). */
const issuerOf = (publicUrl: string | undefined, address: HttpServer.HttpServer["Service"]["address"]): string => {
  if (publicUrl !== undefined) return publicUrl
  if (address._tag === "UnixPathAddress") return "http://127.0.0.1"
  const ip = NetAddress.formatIp(address.address)
  const wildcard = ip === "0.0.0.0" || ip === "::"
  return `http://${wildcard ? "127.0.0.1" : address._tag === "InetAddressV6" ? `[${ip}]` : ip}:${address.port}`
}

const scopesOfToken = (scope: string | undefined): ReadonlyArray<Scope.Scope> =>
  (scope ?? "").split(" ").filter(Scope.isScope)

/**
 * The authorization server for the server's address. Needs the `AuthorizationStore`, the
 * `Directory` (a token's caller is its grant's key), `AccountSettings` and `HttpServer`.
 */
export const layer = (options: { readonly trustProxy: boolean; readonly registrationsPerMinute: number }) =>
  Layer.effect(
    AuthorizationServer,
    Effect.gen(function*() {
      const store = yield* AuthorizationStore.AuthorizationStore
      const directory = yield* Directory.Directory
      const operators = yield* Operators.Operators
      const settings = yield* AccountSettings
      const server = yield* HttpServer.HttpServer
      const context = yield* Effect.context<AuthorizationStore.AuthorizationStore>()
      const run = <A>(effect: Effect.Effect<A, never, AuthorizationStore.AuthorizationStore>) => Effect.runPromiseWith(context)(effect)

      const issuer = issuerOf(settings.publicUrl, server.address)
      const resource = `${issuer}${MCP_PATH}`
      const resourceScope = Scope.SCOPES.join(" ")

      const made = Effect.gen(function*() {
        const { default: Provider, errors } = yield* Effect.promise(() => import("oidc-provider"))
        const secrets = (yield* store.keep("ServerSecrets", "oauth", freshSecrets())) as ServerSecrets
        const configuration: Configuration = {
          adapter: adapterOver(run, (grantId) =>
            run(operators.revokeGrantKey(grantId).pipe(
              Effect.catchCause((cause) => Effect.logWarning("dropshelf: revoking a revoked grant's key failed", cause))
            ))),
          routes: OAUTH_ROUTES,
          cookies: { keys: [...secrets.cookieKeys] },
          jwks: { keys: [secrets.jwk as never] },
          scopes: [...Scope.SCOPES],
          responseTypes: ["code"],
          pkce: { required: () => true },
          clientDefaults: {
            grant_types: ["authorization_code", "refresh_token"],
            response_types: ["code"],
            token_endpoint_auth_method: "none"
          },
          features: {
            devInteractions: { enabled: false },
            // Only what an assistant uses is advertised and routed: no OIDC logout or user info.
            rpInitiatedLogout: { enabled: false },
            userinfo: { enabled: false },
            registration: { enabled: true, initialAccessToken: false },
            revocation: { enabled: true },
            clientIdMetadataDocument: { enabled: true, ack: "draft-02" } as never,
            resourceIndicators: {
              enabled: true,
              defaultResource: () => resource,
              useGrantedResource: () => true,
              getResourceServerInfo: (_ctx, indicator) => {
                if (indicator !== resource) throw new errors.InvalidTarget(`this server grants access to ${resource} only`)
                return { scope: resourceScope, audience: resource, accessTokenTTL: ACCESS_TOKEN_TTL_S, accessTokenFormat: "opaque" }
              }
            }
          },
          // Public clients get refresh tokens without OIDC's `offline_access`; each use rotates it.
          issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
          rotateRefreshToken: true,
          ttl: {
            AccessToken: ACCESS_TOKEN_TTL_S,
            AuthorizationCode: 60,
            Grant: GRANT_TTL_S,
            Interaction: 30 * 60,
            RefreshToken: REFRESH_TOKEN_TTL_S,
            Session: 24 * 60 * 60
          },
          findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
          // Every authorization asks on the consent page, as whoever is signed in to the account
          // area then: only the grant that page just made counts, never one made earlier in this
          // browser, maybe for another person.
          loadExistingGrant: (ctx) => {
            const grantId = ctx.oidc.result?.consent?.grantId
            return typeof grantId === "string" ? ctx.oidc.provider.Grant.find(grantId) : undefined
          },
          interactions: { url: (_ctx, interaction) => consentPath(interaction.uid) },
          renderError: (ctx, out) => errorPage(ctx, out)
        }
        const provider = new Provider(issuer, configuration)
        provider.proxy = options.trustProxy
        return { provider, callback: provider.callback() }
      })
      const once = yield* Effect.cached(made)
      const provider = Effect.map(once, (made) => made.provider)

      const handle = (request: IncomingMessage, response: ServerResponse) =>
        Effect.flatMap(once, ({ callback }) =>
          Effect.promise(() =>
            new Promise<void>((resolve) => {
              response.once("close", () => resolve())
              response.once("finish", () => resolve())
              void callback(request, response)
            })
          ))

      const callerOf = Effect.fnUntraced(function*(token: string, at: string) {
        const oidc = yield* provider
        const found = yield* Effect.promise(() => oidc.AccessToken.find(token).catch(() => undefined))
        if (found === undefined || found.isExpired || found.grantId === undefined) {
          return yield* refused("The access token is not known or has expired; refresh it or connect again")
        }
        const audience = Array.isArray(found.aud) ? found.aud : [found.aud]
        // RFC 8707: a token for another resource is not a token here, whoever issued it.
        if (!audience.includes(at)) return yield* refused(`The access token was not issued for ${at}`)
        const caller = yield* directory.authenticateGrant(found.grantId)
        const application = caller.key.application
        if (!application) return yield* refused("The access token names no connected application")
        const granted = scopesOfToken(found.scope).filter((scope) => application.scopes.includes(scope))
        return { ...caller, key: { ...caller.key, application: { ...application, scopes: granted } } }
      })

      return AuthorizationServer.of({ issuer, resource, provider, registrationsPerMinute: options.registrationsPerMinute, handle, callerOf })
    })
  )

/** `/mcp` takes the authorization server's access tokens, for its own resource. */
export const layerAccessTokens = Layer.effect(
  AccessTokens,
  Effect.map(AuthorizationServer, (oauth) =>
    AccessTokens.of({
      callerAt: (pathname, token) => pathname === MCP_PATH ? oauth.callerOf(token, oauth.resource) : undefined
    }))
)

/** The documents past their expiry deleted at start and then hourly, as the sessions are; a failed round is logged. */
export const layerPruning = Layer.effectDiscard(Effect.gen(function*() {
  const store = yield* AuthorizationStore.AuthorizationStore
  yield* Clock.currentTimeMillis.pipe(
    Effect.flatMap(store.prune),
    Effect.asVoid,
    Effect.catchCause((cause) => Effect.logWarning("dropshelf: pruning expired authorization documents failed", cause)),
    Effect.repeat(Schedule.spaced("1 hour")),
    Effect.forkScoped
  )
}))
