import { Session, SessionStore } from "@dropshelf/core"
import { Effect } from "effect"

/** Sign-in links and sessions in memory; each operation is one synchronous step, so a redeem is atomic. */
export const make = (accountExists: (id: string) => boolean) => {
  const links = new Map<string, Session.SignInLinkRecord>()
  const sessions = new Map<string, Session.SessionRecord>()
  const byDigest = new Map<string, string>()
  let sequence = 0

  const endAt = (id: string, at: number) => {
    const session = sessions.get(id)
    if (session === undefined || session.endedAt !== null) return false
    sessions.set(id, { ...session, endedAt: at })
    return true
  }

  const insert = (accountId: string, session: { readonly digest: string; readonly expiresAt: number }, at: number) => {
    const record: Session.SessionRecord = {
      id: `sess_${(++sequence).toString(36).padStart(6, "0")}`,
      accountId,
      digest: session.digest,
      createdAt: at,
      lastSeenAt: at,
      expiresAt: session.expiresAt,
      endedAt: null
    }
    sessions.set(record.id, record)
    byDigest.set(record.digest, record.id)
    return record
  }

  return SessionStore.SessionStore.of({
    issueLink: (link) => Effect.sync(() => void links.set(link.digest, { ...link, usedAt: null })),
    redeemLink: ({ at, linkDigest, session }) =>
      Effect.sync(() => {
        const link = links.get(linkDigest)
        if (link === undefined || !Session.isRedeemable(link, at) || !accountExists(link.accountId)) return undefined
        links.set(linkDigest, { ...link, usedAt: at })
        return insert(link.accountId, session, at)
      }),
    createSession: ({ accountId, at, session }) => Effect.sync(() => (accountExists(accountId) ? insert(accountId, session, at) : undefined)),
    findSession: (digest) =>
      Effect.sync(() => {
        const id = byDigest.get(digest)
        return id === undefined ? undefined : sessions.get(id)
      }),
    touchSession: (id, at) =>
      Effect.sync(() => {
        const session = sessions.get(id)
        if (session !== undefined && at > session.lastSeenAt) sessions.set(id, { ...session, lastSeenAt: at })
      }),
    endSession: (id, at) => Effect.sync(() => void endAt(id, at)),
    endAccountSessions: (accountId, at) =>
      Effect.sync(() => {
        let ended = 0
        for (const session of sessions.values()) if (session.accountId === accountId && endAt(session.id, at)) ended++
        return ended
      }),
    prune: (before) =>
      Effect.sync(() => {
        let prunedLinks = 0
        let prunedSessions = 0
        for (const [digest, link] of links) {
          if (Session.linkOverAt(link) < before) {
            links.delete(digest)
            prunedLinks++
          }
        }
        for (const [id, session] of sessions) {
          if (Session.overAt(session) < before) {
            sessions.delete(id)
            byDigest.delete(session.digest)
            prunedSessions++
          }
        }
        return { links: prunedLinks, sessions: prunedSessions }
      })
  })
}
