import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Searches answer one page, newest first, from an index or a short walk: a parallel plan's workers
 * cost more to start than they save, and on a busy host they wait for CPU. A table setting, so no
 * statement pays a round trip to turn them off.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE contacts SET (parallel_workers = 0)`
  yield* sql`ALTER TABLE activities SET (parallel_workers = 0)`
})
