import { Context, type Effect } from "effect"
import type { PasskeyRefused } from "../domain/errors.ts"

/**
 * The WebAuthn protocol: the options a browser needs for a ceremony, and the cryptographic
 * verification of an authenticator's answer (its signature, the origin and relying party it was
 * made for, the challenge it signed, user verification, the counter). An adapter implements it
 * with a WebAuthn library; the core's `Passkeys` decides which challenge and which credential an
 * answer must match, so what makes a valid passkey sign-in is written there once.
 */

/** Who the browser must believe it talks to: the relying party's id (a host name) and the origins a ceremony may come from. */
export interface RelyingParty {
  readonly id: string
  readonly name: string
  readonly origins: ReadonlyArray<string>
}

/** What verifying a registration yields: the new credential. */
export interface NewCredential {
  readonly id: string
  /** COSE public key, base64url. */
  readonly publicKey: string
  readonly counter: number
  readonly transports: ReadonlyArray<string>
}

export class WebAuthn extends Context.Service<WebAuthn, {
  /** The JSON a browser passes to `navigator.credentials.create`: a discoverable credential with user verification. */
  readonly registrationOptions: (request: {
    readonly rp: RelyingParty
    readonly challenge: string
    /** The WebAuthn user handle (no personal data) and the name the authenticator shows. */
    readonly userId: string
    readonly userName: string
    /** The account's passkeys, which the authenticator must not register again. */
    readonly exclude: ReadonlyArray<{ readonly id: string; readonly transports: ReadonlyArray<string> }>
  }) => Effect.Effect<unknown>
  /** The registration response `response` (the browser's JSON), verified against the challenge and relying party. */
  readonly verifyRegistration: (request: {
    readonly rp: RelyingParty
    readonly challenge: string
    readonly response: unknown
  }) => Effect.Effect<NewCredential, PasskeyRefused>
  /** The JSON a browser passes to `navigator.credentials.get`: any discoverable credential of this relying party. */
  readonly authenticationOptions: (request: { readonly rp: RelyingParty; readonly challenge: string }) => Effect.Effect<unknown>
  /** The credential id an authentication response names, when it has the shape of one. */
  readonly credentialIdOf: (response: unknown) => string | undefined
  /** The authentication response verified against the challenge, relying party and stored credential; the new counter. */
  readonly verifyAuthentication: (request: {
    readonly rp: RelyingParty
    readonly challenge: string
    readonly response: unknown
    readonly credential: { readonly id: string; readonly publicKey: string; readonly counter: number; readonly transports: ReadonlyArray<string> }
  }) => Effect.Effect<{ readonly counter: number }, PasskeyRefused>
}>()("@dropshelf/core/WebAuthn") {}
