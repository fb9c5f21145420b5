/** ApiKeyStore on SQL. A revocation notifies every process listening on the database (keyRevocations.ts). */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { ApiKeyStore } from "../../core/workspaces/store.ts"
import { apiKeys } from "./tables.ts"

/** The channel revocations are announced on, with the key's id as the payload. */
export const KEY_REVOKED_CHANNEL = "switchboard_key_revoked"

export const layer = Layer.effect(
  ApiKeyStore,
  Effect.map(SqlClient.SqlClient, (sql) => {
    const one = Effect.map((rs: ReadonlyArray<unknown>) => Option.fromNullable(rs[0]).pipe(Option.map(apiKeys.decode)))
    return ApiKeyStore.of({
      insert: (k) => Effect.orDie(sql`INSERT INTO api_keys ${sql.insert(apiKeys.row(k))}`),
      findByHash: (hash) => Effect.orDie(sql`SELECT * FROM api_keys WHERE hash = ${hash}`).pipe(one),
      // Revoking twice keeps the first time. The notice goes out when the statement commits, in the same round trip.
      revoke: (id, at) =>
        Effect.orDie(
          sql`WITH revoked AS (UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${at}::timestamptz) WHERE id = ${id} RETURNING *)
          SELECT revoked.* FROM revoked, pg_notify(${KEY_REVOKED_CHANNEL}, revoked.id::text)`
        ).pipe(one),
      get: (id) => Effect.orDie(sql`SELECT * FROM api_keys WHERE id = ${id}`).pipe(one),
      list: (workspaceId) =>
        Effect.orDie(sql`SELECT * FROM api_keys WHERE workspace_id = ${workspaceId} ORDER BY created_at, id`).pipe(
          Effect.map((rs) => rs.map(apiKeys.decode))
        )
    })
  })
)
