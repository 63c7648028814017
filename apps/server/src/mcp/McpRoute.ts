import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Context, Effect, Exit, Layer, Result, Schema } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { Directory, Quote, type RateLimiter, Scope, Watches } from "@dropshelf/core"
import { API_VERSION } from "@dropshelf/api/Api"
import type { ErrorFields } from "@dropshelf/api/ApiErrors"
import { refusalOf } from "../http/AddressGate.ts"
import { Admission } from "../http/Admission.ts"
import { type DomainError, toApiError, UpgradeUrl } from "../http/ErrorMapping.ts"
import { CurrentExchange } from "../http/Exchange.ts"
import { errorResponse, isBodyTooLarge, tooLarge, WWW_AUTHENTICATE } from "../http/Refusals.ts"
import { serverFaultMessage } from "../http/RequestId.ts"
import { idempotencyKeyArg, RenderedJson, REPLAYED_META, TOOLS, type ToolDefinition } from "./Tools.ts"

/*
 * The MCP endpoint: Streamable HTTP at `/mcp`, stateless (no session; every POST stands
 * alone, so any instance behind a load balancer can answer it). Each POST is authenticated
 * with the same Bearer keys as the REST API, through the same address gate (refused keys are
 * limited per client address), and counted against the same per-key
 * `RateLimiter` window, before the MCP SDK sees it: once, and once more for every tool call
 * after the first that a JSON-RPC batch carries, so a batch is no way around the limit. Tool
 * refusals are tool results with `isError: true` carrying the REST error envelope, built by
 * the same error table.
 */

export const MCP_PATH = "/mcp"

const INSTRUCTIONS =
  "dropshelf is a directory of expired and dropped domain names that still have backlinks. Search with search_listings, " +
  "read one with get_listing, reveal a masked name with reveal_listing (the only tool that spends from the monthly allowance), " +
  "reserve it inside the service with hold_listing (this does not register the name). A refused call is a result with isError " +
  "whose structuredContent is {error: {code, message, ...}}: branch on reveal_code / hold_code, wait for resets_at / expires_at / " +
  "available_at, and after rate_limited retry after retry_after seconds. Tool calls and REST requests share one per-minute limit per key."

const TOOL_BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]))

/**
 * The MCP SDK (and the zod it brings), loaded by the first `/mcp` request rather than at start:
 * a server that no assistant talks to does not hold it (docs/performance.md, idle memory).
 */
const loadSdk = async () => {
  const [server, transport, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js")
  ])
  return {
    Server: server.Server,
    Transport: transport.WebStandardStreamableHTTPServerTransport,
    ...types
  }
}
type Sdk = Awaited<ReturnType<typeof loadSdk>>
let sdk: Promise<Sdk> | undefined

const toolListing = (tool: ToolDefinition) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: tool.inputSchema,
  outputSchema: tool.outputSchema,
  annotations: tool.annotations
})

const succeeded = (value: unknown): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  structuredContent: value as Record<string, unknown>
})

/** A result as the REST endpoint renders it: its text as sent, and that text parsed. */
const rendered = (text: string): CallToolResult => ({
  content: [{ type: "text", text }],
  structuredContent: JSON.parse(text)
})

/** A refusal as a tool result: the REST envelope in `structuredContent` and as text. */
export const refused = (fields: ErrorFields & { readonly retry_after?: number }): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: JSON.stringify({ error: fields }) }],
  structuredContent: { error: fields }
})

/** Whether a JSON-RPC body is a (single) `tools/call` request: over the limit, it is answered as a tool result. */
const isToolCall = (body: unknown): boolean =>
  typeof body === "object" && body !== null && !Array.isArray(body) && (body as { method?: unknown }).method === "tools/call"

const FORWARDED_HEADERS = ["accept", "content-type", "mcp-protocol-version", "mcp-session-id", "last-event-id"]

/** A rate decision and, when it refuses, the seconds until the window turns. */
interface ToolAdmission {
  readonly rate: RateLimiter.RateDecision
  readonly retryAfter: number
}

interface CallContext {
  readonly directory: Directory.Directory["Service"]
  readonly watches: Watches.Watches["Service"]
  readonly caller: Directory.KeyCaller
  /** The rate decision for one tool call of this POST: the POST's own count for the first, a new count for each later one. */
  readonly admit: () => Promise<ToolAdmission>
  readonly context: Context.Context<never>
}

/**
 * A tool's result: for a write called with an `idempotency_key`, run once per key of the account
 * (shared with REST's `Idempotency-Key`), a replayed result marked in `_meta`; otherwise as the
 * tool runs. Refusals are results; only faults are left in the error channel.
 */
const resultOf = (tool: ToolDefinition, call: CallContext, rate: RateLimiter.RateDecision, args: Record<string, unknown>) => {
  const encoded = (value: unknown) =>
    value instanceof RenderedJson
      ? Effect.sync(() => rendered(value.text))
      : Effect.map(
        Effect.orDie(Schema.encodeUnknownEffect(tool.success)(value) as Effect.Effect<unknown, Schema.SchemaError>),
        succeeded
      )
  const write = tool.write
  return Effect.gen(function*() {
    const upgradeUrl = yield* UpgradeUrl
    const refusal = (error: DomainError) => refused(toApiError(error, tool.operation, upgradeUrl).error)
    const key = write === undefined ? undefined : yield* idempotencyKeyArg(args)
    if (write === undefined || key === undefined) {
      return yield* Effect.flatMap(tool.run(call.directory, call.caller, rate, args, call.watches), encoded)
    }
    const answer = yield* call.directory.idempotent(call.caller, key, yield* write(args))
    const result = Result.isSuccess(answer.result) ? yield* encoded(answer.result.success) : refusal(answer.result.failure)
    return answer.replayed ? { ...result, _meta: { [REPLAYED_META]: true } } : result
  }).pipe(Effect.catch((error) => Effect.map(UpgradeUrl, (upgradeUrl) => refused(toApiError(error, tool.operation, upgradeUrl).error))))
}

const callTool = async (mcp: Sdk, call: CallContext, name: string, args: Record<string, unknown>): Promise<CallToolResult> => {
  const tool = TOOL_BY_NAME.get(name)
  if (tool === undefined) {
    throw new mcp.McpError(mcp.ErrorCode.InvalidParams, `Unknown tool ${Quote.quote(String(name))}; tools: ${TOOLS.map((t) => t.name).join(", ")}`)
  }
  const { rate, retryAfter } = await call.admit()
  if (!rate.allowed) {
    return refused({
      code: "rate_limited",
      message: `This key is over its ${rate.limit} requests per minute (REST and tool calls together); retry after ${retryAfter} s`,
      retry_after: retryAfter
    })
  }
  const granted = call.caller.key.application?.scopes
  if (!Scope.allows(granted, tool.scope)) {
    return refused({
      code: "forbidden",
      message: `This connection was not granted ${Quote.quote(tool.scope)} (${Scope.SCOPE_DESCRIPTIONS[tool.scope]}); ` +
        `it has ${(granted ?? []).join(", ")}. Connect the application again and allow it`
    })
  }
  const exit = await Effect.runPromiseExitWith(call.context)(resultOf(tool, call, rate, args))
  if (Exit.isSuccess(exit)) return exit.value
  Effect.runSyncWith(call.context)(
    Effect.logError(`tool ${tool.name} failed`).pipe(
      Effect.annotateLogs({ path: MCP_PATH, tool: tool.name, fault: Cause.pretty(exit.cause) })
    )
  )
  return refused({
    code: "server_error",
    message: serverFaultMessage("The service failed; retry with backoff", Context.get(call.context, CurrentExchange).requestId),
    ...(tool.operation === "reveal" ? { reveal_code: "REVEAL_FAILED" as const } : {})
  })
}

const INTERNAL_ERROR = -32603
const INVALID_PARAMS = -32602

/**
 * The SDK answers a request whose params its own schema refuses (`tools/list` with a number for
 * `cursor`, say) with -32603, internal error, and zod's issues as JSON text for the message.
 * JSON-RPC names that -32602, invalid params; the message becomes the first issue, by path.
 * Any other error is left as the SDK gave it.
 */
const asInvalidParams = (error: { readonly code: number; readonly message: string }) => {
  if (error.code !== INTERNAL_ERROR) return error
  let issues: unknown
  try {
    issues = JSON.parse(error.message)
  } catch {
    return error
  }
  const first = Array.isArray(issues) ? issues[0] : undefined
  if (typeof first !== "object" || first === null || !Array.isArray(first.path) || typeof first.message !== "string") return error
  return { code: INVALID_PARAMS, message: `Invalid params: ${first.path.join(".")}: ${first.message}` }
}

/** The transport's JSON answer with every schema refusal as invalid params (`asInvalidParams`). */
const withInvalidParams = async (response: Response): Promise<Response> => {
  if (!(response.headers.get("content-type") ?? "").startsWith("application/json")) return response
  const text = await response.text()
  const rewrite = (message: any) =>
    typeof message === "object" && message !== null && typeof message.error === "object" && message.error !== null
      ? { ...message, error: asInvalidParams(message.error) }
      : message
  let body = text
  if (text.includes(String(INTERNAL_ERROR))) {
    const parsed = JSON.parse(text)
    body = JSON.stringify(Array.isArray(parsed) ? parsed.map(rewrite) : rewrite(parsed))
  }
  const headers = new Headers(response.headers)
  headers.delete("content-length")
  return new Response(body, { status: response.status, statusText: response.statusText, headers })
}

/** One MCP exchange on a fresh SDK server and stateless transport, closed once the answer is ready. */
const exchange = async (call: CallContext, url: string, headers: Record<string, string>, body: string, parsed: unknown) => {
  const mcp = await (sdk ??= loadSdk())
  const server = new mcp.Server(
    { name: "dropshelf", title: "dropshelf — expired-domain directory", version: API_VERSION },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS }
  )
  server.setRequestHandler(mcp.ListToolsRequestSchema, () => ({ tools: TOOLS.map(toolListing) }))
  server.setRequestHandler(mcp.CallToolRequestSchema, (request) =>
    callTool(mcp, call, request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>))
  const transport = new mcp.Transport({ enableJsonResponse: true })
  await server.connect(transport)
  try {
    const request = new Request(url, { method: "POST", headers, body })
    return await withInvalidParams(await transport.handleRequest(request, parsed === undefined ? {} : { parsedBody: parsed }))
  } finally {
    await transport.close()
    await server.close()
  }
}

const handle = (
  directory: Directory.Directory["Service"],
  watches: Watches.Watches["Service"],
  admission: Admission["Service"]
) =>
  Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest) {
    const current = yield* CurrentExchange
    const authenticated = yield* Effect.result(admission.authenticate(current, request))
    if (Result.isFailure(authenticated)) {
      const failure = authenticated.failure
      if (failure._tag === "AddressLimited") return errorResponse(429, refusalOf(failure).fields)
      return errorResponse(401, toApiError(failure, "read").error, { "www-authenticate": WWW_AUTHENTICATE })
    }
    const caller = authenticated.success
    // One count per POST, in the same window as the key's REST requests; a batch's later tool
    // calls count again (admit). The boundary puts the lowest remaining on the answer.
    const count = Effect.map(admission.count(current, caller), ({ rate, refusal }) => ({ rate, retryAfter: refusal?.retry_after ?? 0 }))
    const first = yield* count
    const { rate, retryAfter } = first
    const read = yield* Effect.result(request.text)
    if (Result.isFailure(read)) {
      // A body without a declared length met the cap while read: the 413 this POST's count goes with.
      if (isBodyTooLarge(read.failure)) return tooLarge()
      return yield* Effect.fail(read.failure)
    }
    const body = read.success
    let parsed: unknown = undefined
    try {
      parsed = JSON.parse(body)
    } catch {
      // Left to the SDK, which answers a JSON-RPC parse error.
    }
    if (!rate.allowed && !isToolCall(parsed)) {
      return errorResponse(429, {
        code: "rate_limited",
        message: `This key is over its ${rate.limit} requests per minute (REST and tool calls together); retry after ${retryAfter} s`,
        retry_after: retryAfter
      })
    }
    const forwarded: Record<string, string> = {}
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers[name]
      if (value !== undefined) forwarded[name] = value
    }
    const context = yield* Effect.context<never>()
    let admitted = 0
    const admit = async (): Promise<ToolAdmission> => {
      if (admitted++ === 0) return first
      return Effect.runPromiseWith(context)(count)
    }
    const response = yield* Effect.promise(() =>
      exchange({ directory, watches, caller, admit, context }, `http://localhost${request.url}`, forwarded, body, parsed)
    )
    return HttpServerResponse.fromWeb(response)
  })

/** The `/mcp` route; needs `Directory`, `Watches` and `Admission`, the same instances the REST routes use. */
export const McpRoute = Layer.unwrap(Effect.gen(function*() {
  const directory = yield* Directory.Directory
  const watches = yield* Watches.Watches
  const admission = yield* Admission
  // POST only: stateless, so no server-initiated stream (GET) and no session to delete (DELETE);
  // the boundary answers other methods 405.
  return HttpRouter.add("POST", MCP_PATH, handle(directory, watches, admission))
}))
