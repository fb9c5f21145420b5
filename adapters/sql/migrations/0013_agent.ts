import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The AI call agent: one per workspace, its draft and its published snapshot as jsonb (decoded by
 * the record's schema). Its id is unique too: numbers routed to the agent name it.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agents (
      workspace_id uuid PRIMARY KEY,
      id uuid NOT NULL UNIQUE,
      draft jsonb NOT NULL,
      published jsonb,
      carrier_assistant_id text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      published_at timestamptz
    )`
})
