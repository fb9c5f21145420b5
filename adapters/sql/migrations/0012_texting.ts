import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * US texting registration: one registration per workspace (nested parts as jsonb, decoded by its
 * record schema), the workspace audit log, and the workspace clock's offset.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The registry's ids are derived from the jsonb (generated columns), so a row cannot disagree
  // with itself, and they are indexed for the registry's webhooks (`byRegistryId`).
  yield* sql`
    CREATE TABLE texting_registrations (
      workspace_id uuid PRIMARY KEY,
      step text NOT NULL,
      sole_proprietor boolean NOT NULL,
      mock boolean NOT NULL,
      messaging_profile_id text,
      business jsonb NOT NULL,
      campaign_input jsonb NOT NULL,
      brand jsonb NOT NULL,
      campaign jsonb NOT NULL,
      last_resend_at timestamptz,
      filed_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      registry_brand_id text GENERATED ALWAYS AS (brand ->> 'id') STORED,
      registry_campaign_id text GENERATED ALWAYS AS (campaign ->> 'id') STORED
    )`
  yield* sql`CREATE INDEX texting_registrations_awaiting ON texting_registrations (step, updated_at, workspace_id)`
  yield* sql`CREATE INDEX texting_registrations_brand ON texting_registrations (registry_brand_id) WHERE NOT mock`
  yield* sql`CREATE INDEX texting_registrations_campaign ON texting_registrations (registry_campaign_id) WHERE NOT mock`
  yield* sql`
    CREATE TABLE audit_entries (
      workspace_id uuid NOT NULL,
      id uuid NOT NULL,
      actor text NOT NULL,
      action text NOT NULL,
      detail jsonb,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, id)
    )`
  yield* sql`CREATE INDEX audit_entries_recent ON audit_entries (workspace_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE workspace_clocks (
      workspace_id uuid PRIMARY KEY,
      offset_ms bigint NOT NULL
    )`
})
