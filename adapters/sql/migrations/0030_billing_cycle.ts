import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The billing cycle (core/billing/cycle.ts): one invoice per workspace and month, charged in
 * attempts; and the pending charges of purchases charged outside their lock (core/billing/pending.ts).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE invoices (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id),
    period_start timestamptz NOT NULL,
    period_end timestamptz NOT NULL,
    status text NOT NULL,
    amount_cents integer NOT NULL,
    currency text NOT NULL,
    lines jsonb NOT NULL,
    attempts integer NOT NULL,
    charging boolean NOT NULL,
    lease_until timestamptz,
    next_attempt_at timestamptz,
    payment_id text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (workspace_id, period_start)
  )`
  // What the cycle claims: attempts due, and claims whose lease ran out.
  yield* sql`CREATE INDEX invoices_due ON invoices (next_attempt_at) WHERE NOT charging AND status IN ('open', 'failed')`
  yield* sql`CREATE INDEX invoices_charging ON invoices (lease_until) WHERE charging`
  yield* sql`CREATE TABLE pending_charges (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id),
    purpose text NOT NULL,
    kind text NOT NULL,
    charges jsonb NOT NULL,
    amount_cents integer NOT NULL,
    state text NOT NULL,
    lease_until timestamptz NOT NULL,
    payment_id text,
    at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  // One purchase in flight per purpose (a number, the filing).
  yield* sql`CREATE UNIQUE INDEX pending_charges_in_flight ON pending_charges (workspace_id, purpose)
    WHERE state IN ('pending', 'refunding')`
  yield* sql`CREATE INDEX pending_charges_lease ON pending_charges (lease_until) WHERE state IN ('pending', 'refunding')`
})
