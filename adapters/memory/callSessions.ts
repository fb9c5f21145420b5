/** In-memory CallSessionStore. */
import { Effect, Layer, Option } from "effect"
import { CallSessionStore } from "../../core/calls/sessions.ts"
import { MemoryDb } from "./db.ts"

export const layer = Layer.effect(
  CallSessionStore,
  Effect.map(MemoryDb, (db) =>
    CallSessionStore.of({
      insert: (session) =>
        Effect.sync(() => {
          if (db.state.callSessions.has(session.carrierCallId)) return false
          db.state.callSessions.set(session.carrierCallId, session)
          return true
        }),
      get: (carrierCallId) => Effect.sync(() => Option.fromNullable(db.state.callSessions.get(carrierCallId))),
      findByConversation: (conversationId) =>
        Effect.sync(() =>
          Option.fromNullable([...db.state.callSessions.values()].find((s) => s.conversationId === conversationId))
        ),
      findByCallId: (callId) =>
        Effect.sync(() =>
          Option.fromNullable([...db.state.callSessions.values()].find((s) => s.reservedActivityId === callId))
        ),
      put: (session) => Effect.sync(() => void db.state.callSessions.set(session.carrierCallId, session)),
      rename: (from, carrierCallId, callControlId) =>
        Effect.sync(() => {
          const found = db.state.callSessions.get(from)
          if (found === undefined) return Option.none()
          const renamed = { ...found, carrierCallId, callControlId: callControlId ?? found.callControlId }
          db.state.callSessions.delete(from)
          db.state.callSessions.set(carrierCallId, renamed)
          return Option.some(renamed)
        }),
      remove: (carrierCallId) => Effect.sync(() => void db.state.callSessions.delete(carrierCallId))
    }))
)
