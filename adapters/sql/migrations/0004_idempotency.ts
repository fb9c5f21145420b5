import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Idempotency keys (CONTRACT "Idempotency"): one row per (workspace, key kind, key). The primary key
 * is the reservation: `INSERT ... ON CONFLICT DO NOTHING` claims a key across processes. A `running`
 * row holds `locked_until` (a dead process's reservation can be taken over after it); a `done` row
 * holds the answer that replays until `created_at` is older than the window. No reaper: expired rows
 * are taken over in place when their key comes back.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE idempotency_keys (
      workspace_id uuid NOT NULL,
      key_kind text NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      state text NOT NULL CHECK (state IN ('running', 'done')),
      response_status int,
      response_body text,
      created_at timestamptz NOT NULL,
      locked_until timestamptz,
      PRIMARY KEY (workspace_id, key_kind, key)
    )`
})
