import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The queue in the order a claim takes it (due time, then a broadcast's recipient order), so a claim reads no more than it takes. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX text_sends_due`
  yield* sql`CREATE INDEX text_sends_due ON text_sends (due_at, seq) WHERE state = 'pending'`
})
