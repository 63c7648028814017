import { Result } from "effect"
import { InvalidRequest } from "./errors.ts"
import { MINUTE, type Instant } from "./Time.ts"
import { storable } from "./Text.ts"

/*
 * A passkey is a WebAuthn credential that signs a person in to the account area without a link.
 * The server keeps its public key and signature counter; the private key never leaves the
 * person's authenticator. Every ceremony answers a challenge the server issued, kept server-side,
 * spent at its first use and void after CHALLENGE_LIFETIME_MS
 * (docs/decisions/0804-passkeys.md).
 */

/** A challenge is spent at its first use, and void this long after it was issued. */
export const CHALLENGE_LIFETIME_MS = 5 * MINUTE

export const MAX_NAME_LENGTH = 100

export interface PasskeyRecord {
  /** The credential's id as the authenticator made it, base64url. */
  readonly id: string
  readonly accountId: string
  /** What the person called it ("laptop", "phone"). */
  readonly name: string
  /** The credential's COSE public key, base64url. */
  readonly publicKey: string
  /** The authenticator's signature counter at its last use (0 for authenticators that keep none). */
  readonly counter: number
  /** How the browser may reach the authenticator ("internal", "hybrid", "usb"…), as it said at registration. */
  readonly transports: ReadonlyArray<string>
  readonly createdAt: Instant
  readonly lastUsedAt: Instant | null
}

/**
 * A challenge the server issued for one ceremony: registering a passkey for the signed-in
 * session `sessionId`, or signing in (no session).
 */
export interface ChallengeRecord {
  readonly id: string
  readonly purpose: "register" | "authenticate"
  /** The random challenge, base64url, that the authenticator signs over. */
  readonly challenge: string
  /** The session a registration belongs to; `null` for a sign-in. */
  readonly sessionId: string | null
  readonly createdAt: Instant
  readonly expiresAt: Instant
}

/** Whether a challenge taken from the store may still answer a ceremony at `at`. */
export const isChallengeLive = (challenge: Pick<ChallengeRecord, "expiresAt">, at: Instant): boolean => at < challenge.expiresAt

/** A passkey's name as a person typed it, trimmed: 1 to MAX_NAME_LENGTH storable characters. */
export const decodeName = (text: string): Result.Result<string, InvalidRequest> =>
  Result.flatMap(storable("name", text.trim()), (name) =>
    name.length === 0 || name.length > MAX_NAME_LENGTH
      ? Result.fail(new InvalidRequest({ parameter: "name", message: `name accepts 1 to ${MAX_NAME_LENGTH} characters` }))
      : Result.succeed(name))
