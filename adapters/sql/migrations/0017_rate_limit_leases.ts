import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Rate-limit buckets are unlogged: a decision is a commit on every request, and a bucket lost in a
 * crash only starts full again, so it need not wait for a WAL flush. `granted` is how many tokens
 * the last decision took (a process may take several at once: adapters/sql/ratelimit.ts).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE rate_limits SET UNLOGGED`
  yield* sql`ALTER TABLE rate_limits ADD COLUMN granted integer NOT NULL DEFAULT 0`
})
