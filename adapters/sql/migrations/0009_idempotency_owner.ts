import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The request holding a reservation (a token it makes up), so that after a takeover the previous
 * holder's late complete or release cannot touch the new holder's row. Rows reserved before this
 * migration have no owner; they are done, or stale within a minute and taken over.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE idempotency_keys ADD COLUMN owner text`
})
