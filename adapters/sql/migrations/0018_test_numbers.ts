import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A number added with a test key is not ordered at the carrier: live traffic from it is refused
 * (CONTRACT, "POST /numbers with a test key"). Numbers stored before were bought live or seeded.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE numbers ADD COLUMN ordered boolean NOT NULL DEFAULT true`
})
