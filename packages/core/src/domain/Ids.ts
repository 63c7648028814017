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

/** Builds a listing id from 8 random bytes (the caller supplies them from a secure source). */
export const listingIdFromBytes = (bytes: Uint8Array): ListingId => {
  let id = ""
  for (let i = 0; i < 8; i++) id += alphabet[bytes[i]! % alphabet.length]
  return id as ListingId
}
