import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The workspace ledger: one row per charge, in cents, listed newest first. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE ledger_charges (
      workspace_id uuid NOT NULL,
      id uuid NOT NULL,
      kind text NOT NULL,
      description text NOT NULL,
      amount_cents integer NOT NULL,
      currency text NOT NULL,
      number_e164 text,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, id)
    )`
  yield* sql`CREATE INDEX ledger_charges_recent ON ledger_charges (workspace_id, created_at DESC, id DESC)`
})
