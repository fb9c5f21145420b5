import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Message search relies on the planner keeping the GIN index for rare words. With the default
 * statistics, a word it has no entry for is guessed at ~1,000 matches; add the pending-list backlog
 * that recent inserts leave on the index, and it walks every message newest-first instead, a cost
 * that grows with the workspace's messages. A larger sample keeps the guess small and the index
 * plan.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE activities ALTER COLUMN search SET STATISTICS 1000`
})
