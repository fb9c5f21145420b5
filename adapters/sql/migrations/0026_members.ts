import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The workspace's members (core/members): one row per person and workspace, an email at most once per workspace. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE members (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id),
      email text NOT NULL,
      name text NOT NULL,
      role text NOT NULL,
      phone text,
      created_at timestamptz NOT NULL,
      UNIQUE (workspace_id, email)
    )`
  yield* sql`CREATE INDEX members_email ON members (email)`
})
