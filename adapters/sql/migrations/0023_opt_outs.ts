import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The opt-out list (core/optouts): one row per workspace and phone, listed newest first. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE opt_outs (
      workspace_id uuid NOT NULL REFERENCES workspaces (id),
      phone text NOT NULL,
      source text NOT NULL,
      keyword text,
      note text,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, phone)
    )`
  yield* sql`CREATE INDEX opt_outs_newest ON opt_outs (workspace_id, created_at DESC, phone DESC)`
})
