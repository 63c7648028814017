import type { Instant } from "./Time.ts"

/*
 * The account's security log: what happened to its keys, sessions and passkeys, whoever did it (the
 * account area or the operator's CLI run the same use cases, and those record it).
 */

/** The kinds recorded here. */
export const KINDS = [
  "key.created",
  "key.revoked",
  "key.rotated",
  "session.signed_in",
  "session.signed_out",
  "session.signed_out_everywhere",
  "passkey.added",
  "passkey.deleted"
] as const

/**
 * An event's kind: one of KINDS, or another a later part adds, so the log, its stores
 * and its page take any kind and say what they know of each.
 */
export type Kind = (typeof KINDS)[number] | (string & {})

export interface SecurityEventRecord {
  readonly id: string
  readonly accountId: string
  readonly kind: Kind
  readonly at: Instant
  /** What the event concerns, as text: a key's prefix and name, how a session began ("link"). */
  readonly detail: string | null
}

export type NewSecurityEvent = Omit<SecurityEventRecord, "id">

/** How the log reads a key: its prefix and name. */
export const keyDetail = (key: { readonly prefix: string; readonly name: string }): string => `${key.prefix} (${key.name})`

/** How a session began: a one-time link, or a passkey. */
export const SIGNED_IN_BY_LINK = "link"
export const SIGNED_IN_BY_PASSKEY = "passkey"
