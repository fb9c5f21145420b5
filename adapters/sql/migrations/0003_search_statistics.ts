import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `LIKE '%term%'` selectivity is estimated from the column's sample; with the default 100 entries a
 * term is guessed at ~100 or ~10,000 rows whatever its real frequency, so Postgres picks the wrong
 * plan. A larger sample makes the estimates track the term's real frequency.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE contacts ALTER COLUMN search_text SET STATISTICS 1000, ALTER COLUMN search_digits SET STATISTICS 1000`
})
