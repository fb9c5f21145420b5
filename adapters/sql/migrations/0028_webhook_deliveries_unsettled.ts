import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An endpoint's deliveries not yet succeeded, by creation: what recovery (POST /webhooks/{id}/recover)
 * queues again reads only these, however much succeeded history the endpoint has in its window.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX webhook_deliveries_unsettled ON webhook_deliveries (workspace_id, endpoint_id, created_at)
    WHERE status IN ('failed', 'pending')`
})
