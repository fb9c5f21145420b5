/** WorkspaceStore on SQL. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { workspaces } from "./tables.ts"

export const layer = Layer.effect(
  WorkspaceStore,
  Effect.map(SqlClient.SqlClient, (sql) =>
    WorkspaceStore.of({
      insert: (w) => Effect.orDie(sql`INSERT INTO workspaces ${sql.insert(workspaces.row(w))}`),
      get: (id) =>
        Effect.orDie(sql`SELECT * FROM workspaces WHERE id = ${id}`).pipe(
          Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map(workspaces.decode)))
        ),
      update: (w) =>
        Effect.orDie(
          sql`UPDATE workspaces SET ${sql.update(workspaces.row(w), ["id", "created_at"])} WHERE id = ${w.id}`
        ),
      count: Effect.orDie(sql<{ n: number }>`SELECT count(*)::int AS n FROM workspaces`).pipe(
        Effect.map((rs) => Number(rs[0]?.n ?? 0))
      ),
      list: Effect.orDie(sql`SELECT * FROM workspaces ORDER BY created_at, id`).pipe(
        Effect.map((rs) => rs.map(workspaces.decode))
      )
    }))
)
