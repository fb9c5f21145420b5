import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Workspaces, keys, numbers, contacts and the event outbox. Every tenant table leads with
 * `workspace_id` (and tenant primary keys include it), ready to shard by workspace.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`
  yield* sql`CREATE TABLE settings (name text PRIMARY KEY, value text NOT NULL)`
  yield* sql`
    CREATE TABLE workspaces (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      billing jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE api_keys (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id),
      kind text NOT NULL,
      scopes jsonb NOT NULL,
      name text,
      hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`
  yield* sql`
    CREATE TABLE numbers (
      e164 text PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id),
      type text NOT NULL,
      voice_mode text NOT NULL,
      agent_id uuid,
      forward_to text,
      assigned_user_id text,
      status text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX numbers_workspace ON numbers (workspace_id, created_at)`
  yield* sql`
    CREATE TABLE contacts (
      workspace_id uuid NOT NULL,
      id uuid NOT NULL,
      first_name text,
      last_name text,
      company text,
      phones jsonb NOT NULL,
      emails jsonb NOT NULL,
      notes jsonb NOT NULL,
      properties jsonb NOT NULL,
      tags jsonb NOT NULL,
      source text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      search_text text NOT NULL,
      search_digits text NOT NULL,
      PRIMARY KEY (workspace_id, id)
    )`
  // Listing pages newest first by keyset; search narrows with trigram indexes (substring LIKE).
  yield* sql`CREATE INDEX contacts_recent ON contacts (workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX contacts_search_text ON contacts USING gin (search_text gin_trgm_ops)`
  yield* sql`CREATE INDEX contacts_search_digits ON contacts USING gin (search_digits gin_trgm_ops)`
  yield* sql`CREATE INDEX contacts_phones ON contacts USING gin (phones jsonb_path_ops)`
  yield* sql`
    CREATE TABLE outbox_events (
      seq bigserial PRIMARY KEY,
      id uuid NOT NULL UNIQUE,
      workspace_id uuid NOT NULL,
      type text NOT NULL,
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      dispatched_at timestamptz
    )`
  yield* sql`CREATE INDEX outbox_pending ON outbox_events (seq) WHERE dispatched_at IS NULL`
  yield* sql`CREATE INDEX outbox_workspace ON outbox_events (workspace_id, seq)`
})
