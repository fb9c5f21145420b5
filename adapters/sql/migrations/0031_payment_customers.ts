import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The payment provider's customer of each workspace (core/billing/customers.ts). */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE payment_customers (
      workspace_id uuid PRIMARY KEY REFERENCES workspaces (id),
      customer_id text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL
    )`
})
