import { Schema } from "effect"

/** Listing ids: exactly 8 characters of `[A-Za-z0-9]`, case-sensitive, stored and sent back verbatim. */
export const ListingId = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^[A-Za-z0-9]{8}$/, { description: "8 characters of A-Z, a-z, 0-9" })),
  Schema.brand("ListingId")
)
export type ListingId = typeof ListingId.Type

export const AccountId = Schema.String.pipe(Schema.brand("AccountId"))
export type AccountId = typeof AccountId.Type

export const HoldId = Schema.String.pipe(Schema.brand("HoldId"))
export type HoldId = typeof HoldId.Type

export const KeyId = Schema.String.pipe(Schema.brand("KeyId"))
export type KeyId = typeof KeyId.Type

const listingIdPattern = /^[A-Za-z0-9]{8}$/

/** A guard for raw strings at the edge; a non-matching id simply names no listing. */
export const isListingId = (value: string): value is ListingId => listingIdPattern.test(value)

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/** 248 = 4 × 62: bytes at or above it are drawn again, so every character is equally likely. */
const unbiasedBelow = alphabet.length * Math.floor(256 / alphabet.length)

/**
 * A uniformly random listing id. `randomBytes` is a secure source the caller supplies; it is
 * called again for as long as bytes had to be discarded.
 */
export const randomListingId = (randomBytes: () => Uint8Array): ListingId => {
  let id = ""
  while (id.length < 8) {
    for (const byte of randomBytes()) {
      if (byte >= unbiasedBelow) continue
      id += alphabet[byte % alphabet.length]
      if (id.length === 8) break
    }
  }
  return id as ListingId
}
