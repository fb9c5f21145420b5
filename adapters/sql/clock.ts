/**
 * WorkspaceClock on SQL: a row of `workspace_clocks` per workspace that moved its clock. `advance`
 * is one upsert adding to the stored offset, so concurrent advances all count.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { WorkspaceClock } from "../../core/workspaces/clock.ts"
import { PREPARED } from "./prepared.ts"

/** bigint arrives as text (pg) or a bigint (PGlite). */
type OffsetRow = { readonly offset_ms: string | bigint | number }

export const layer = Layer.effect(
  WorkspaceClock,
  Effect.map(SqlClient.SqlClient, (sql) =>
    WorkspaceClock.of({
      offset: (workspaceId) =>
        Effect.orDie(
          sql<OffsetRow>`${
            sql.literal(PREPARED)
          } SELECT offset_ms FROM workspace_clocks WHERE workspace_id = ${workspaceId}`
        ).pipe(
          Effect.map((rs) => (rs[0] === undefined ? 0 : Number(rs[0].offset_ms)))
        ),
      advance: (workspaceId, millis) =>
        Effect.orDie(
          sql<OffsetRow>`INSERT INTO workspace_clocks (workspace_id, offset_ms) VALUES (${workspaceId}, ${millis})
            ON CONFLICT (workspace_id) DO UPDATE SET offset_ms = workspace_clocks.offset_ms + EXCLUDED.offset_ms
            RETURNING offset_ms`
        ).pipe(Effect.map((rs) => Number(rs[0]!.offset_ms)))
    }))
)
