/** In-memory SessionStore. */
import { Effect, Layer, Option } from "effect"
import { SessionStore } from "../../core/members/sessions.ts"
import { MemoryDb } from "./db.ts"

export const layer = Layer.effect(
  SessionStore,
  Effect.map(MemoryDb, (db) =>
    SessionStore.of({
      insertLink: (link) => Effect.sync(() => void db.state.signInLinks.set(link.hash, link)),
      countLinksSince: (email, since) =>
        Effect.sync(() =>
          [...db.state.signInLinks.values()].filter((l) =>
            l.email === email && Date.parse(l.createdAt) >= Date.parse(since)
          )
            .length
        ),
      redeemLink: (hash, at) =>
        Effect.sync(() => {
          const link = db.state.signInLinks.get(hash)
          if (link === undefined || link.usedAt !== null || Date.parse(link.expiresAt) <= Date.parse(at)) {
            return Option.none()
          }
          const used = { ...link, usedAt: at }
          db.state.signInLinks.set(hash, used)
          return Option.some(used)
        }),
      insertSession: (s) => Effect.sync(() => void db.state.memberSessions.set(s.hash, s)),
      findSession: (hash) =>
        Effect.sync(() => {
          const s = db.state.memberSessions.get(hash)
          // A removed member's sessions go with it, as the SQL store's foreign key does.
          return s !== undefined && db.state.members.has(s.memberId) ? Option.some(s) : Option.none()
        }),
      touchSession: (hash, at) =>
        Effect.sync(() => {
          const s = db.state.memberSessions.get(hash)
          if (s !== undefined) db.state.memberSessions.set(hash, { ...s, lastUsedAt: at })
        }),
      setSessionMember: (hash, memberId) =>
        Effect.sync(() => {
          const s = db.state.memberSessions.get(hash)
          if (s !== undefined) db.state.memberSessions.set(hash, { ...s, memberId })
        }),
      removeSession: (hash) => Effect.sync(() => db.state.memberSessions.delete(hash))
    }))
)
