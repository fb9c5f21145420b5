/**
 * Pacer on SQL: one upsert books the workspace's next free time under its row's lock, so every
 * process shares one pace (`texting_pace`, unlogged: a pace lost in a crash only starts afresh).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { Pacer, spacingMs } from "../../core/pacing/pacer.ts"

export const layer = Layer.effect(
  Pacer,
  Effect.map(SqlClient.SqlClient, (sql) =>
    Pacer.of({
      // The same booking as core/pacing/pacer.ts `book`: start at the next free time or now, at most the horizon ahead.
      reserve: (workspaceId, segments, perMinute, now, horizonMs) => {
        const cost = spacingMs(segments, perMinute)
        return Effect.orDie(
          sql<{ start_ms: string | number | bigint }>`INSERT INTO texting_pace AS p (workspace_id, next_at_ms)
            VALUES (${workspaceId}, ${now + cost})
            ON CONFLICT (workspace_id) DO UPDATE SET next_at_ms = GREATEST(p.next_at_ms, ${now}) + ${cost}
              WHERE p.next_at_ms <= ${now + horizonMs}
            RETURNING next_at_ms - ${cost} AS start_ms`
        ).pipe(Effect.map((rs) => Option.map(Option.fromNullable(rs[0]), (r) => Number(r.start_ms))))
      }
    }))
)
