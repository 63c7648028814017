import type { IncomingMessage, ServerResponse } from "node:http"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Clock, Effect, Layer, Result } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse, UrlParams } from "effect/http"
import type { InteractionResults } from "oidc-provider"
import { Operators, Plan, RateLimiter, Scope } from "@dropshelf/core"
import { addressOf } from "../http/AddressGate.ts"
import { CurrentExchange } from "../http/Exchange.ts"
import { pageHeadersRedirectingTo, returnCookie } from "../http/account/Security.ts"
import * as SignedIn from "../http/account/SignedIn.ts"
import { page, seeOther } from "../http/account/SignedIn.ts"
import { MCP_PATH } from "../mcp/McpRoute.ts"
import { AuthorizationServer, consentPath, GRANT_TTL_S, OAUTH_ROUTES } from "./AuthorizationServer.ts"
import * as ConsentPages from "./ConsentPages.ts"

/*
 * The routes of the authorization server and of `/mcp` as a protected resource: the Protected
 * Resource Metadata (RFC 9728), the provider's own endpoints (handed the Node request as it
 * came), and the consent page, an account-area page like the others (SignedIn.ts).
 */

export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource"


/** The provider's paths and methods, which the router hands to it. */
const PROVIDER_PATHS: Readonly<Record<string, ReadonlyArray<"GET" | "POST">>> = {
  "/.well-known/oauth-authorization-server": ["GET"],
  "/.well-known/openid-configuration": ["GET"],
  [OAUTH_ROUTES.authorization]: ["GET", "POST"],
  [`${OAUTH_ROUTES.authorization}/:uid`]: ["GET"],
  [OAUTH_ROUTES.token]: ["POST"],
  [OAUTH_ROUTES.pushed_authorization_request]: ["POST"],
  [OAUTH_ROUTES.registration]: ["POST"],
  [OAUTH_ROUTES.revocation]: ["POST"],
  [OAUTH_ROUTES.jwks]: ["GET"]
}

/** Every route here and its methods, for the boundary's 405 and `Allow`. */
export const OAUTH_PATHS: Readonly<Record<string, ReadonlyArray<string>>> = {
  ...PROVIDER_PATHS,
  [PROTECTED_RESOURCE_PATH]: ["GET"],
  [`${PROTECTED_RESOURCE_PATH}${MCP_PATH}`]: ["GET"],
  "/oauth/consent/:uid": ["GET", "POST"]
}

/** The `WWW-Authenticate` of a 401 from `/mcp`: where its metadata is (MCP authorization; RFC 9728 section 5.1). */
export const mcpChallenge = (issuer: string) =>
  `Bearer realm="dropshelf", resource_metadata="${issuer}${PROTECTED_RESOURCE_PATH}${MCP_PATH}", scope="${Scope.SCOPES.join(" ")}"`

const nodeOf = (request: HttpServerRequest.HttpServerRequest) => ({
  req: NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage,
  res: NodeHttpServerRequest.toServerResponse(request) as ServerResponse
})

const scopesOf = (form: UrlParams.UrlParams): ReadonlyArray<string> => UrlParams.getAll(form, "scope")

export const OAuthRoutes = Layer.unwrap(Effect.gen(function*() {
  const oauth = yield* AuthorizationServer
  const operators = yield* Operators.Operators
  const limiter = yield* RateLimiter.RateLimiter
  const { callerOf, signedInForm } = yield* SignedIn.make

  const metadata = HttpServerResponse.jsonUnsafe({
    resource: oauth.resource,
    authorization_servers: [oauth.issuer],
    scopes_supported: [...Scope.SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "dropshelf",
    resource_documentation: `${oauth.issuer}/docs`
  }, { headers: { "cache-control": "public, max-age=3600" } })

  /** The provider answers on the Node response itself; the router is told the status it gave. */
  const delegated = HttpServerRequest.HttpServerRequest.use((request) =>
    Effect.gen(function*() {
      const exchange = yield* CurrentExchange
      const { req, res } = nodeOf(request)
      res.setHeader("x-request-id", exchange.requestId)
      yield* oauth.handle(req, res)
      return HttpServerResponse.empty({ status: res.statusCode })
    })
  )

  /** Open registration (RFC 7591), limited per client address. */
  const registration = HttpServerRequest.HttpServerRequest.use((request) =>
    Effect.gen(function*() {
      const rate = yield* limiter.hit(`oauth-register:${addressOf(request)}`, oauth.registrationsPerMinute)
      if (rate.allowed) return yield* delegated
      const retryAfter = Math.max(1, Math.ceil((rate.resetAt - (yield* Clock.currentTimeMillis)) / 1000))
      return HttpServerResponse.jsonUnsafe({
        error: "temporarily_unavailable",
        error_description: `This address has registered ${oauth.registrationsPerMinute} clients this minute; retry after ${retryAfter} s`
      }, { status: 429, headers: { "retry-after": String(retryAfter), "cache-control": "no-store" } })
    })
  )

  /** The interaction this browser started (its cookie), when it is the one the path names. */
  const interactionOf = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function*() {
      const { uid } = yield* HttpRouter.params
      const { req, res } = nodeOf(request)
      const provider = yield* oauth.provider
      const details = yield* Effect.promise(() => provider.interactionDetails(req, res).catch(() => undefined))
      return details !== undefined && details.uid === uid ? details : undefined
    })

  const viewOf = Effect.fnUntraced(function*(
    details: NonNullable<Effect.Success<ReturnType<typeof interactionOf>>>,
    caller: SignedIn.SignedInCaller
  ) {
    const clientId = String(details.params.client_id)
    const provider = yield* oauth.provider
    const client = yield* Effect.promise(() => provider.Client.find(clientId).catch(() => undefined))
    const redirectTo = new URL(String(details.params.redirect_uri))
    return {
      uid: details.uid,
      clientId,
      clientName: client?.clientName ?? (clientId.startsWith("https://") ? new URL(clientId).host : "An unnamed application"),
      redirectTo,
      requested: Scope.scopesOf(typeof details.params.scope === "string" ? details.params.scope : undefined),
      accountName: caller.account.name,
      planName: Plan.effectivePlan(caller.account.plan).name
    } satisfies ConsentPages.ConsentView
  })

  const consentPage = HttpServerRequest.HttpServerRequest.use((request) =>
    Effect.gen(function*() {
      const details = yield* interactionOf(request)
      if (details === undefined) return page(ConsentPages.expired(), 400)
      const caller = yield* callerOf(request)
      if (caller === undefined) return seeOther("/signin", { "set-cookie": returnCookie(consentPath(details.uid)) })
      const view = yield* viewOf(details, caller)
      return page(ConsentPages.consent(view, caller.signedIn), 200, pageHeadersRedirectingTo(view.redirectTo))
    })
  )

  const decide = signedInForm((caller, form, request) =>
    Effect.gen(function*() {
      const details = yield* interactionOf(request)
      if (details === undefined) return page(ConsentPages.expired(), 400)
      const view = yield* viewOf(details, caller)
      const { req, res } = nodeOf(request)
      const provider = yield* oauth.provider
      const finish = (result: InteractionResults) =>
        Effect.map(
          Effect.promise(() => provider.interactionResult(req, res, result, { mergeWithLastSubmission: false })),
          (location) => seeOther(location, pageHeadersRedirectingTo(view.redirectTo))
        )
      if (SignedIn.field(form, "decision") === "deny") {
        return yield* finish({ error: "access_denied", error_description: "The person declined to connect the application" })
      }
      const allowed = new Set(scopesOf(form))
      const scopes = view.requested.filter((scope) => scope === "read" || allowed.has(scope))
      const grant = new provider.Grant({ accountId: caller.account.id, clientId: view.clientId })
      // The scopes are the resource's, and also listed in the server's metadata, which makes them OIDC scopes to the library.
      grant.addOIDCScope(scopes.join(" "))
      grant.addResourceScope(oauth.resource, scopes.join(" "))
      const declined = view.requested.filter((scope) => !scopes.includes(scope)).join(" ")
      if (declined !== "") {
        grant.rejectOIDCScope(declined)
        grant.rejectResourceScope(oauth.resource, declined)
      }
      const grantId = yield* Effect.promise(() => grant.save())
      const now = yield* Clock.currentTimeMillis
      const connected = yield* Effect.result(operators.connectApplication(
        caller.account.id,
        { clientId: view.clientId, clientName: view.clientName, grantId, scopes },
        now + GRANT_TTL_S * 1000
      ))
      if (Result.isFailure(connected)) {
        yield* Effect.promise(() => grant.destroy())
        const refusal = connected.failure._tag === "KeyLimitReached"
          ? `Your plan allows ${connected.failure.limit} live keys, connected applications included, and you have them all. Revoke one under Keys, then allow again.`
          : "Your account could not be found; sign in again."
        return page(ConsentPages.consent(view, caller.signedIn, refusal), 409, pageHeadersRedirectingTo(view.redirectTo))
      }
      return yield* finish({ login: { accountId: caller.account.id }, consent: { grantId } })
    })
  )

  return Layer.mergeAll(
    HttpRouter.add("GET", PROTECTED_RESOURCE_PATH, Effect.succeed(metadata)),
    HttpRouter.add("GET", `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`, Effect.succeed(metadata)),
    ...Object.entries(PROVIDER_PATHS).flatMap(([path, methods]) =>
      methods.map((method) =>
        HttpRouter.add(method, path as `/${string}`, path === OAUTH_ROUTES.registration ? registration : delegated)
      )
    ),
    HttpRouter.add("GET", "/oauth/consent/:uid", consentPage),
    HttpRouter.add("POST", "/oauth/consent/:uid", decide)
  )
}))
