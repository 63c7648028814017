import { Context, type Effect } from "effect"
import type { Instant } from "../domain/Time.ts"

/** A sign-in link to mail: the adapter builds the link's URL from the token. */
export interface SignInMessage {
  readonly to: string
  readonly token: string
  readonly expiresAt: Instant
  /** `sign-up`: the account was created for this address just now; `sign-in`: it existed. */
  readonly purpose: "sign-in" | "sign-up"
}

/**
 * Mails sign-in links (the server's SMTP adapter). Where no layer provides it, no mail is
 * configured: email sign-in is off, and open sign-up says it needs mail. A failure to send is a
 * defect, logged by the caller: the person asking is never told, as they are never told whether
 * the address has an account.
 */
export class SignInMail extends Context.Service<SignInMail, {
  readonly send: (message: SignInMessage) => Effect.Effect<void>
}>()("@dropshelf/core/SignInMail") {}
