import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A carrier call's assistant conversation (its insights webhook names only the conversation), and
 * whether its recording was refused as too large (the transcript then does not wait for it).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE call_sessions ADD COLUMN conversation_id text, ADD COLUMN recording_refused boolean NOT NULL DEFAULT false`
  yield* sql`CREATE INDEX call_sessions_conversation ON call_sessions (conversation_id) WHERE conversation_id IS NOT NULL`
})
