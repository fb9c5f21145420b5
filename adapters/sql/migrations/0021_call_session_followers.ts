import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An agent call's transcript and summary signals (core/calls/sessions.ts), kept when they arrive
 * before the steps SPEC orders first, instead of failing the webhook so the carrier sends it again.
 * Until now only the conversation's end named a session's conversation, so those sessions have it.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE call_sessions ADD COLUMN conversation_ended boolean NOT NULL DEFAULT false, ADD COLUMN insights_generated boolean NOT NULL DEFAULT false`
  yield* sql`UPDATE call_sessions SET conversation_ended = true WHERE conversation_id IS NOT NULL`
})
