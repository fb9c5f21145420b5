import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Every secret a rotation replaced keeps signing for 24 h, not only the last one: the single
 * `previous_secret` slot becomes a jsonb list of `{secret, expiresAt}`, newest first. A process
 * still running the old code would write the dropped columns, so stop old processes before this runs.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_endpoints ADD COLUMN previous_secrets jsonb NOT NULL DEFAULT '[]'::jsonb`
  yield* sql`
    UPDATE webhook_endpoints
    SET previous_secrets = jsonb_build_array(jsonb_build_object(
      'secret', previous_secret,
      'expiresAt', to_char(previous_secret_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
    WHERE previous_secret IS NOT NULL AND previous_secret_expires_at IS NOT NULL`
  yield* sql`ALTER TABLE webhook_endpoints DROP COLUMN previous_secret, DROP COLUMN previous_secret_expires_at`
})
