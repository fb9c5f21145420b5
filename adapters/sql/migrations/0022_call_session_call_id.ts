import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A dialed call's session found by our call id (core/calls/sessions.ts `findByCallId`): a webhook
 * that beats the dial's answer names the call only by the id in its `client_state`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE UNIQUE INDEX call_sessions_reserved_activity ON call_sessions (reserved_activity_id) WHERE reserved_activity_id IS NOT NULL`
})
