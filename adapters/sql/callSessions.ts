/** CallSessionStore on SQL: one row of `call_sessions` per carrier call, the route as jsonb. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { CallSessionStore } from "../../core/calls/sessions.ts"
import { callSessions } from "./tables.ts"

const columns = callSessions.columns()

export const layer = Layer.effect(
  CallSessionStore,
  Effect.map(SqlClient.SqlClient, (sql) =>
    CallSessionStore.of({
      insert: (session) =>
        Effect.orDie(
          sql`INSERT INTO call_sessions ${
            sql.insert(callSessions.row(session))
          } ON CONFLICT (carrier_call_id) DO NOTHING RETURNING carrier_call_id`
        ).pipe(
          Effect.map((rs) => rs.length === 1)
        ),
      get: (carrierCallId) =>
        Effect.orDie(sql`SELECT ${sql.literal(columns)} FROM call_sessions WHERE carrier_call_id = ${carrierCallId}`)
          .pipe(
            Effect.map((rs) => Option.map(Option.fromNullable(rs[0]), callSessions.decode))
          ),
      findByConversation: (conversationId) =>
        Effect.orDie(sql`SELECT ${sql.literal(columns)} FROM call_sessions WHERE conversation_id = ${conversationId}`)
          .pipe(
            Effect.map((rs) => Option.map(Option.fromNullable(rs[0]), callSessions.decode))
          ),
      findByCallId: (callId) =>
        Effect.orDie(sql`SELECT ${sql.literal(columns)} FROM call_sessions WHERE reserved_activity_id = ${callId}`)
          .pipe(
            Effect.map((rs) => Option.map(Option.fromNullable(rs[0]), callSessions.decode))
          ),
      rename: (from, carrierCallId, callControlId) =>
        Effect.orDie(
          sql`UPDATE call_sessions SET carrier_call_id = ${carrierCallId}, call_control_id = COALESCE(${callControlId}, call_control_id) WHERE carrier_call_id = ${from} RETURNING ${
            sql.literal(columns)
          }`
        ).pipe(
          Effect.map((rs) => Option.map(Option.fromNullable(rs[0]), callSessions.decode))
        ),
      remove: (carrierCallId) => Effect.orDie(sql`DELETE FROM call_sessions WHERE carrier_call_id = ${carrierCallId}`),
      put: (session) => {
        const row = callSessions.row(session)
        return Effect.orDie(
          sql`UPDATE call_sessions SET ${
            sql.update(row, ["carrier_call_id"])
          } WHERE carrier_call_id = ${session.carrierCallId}`
        )
      }
    }))
)
