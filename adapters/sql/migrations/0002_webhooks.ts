import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Webhook endpoints, their deliveries (one per endpoint and event) and the attempt history. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_endpoints (
      workspace_id uuid NOT NULL,
      id uuid NOT NULL,
      url text NOT NULL,
      events jsonb NOT NULL,
      label text,
      status text NOT NULL,
      api_version text,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      failing_since timestamptz,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, id)
    )`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      workspace_id uuid NOT NULL,
      id uuid NOT NULL,
      endpoint_id uuid NOT NULL,
      event_id text NOT NULL,
      event_type text NOT NULL,
      payload text NOT NULL,
      status text NOT NULL,
      attempts int NOT NULL,
      response_status int,
      error text,
      created_at timestamptz NOT NULL,
      last_attempt_at timestamptz,
      next_attempt_at timestamptz,
      locked_until timestamptz,
      PRIMARY KEY (workspace_id, id),
      UNIQUE (workspace_id, endpoint_id, event_id),
      FOREIGN KEY (workspace_id, endpoint_id) REFERENCES webhook_endpoints (workspace_id, id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_recent ON webhook_deliveries (workspace_id, endpoint_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE webhook_attempts (
      workspace_id uuid NOT NULL,
      delivery_id uuid NOT NULL,
      attempted_at timestamptz NOT NULL,
      response_status int,
      error text
    )`
  yield* sql`CREATE INDEX webhook_attempts_delivery ON webhook_attempts (workspace_id, delivery_id, attempted_at)`
})
