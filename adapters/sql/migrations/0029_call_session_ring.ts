import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An `app` call rings the team (core/calls/sessions.ts): the phones rung, one leg each, and the
 * teammate who took the call.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE call_sessions ADD COLUMN member_uid text, ADD COLUMN ring_legs jsonb`
})
