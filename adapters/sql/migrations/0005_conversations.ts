import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Inboxes per number, threads and activities. Message search is full text over bodies and
 * transcripts (`simple` configuration: no stemming, so it matches words and prefixes exactly as the
 * memory store does); threads page by (last_activity_at, id).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE numbers ADD COLUMN inbox_id uuid`
  yield* sql`UPDATE numbers SET inbox_id = gen_random_uuid() WHERE inbox_id IS NULL`
  yield* sql`ALTER TABLE numbers ALTER COLUMN inbox_id SET NOT NULL`
  yield* sql`
    CREATE TABLE threads (
      workspace_id uuid NOT NULL,
      id uuid NOT NULL,
      inbox_id uuid NOT NULL,
      number_e164 text NOT NULL,
      participant text NOT NULL,
      contact_id uuid,
      status text NOT NULL,
      assignee_uid text,
      last_activity_at timestamptz NOT NULL,
      preview text,
      unread int NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, id),
      UNIQUE (workspace_id, number_e164, participant)
    )`
  yield* sql`CREATE INDEX threads_recent ON threads (workspace_id, last_activity_at DESC, id DESC)`
  yield* sql`CREATE INDEX threads_status_recent ON threads (workspace_id, status, last_activity_at DESC, id DESC)`
  yield* sql`CREATE INDEX threads_contact ON threads (workspace_id, contact_id)`
  yield* sql`
    CREATE TABLE activities (
      workspace_id uuid NOT NULL,
      id uuid NOT NULL,
      conversation_id uuid NOT NULL,
      type text NOT NULL,
      direction text,
      author_uid text,
      body text,
      media jsonb NOT NULL,
      delivery_status text,
      carrier_message_id text,
      call jsonb,
      ai_tags jsonb NOT NULL,
      call_transcript jsonb,
      created_at timestamptz NOT NULL,
      search tsvector NOT NULL,
      PRIMARY KEY (workspace_id, id)
    )`
  yield* sql`CREATE INDEX activities_thread ON activities (workspace_id, conversation_id, created_at, id)`
  yield* sql`CREATE UNIQUE INDEX activities_carrier ON activities (carrier_message_id) WHERE carrier_message_id IS NOT NULL`
  yield* sql`CREATE INDEX activities_search ON activities USING gin (search)`
  yield* sql`CREATE INDEX activities_recent ON activities (workspace_id, created_at DESC, id DESC)`
})
