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
      put: (session) => Effect.sync(() => void db.state.callSessions.set(session.carrierCallId, session))
    }))
)
