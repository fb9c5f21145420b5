import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A carrier voicemail's steps (core/calls/sessions.ts): how far its greeting and recording got, and
 * what arrived before it could be shown (a recording before the hangup, a transcription before the
 * recording), kept until its turn in SPEC's event order.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE call_sessions ADD COLUMN voicemail_step text, ADD COLUMN pending_recording jsonb, ADD COLUMN voicemail_transcript text`
})
