import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Carrier calls in progress (core/calls/sessions.ts), keyed by the carrier's call id; kept after
 * the call is recorded (`activity_id`) so a repeated webhook finds it and records nothing twice.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE call_sessions (
      carrier_call_id text PRIMARY KEY,
      call_control_id text NOT NULL,
      workspace_id uuid NOT NULL REFERENCES workspaces (id),
      number_e164 text NOT NULL,
      participant text NOT NULL,
      caller_name text,
      direction text NOT NULL,
      route jsonb,
      started_at timestamptz NOT NULL,
      answered_at timestamptz,
      answered_by text,
      agent_id uuid,
      job text,
      activity_id uuid,
      reserved_activity_id uuid
    )`
})
