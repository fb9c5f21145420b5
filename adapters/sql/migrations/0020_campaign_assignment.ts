import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Where each local number's assignment to its workspace's live 10DLC campaign stands
 * (core/registration/assignment.ts): null until asked for, then `pending`, `assigned` or `failed`.
 * Numbers stored before were never assigned: the registration poller asks for them.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE numbers ADD COLUMN campaign_assignment text`
})
