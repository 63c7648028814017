import { Passkey, PasskeyStore } from "@dropshelf/core"
import { Effect } from "effect"

/** Passkeys and their challenges in memory; each operation is one synchronous step, so taking a challenge is atomic. */
export const make = () => {
  const challenges = new Map<string, Passkey.ChallengeRecord>()
  const passkeys = new Map<string, Passkey.PasskeyRecord>()

  return PasskeyStore.PasskeyStore.of({
    addChallenge: (challenge) =>
      Effect.sync(() => {
        for (const [id, kept] of challenges) if (!Passkey.isChallengeLive(kept, challenge.createdAt)) challenges.delete(id)
        challenges.set(challenge.id, challenge)
      }),
    takeChallenge: (id) =>
      Effect.sync(() => {
        const challenge = challenges.get(id)
        challenges.delete(id)
        return challenge
      }),
    addPasskey: (passkey) =>
      Effect.sync(() => {
        if (passkeys.has(passkey.id)) return false
        passkeys.set(passkey.id, passkey)
        return true
      }),
    findPasskey: (id) => Effect.sync(() => passkeys.get(id)),
    listPasskeys: (accountId) =>
      Effect.sync(() =>
        [...passkeys.values()].filter((passkey) => passkey.accountId === accountId).sort((a, b) => a.createdAt - b.createdAt)
      ),
    usePasskey: (id, counter, at) =>
      Effect.sync(() => {
        const passkey = passkeys.get(id)
        if (passkey !== undefined) passkeys.set(id, { ...passkey, counter, lastUsedAt: at })
      }),
    deletePasskey: (accountId, id) =>
      Effect.sync(() => {
        const passkey = passkeys.get(id)
        if (passkey === undefined || passkey.accountId !== accountId) return undefined
        passkeys.delete(id)
        return passkey
      })
  })
}
