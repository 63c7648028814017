import { Context, Effect, Layer } from "effect"
import type { AttemptResult } from "../domain/Webhook.ts"

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * Sends one webhook request: POST, no redirects followed, a 15 s deadline, the receiver's
 * answer read only up to a cap, and (unless private receivers are allowed) the host's
 * addresses checked to be public when connecting. The HTTP lives in an adapter.
 */
export class WebhookSender extends Context.Service<WebhookSender, {
  readonly send: (request: WebhookRequest) => Effect.Effect<{ readonly result: AttemptResult; readonly durationMs: number }>
  /**
   * Why a receiver's URL may not be used, when it may not: its host does not resolve, or
   * resolves to an address that is not public. Asked when an owner sets a URL, unless private
   * receivers are allowed; `send` asks again at every delivery.
   */
  readonly vet: (url: string) => Effect.Effect<string | undefined>
}>()("@dropshelf/core/WebhookSender") {
  /** A sender that never reaches anyone: for deployments and tests without webhooks. */
  static readonly layerNone = Layer.succeed(WebhookSender, WebhookSender.of({
    send: () => Effect.succeed({ result: { _tag: "Failed", error: "webhooks are not sent by this process" }, durationMs: 0 }),
    vet: () => Effect.succeed(undefined)
  }))
}
