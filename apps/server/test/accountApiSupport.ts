import { Operators, type Plan } from "@dropshelf/core"
import { accountWithLink } from "./accountSupport.ts"
import { addListings, call, listing, newId, type Running } from "./harness.ts"

/* What the tests of the holds, reveals, watches and security pages share: an account with a sign-in link and an API key. */

/** An account on `plan` with a sign-in link and one API key. */
export const accountWithKey = async (server: Running, plan: Plan.StoredPlan, name: string) => {
  const linked = await accountWithLink(server, plan, name)
  const { key, secret } = await server.run(Operators.Operators.use((operators) => operators.createKey(linked.account.id, `${name}-api`)))
  return { ...linked, secret, prefix: key.prefix }
}

/** A fresh listing, revealed through the API with `secret`; its id and domain. */
export const revealedListing = async (server: Running, secret: string) => {
  const domain = `page-${newId().toLowerCase()}.com`
  const input = listing({ domain })
  await addListings(server, [input])
  const revealed = await call(server, "POST", `/api/v1/domains/${input.id}/reveal`, { key: secret })
  if (revealed.status !== 200) throw new Error(`reveal failed: ${revealed.status} ${revealed.text}`)
  return { id: input.id as string, domain }
}

/** A hold started through the API on a fresh listing; the API's view of it. */
export const heldThroughApi = async (server: Running, secret: string) => {
  const { id } = await revealedListing(server, secret)
  const held = await call(server, "POST", `/api/v1/domains/${id}/hold`, { key: secret })
  if (held.status !== 200) throw new Error(`hold failed: ${held.status} ${held.text}`)
  return held.body.hold as { readonly id: string; readonly listing_id: string; readonly expires_at: string }
}

/** The account's holds as GET /api/v1/holds lists them. */
export const apiHolds = async (server: Running, secret: string) =>
  (await call(server, "GET", "/api/v1/holds", { key: secret })).body.data as ReadonlyArray<{
    readonly id: string
    readonly state: string
    readonly expires_at: string
    readonly can_extend: boolean
  }>

