import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Scheduled messages, broadcasts and their send queue (core/scheduling), the workspace's texting
 * pace and quiet hours, and the pace's shared clock (core/pacing/pacer.ts).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE workspaces ADD COLUMN texting_segments_per_minute int NOT NULL DEFAULT 75`
  yield* sql`ALTER TABLE workspaces ADD COLUMN quiet_hours jsonb DEFAULT '{"start":"21:00","end":"08:00"}'::jsonb`
  yield* sql`
    CREATE TABLE scheduled_messages (
      workspace_id uuid NOT NULL REFERENCES workspaces (id),
      id uuid NOT NULL,
      key_id uuid NOT NULL,
      live boolean NOT NULL,
      "to" text NOT NULL,
      "from" text,
      conversation_id uuid,
      body text NOT NULL,
      media_urls jsonb NOT NULL,
      send_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, id)
    )`
  yield* sql`CREATE INDEX scheduled_messages_soonest ON scheduled_messages (workspace_id, send_at, id)`
  yield* sql`
    CREATE TABLE broadcasts (
      workspace_id uuid NOT NULL REFERENCES workspaces (id),
      id uuid NOT NULL,
      key_id uuid NOT NULL,
      live boolean NOT NULL,
      "from" text,
      body text NOT NULL,
      media_urls jsonb NOT NULL,
      send_at timestamptz NOT NULL,
      state text NOT NULL,
      total int NOT NULL,
      sent int NOT NULL,
      failed int NOT NULL,
      skipped_opted_out int NOT NULL,
      skipped_canceled int NOT NULL,
      pending int NOT NULL,
      created_at timestamptz NOT NULL,
      completed_at timestamptz,
      PRIMARY KEY (workspace_id, id)
    )`
  yield* sql`CREATE INDEX broadcasts_newest ON broadcasts (workspace_id, created_at DESC, id DESC)`
  // The queue: one row per text to one recipient. claim_id and locked_until are the worker's lease.
  yield* sql`
    CREATE TABLE text_sends (
      workspace_id uuid NOT NULL REFERENCES workspaces (id),
      id uuid NOT NULL,
      source text NOT NULL,
      source_id uuid NOT NULL,
      seq int NOT NULL,
      "to" text NOT NULL,
      contact_id uuid,
      segments int NOT NULL,
      due_at timestamptz NOT NULL,
      state text NOT NULL,
      message_id uuid,
      failure jsonb,
      updated_at timestamptz NOT NULL,
      claim_id uuid,
      locked_until timestamptz,
      PRIMARY KEY (workspace_id, id),
      UNIQUE (workspace_id, source_id, seq)
    )`
  yield* sql`CREATE INDEX text_sends_due ON text_sends (due_at) WHERE state = 'pending'`
  yield* sql`CREATE INDEX text_sends_in_flight ON text_sends (locked_until) WHERE state = 'sending'`
  yield* sql`CREATE INDEX text_sends_by_state ON text_sends (workspace_id, source_id, state, seq)`
  // Where each workspace's pace stands: rebuilt from nothing if lost, so not worth a WAL write per send.
  yield* sql`CREATE UNLOGGED TABLE texting_pace (workspace_id uuid PRIMARY KEY, next_at_ms bigint NOT NULL)`
})
