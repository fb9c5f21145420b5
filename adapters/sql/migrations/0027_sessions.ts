import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Sign-in links and console sessions (core/members/sessions.ts), by the SHA-256 digest of their
 * secret. A removed member's sessions go with it.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE sign_in_links (
      hash text PRIMARY KEY,
      email text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`
  yield* sql`CREATE INDEX sign_in_links_email ON sign_in_links (email, created_at)`
  yield* sql`
    CREATE TABLE member_sessions (
      hash text PRIMARY KEY,
      email text NOT NULL,
      member_id uuid NOT NULL REFERENCES members (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL,
      last_used_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX member_sessions_member ON member_sessions (member_id)`
})
