import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse
} from "@simplewebauthn/server"
import type { AuthenticationResponseJSON, AuthenticatorTransport, RegistrationResponseJSON } from "@simplewebauthn/server"
import { Effect, Layer } from "effect"
import { Base64Url } from "effect/encoding"
import { Errors, WebAuthn } from "@dropshelf/core"

/*
 * The core's WebAuthn port over @simplewebauthn/server (docs/decisions/0804-passkeys.md): it
 * builds the ceremonies' options and verifies an authenticator's answer (signature, challenge,
 * origin, relying party id, user verification, counter). An answer that is not even shaped
 * like one is refused as any other.
 */

const bytesOf = (base64url: string): Uint8Array<ArrayBuffer> => {
  const decoded = Base64Url.decode(base64url)
  return new Uint8Array(decoded._tag === "Success" ? decoded.success : new Uint8Array(0))
}

/**
 * EdDSA, ES256 and RS256, what every authenticator offers; named, so the library does not probe
 * Node's experimental post-quantum Web Crypto (and print a warning) to choose.
 */
const ALGORITHMS = [-8, -7, -257]

const transportsOf = (transports: ReadonlyArray<string>) => transports as Array<AuthenticatorTransport>

/** A verification that throws or says no is one refusal. */
const refusedUnless = <A>(verify: () => Promise<A | undefined>) =>
  Effect.tryPromise({ try: verify, catch: () => new Errors.PasskeyRefused() }).pipe(
    Effect.flatMap((result) => (result === undefined ? Effect.fail(new Errors.PasskeyRefused()) : Effect.succeed(result)))
  )

export const layer = Layer.succeed(WebAuthn.WebAuthn, {
  registrationOptions: ({ challenge, exclude, rp, userId, userName }) =>
    Effect.promise(() =>
      generateRegistrationOptions({
        rpName: rp.name,
        rpID: rp.id,
        userID: new TextEncoder().encode(userId),
        userName,
        challenge: bytesOf(challenge),
        attestationType: "none",
        excludeCredentials: exclude.map((passkey) => ({ id: passkey.id, transports: transportsOf(passkey.transports) })),
        authenticatorSelection: { residentKey: "required", userVerification: "required" },
        supportedAlgorithmIDs: ALGORITHMS
      })
    ),
  verifyRegistration: ({ challenge, response, rp }) =>
    refusedUnless(async () => {
      const result = await verifyRegistrationResponse({
        response: response as RegistrationResponseJSON,
        expectedChallenge: challenge,
        expectedOrigin: [...rp.origins],
        expectedRPID: rp.id,
        requireUserVerification: true,
        supportedAlgorithmIDs: ALGORITHMS
      })
      if (!result.verified) return undefined
      const { credential } = result.registrationInfo
      return {
        id: credential.id,
        publicKey: Base64Url.encode(credential.publicKey),
        counter: credential.counter,
        transports: credential.transports ?? []
      } satisfies WebAuthn.NewCredential
    }),
  authenticationOptions: ({ challenge, rp }) =>
    Effect.promise(() => generateAuthenticationOptions({ rpID: rp.id, challenge: bytesOf(challenge), userVerification: "required" })),
  credentialIdOf: (response) => {
    const id = typeof response === "object" && response !== null ? (response as { id?: unknown }).id : undefined
    return typeof id === "string" && id !== "" ? id : undefined
  },
  verifyAuthentication: ({ challenge, credential, response, rp }) =>
    refusedUnless(async () => {
      const result = await verifyAuthenticationResponse({
        response: response as AuthenticationResponseJSON,
        expectedChallenge: challenge,
        expectedOrigin: [...rp.origins],
        expectedRPID: rp.id,
        credential: { id: credential.id, publicKey: bytesOf(credential.publicKey), counter: credential.counter, transports: transportsOf(credential.transports) },
        requireUserVerification: true
      })
      return result.verified ? { counter: result.authenticationInfo.newCounter } : undefined
    })
})
