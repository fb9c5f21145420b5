import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The mail outbox: every mail the Mailer handled, listed newest first by the admin `mail` route. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE mail_messages (
      workspace_id uuid NOT NULL,
      id uuid NOT NULL,
      "to" text NOT NULL,
      subject text NOT NULL,
      text text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, id)
    )`
  yield* sql`CREATE INDEX mail_messages_recent ON mail_messages (workspace_id, created_at DESC, id DESC)`
})
